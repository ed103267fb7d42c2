#if canImport(Glibc)
import Glibc
#endif

/// A private `dbus-daemon` and the release `ferryd` on it (a fresh `--state-dir`), in a scratch
/// folder of their own.
///
/// Both children are on a leash: a small shell holding the read end of a pipe whose write end
/// only this process has. However this process ends (normally, by an error, a crash, SIGKILL),
/// the pipe closes and the shell stops every child it was told about and removes the scratch
/// folder. `stop()` does the same in order and tells the shell it has nothing left to do.
public final class BrokerStage {
    /// The scratch folder: the bus socket, the bus config, ferryd's state and logs.
    public let scratch: String
    /// The private bus's address.
    public private(set) var address = ""
    /// ferryd's pid, once started.
    public private(set) var ferrydPID: pid_t = 0
    /// The bus daemon's pid, once started.
    public private(set) var busPID: pid_t = 0
    private var leashPID: pid_t = 0
    private var leashFD: Int32 = -1

    /// Starts the bus and ferryd (with `arguments` after its bus and state directory); on
    /// failure stops whatever had started and throws.
    public static func start(ferryd: String, arguments: [String] = []) throws -> BrokerStage {
        let stage = try BrokerStage()
        do {
            try stage.startBus()
            try stage.startFerryd(ferryd, arguments: arguments)
        } catch {
            stage.stop()
            throw error
        }
        return stage
    }

    private init() throws {
        let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array("\(base)/\(benchProgram).XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw Spawn.Failure(description: "mkdtemp in \(base) failed: errno \(errno)")
        }
        scratch = String(cString: made)
        try startLeash()
    }

    private func startLeash() throws {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw Spawn.Failure(description: "pipe: errno \(errno)") }
        // Neither end may leak into other children: a copy of the write end would keep the
        // leash from ever seeing end of file.
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        let script = """
            trap '' INT HUP
            pids=
            while read -r line; do
              case "$line" in clear) pids= ;; *) pids="$pids $line" ;; esac
            done
            if [ -n "$pids" ]; then
              kill -TERM $pids 2>/dev/null
              i=0
              while [ $i -lt 50 ]; do
                alive=
                for p in $pids; do kill -0 "$p" 2>/dev/null && alive=1; done
                [ -z "$alive" ] && break
                sleep 0.1; i=$((i + 1))
              done
              kill -KILL $pids 2>/dev/null
            fi
            rm -rf "$1"
            """
        do {
            leashPID = try Spawn.start(["/bin/sh", "-c", script, "\(benchProgram)-leash", scratch],
                                       stdin: .descriptor(fds[0]), stdout: .null, stderr: .null)
        } catch {
            close(fds[0]); close(fds[1])
            _ = try? Spawn.output(["rm", "-rf", scratch])
            throw error
        }
        close(fds[0])
        leashFD = fds[1]
    }

    /// Tells the leash about a child.
    private func leash(_ pid: pid_t) {
        let line = Array("\(pid)\n".utf8)
        _ = line.withUnsafeBytes { write(leashFD, $0.baseAddress, $0.count) }
    }

    private func startBus() throws {
        let config = "\(scratch)/bus.conf", addressFile = "\(scratch)/bus.address"
        try Spawn.writeFile(config, Self.busConfig(listening: scratch))
        busPID = try Spawn.start(["dbus-daemon", "--config-file=\(config)", "--nofork", "--print-address=1"],
                                 stdout: .file(addressFile), stderr: .file("\(scratch)/bus.log"))
        leash(busPID)
        let deadline = now() + 10e6
        while now() < deadline {
            if let text = Spawn.readFile(addressFile), let line = text.split(separator: "\n").first,
               text.contains("\n"), line.hasPrefix("unix:") {
                address = String(line)
                return
            }
            if let status = Spawn.wait(busPID, seconds: 0) {
                busPID = 0
                throw Spawn.Failure(description: "dbus-daemon exited with \(status): \(logTail("bus.log"))")
            }
            usleep(10_000)
        }
        throw Spawn.Failure(description: "dbus-daemon printed no address in 10 s: \(logTail("bus.log"))")
    }

    private func startFerryd(_ ferryd: String, arguments: [String]) throws {
        guard access(ferryd, X_OK) == 0 else {
            throw Spawn.Failure(description: "no ferryd executable at \(ferryd) (swift build -c release)")
        }
        let out = "\(scratch)/ferryd.out"
        ferrydPID = try Spawn.start([ferryd, "--bus", address, "--state-dir", "\(scratch)/state"] + arguments,
                                    stdout: .file(out), stderr: .file("\(scratch)/ferryd.log"))
        leash(ferrydPID)
        let deadline = now() + 30e6
        while now() < deadline {
            if let text = Spawn.readFile(out), text.split(separator: "\n").contains(where: { $0.hasPrefix("READY") }) {
                return
            }
            if let status = Spawn.wait(ferrydPID, seconds: 0) {
                ferrydPID = 0
                throw Spawn.Failure(description: "ferryd exited with \(status): \(logTail("ferryd.log"))")
            }
            usleep(10_000)
        }
        throw Spawn.Failure(description: "ferryd was not READY in 30 s: \(logTail("ferryd.log"))")
    }

    /// The last lines of a log in the scratch folder.
    public func logTail(_ name: String, lines: Int = 20) -> String {
        let all = (Spawn.readFile("\(scratch)/\(name)") ?? "").split(separator: "\n")
        return all.suffix(lines).joined(separator: "\n")
    }

    /// Stops ferryd (SIGTERM, then SIGKILL after 10 s) and the bus, lets the leash go and removes
    /// the scratch folder. Safe to call twice.
    public func stop() {
        if ferrydPID > 0 {
            let status = Spawn.stop(ferrydPID, grace: 10)
            if status != 0 { note("ferryd exited with status \(status); its log ends:\n\(logTail("ferryd.log"))") }
            ferrydPID = 0
        }
        if busPID > 0 {
            Spawn.stop(busPID, grace: 3)
            busPID = 0
        }
        if leashFD >= 0 {
            let clear = Array("clear\n".utf8)
            _ = clear.withUnsafeBytes { write(leashFD, $0.baseAddress, $0.count) }
            close(leashFD)
            leashFD = -1
        }
        if leashPID > 0 {
            if Spawn.wait(leashPID, seconds: 5) == nil { Spawn.stop(leashPID, grace: 1) }
            leashPID = 0
        }
        if access(scratch, F_OK) == 0 { _ = try? Spawn.output(["rm", "-rf", scratch]) }
    }

    /// A session-like bus config listening in `folder`, with limits far above the clients a benchmark makes.
    static func busConfig(listening folder: String) -> String {
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:dir=\(folder)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
          <limit name="max_incoming_bytes">1000000000</limit>
          <limit name="max_outgoing_bytes">1000000000</limit>
          <limit name="max_message_size">1000000000</limit>
          <limit name="max_completed_connections">100000</limit>
          <limit name="max_incomplete_connections">10000</limit>
          <limit name="max_connections_per_user">100000</limit>
          <limit name="max_names_per_connection">50000</limit>
          <limit name="max_match_rules_per_connection">50000</limit>
          <limit name="max_replies_per_connection">50000</limit>
        </busconfig>

        """
    }
}
