#if canImport(Glibc)
import Glibc
#endif

/// CPU time (user + system) of a process, in ms.
public enum CPUTime {
    /// Another process's, from /proc/<pid>/stat (clock-tick resolution).
    public static func of(_ pid: pid_t) throws -> Double {
        guard let stat = Spawn.readFile("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else {
            throw Spawn.Failure(description: "cannot read /proc/\(pid)/stat (did it exit?)")
        }
        // After "(comm)": state is field 3; utime and stime are fields 14 and 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else {
            throw Spawn.Failure(description: "cannot parse /proc/\(pid)/stat")
        }
        return (user + system) * 1000 / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Another process's, summed over its threads from /proc/<pid>/task/*/schedstat
    /// (nanosecond resolution; threads that already exited are not counted).
    public static func precise(of pid: pid_t) -> Double {
        var total = 0.0
        ProcessThreads.forEach(of: pid) { tid in
            if let stat = Spawn.readFile("/proc/\(pid)/task/\(tid)/schedstat"),
               let first = stat.split(separator: " ").first, let ns = Double(first) {
                total += ns / 1_000_000
            }
        }
        return total
    }

    /// This process's, from getrusage.
    public static func ofSelf() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func ms(_ t: timeval) -> Double { Double(t.tv_sec) * 1000 + Double(t.tv_usec) / 1000 }
        return ms(usage.ru_utime) + ms(usage.ru_stime)
    }
}

/// Context switches of a process: the sum over its threads (/proc/<pid>/task/*/status), each
/// switch a thread going to sleep (voluntary) or being preempted (involuntary).
public enum ContextSwitches {
    /// The sums over the process's threads (zero when it is gone).
    public static func of(_ pid: pid_t) -> (voluntary: Int, involuntary: Int) {
        var voluntary = 0, involuntary = 0
        ProcessThreads.forEach(of: pid) { name in
            guard let status = Spawn.readFile("/proc/\(pid)/task/\(name)/status") else { return }
            for line in status.split(separator: "\n") {
                if line.hasPrefix("voluntary_ctxt_switches:") {
                    voluntary += Int(line.split(separator: "\t").last.map(String.init) ?? "") ?? 0
                } else if line.hasPrefix("nonvoluntary_ctxt_switches:") {
                    involuntary += Int(line.split(separator: "\t").last.map(String.init) ?? "") ?? 0
                }
            }
        }
        return (voluntary, involuntary)
    }
}

/// The threads of a process, by /proc/<pid>/task.
enum ProcessThreads {
    /// Calls `body` with each thread id of `pid` (none when it is gone).
    static func forEach(of pid: pid_t, _ body: (String) -> Void) {
        guard let folder = opendir("/proc/\(pid)/task") else { return }
        defer { closedir(folder) }
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name.first?.isNumber == true { body(name) }
        }
    }
}
