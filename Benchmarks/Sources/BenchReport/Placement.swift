import CDBusBench
#if canImport(Glibc)
import Glibc
#endif

/// Where a benchmark's processes run. A call and its answer between two processes take their
/// time by where the two are: on one CPU the answer is a switch from one to the other, on two
/// each message wakes the other CPU (on a virtual machine, an exit to the host). The scheduler
/// picks anew for each pair, so a measured pair and its anchor, placed by it, may sit
/// differently; placed here, both sit alike.
public enum Placement {
    /// The CPUs this process may run on, as first asked, in order.
    public static let available: [Int] = {
        var cpus = [Int32](repeating: 0, count: 1024)
        let count = cdb_available_cpus(&cpus, Int32(cpus.count))
        return cpus.prefix(max(0, Int(count))).map(Int.init)
    }()

    /// Puts every thread of process `pid` on `cpus`; nil puts them back on every available CPU.
    /// Threads it starts later run where the thread that starts them does.
    /// - Throws: `Spawn.Failure` when a thread cannot be moved.
    public static func pin(_ pid: pid_t, to cpus: [Int]?) throws {
        let list = (cpus ?? available).map(Int32.init)
        var failure: String?
        ProcessThreads.forEach(of: pid) { name in
            guard let tid = Int32(name), cdb_place_thread(tid, list, Int32(list.count)) != 0,
                  errno != ESRCH else { return }  // a thread that has ended needs no place
            failure = "cannot place thread \(tid) of \(pid): \(String(cString: strerror(errno)))"
        }
        if let failure { throw Spawn.Failure(description: failure) }
    }

    /// Runs `body` with `clients` on the first available CPU and `servers` on the second (on the
    /// first too when `together`), then puts them all back on every CPU.
    /// - Throws: `Spawn.Failure` when there are fewer than two CPUs to place them apart, or
    ///   what `body` throws.
    public static func placed<T>(clients: [pid_t], servers: [pid_t], together: Bool,
                                 _ body: () async throws -> T) async throws -> T {
        guard let first = available.first, together || available.count > 1 else {
            throw Spawn.Failure(description: "one CPU only: nothing to place apart")
        }
        let serverCPU = together ? first : available[1]
        defer { for pid in clients + servers { try? pin(pid, to: nil) } }
        for pid in clients { try pin(pid, to: [first]) }
        for pid in servers { try pin(pid, to: [serverCPU]) }
        return try await body()
    }
}
