import Foundation
import Synchronization

/// A private `dbus-daemon` for tests, listening in its own temporary folder.
///
/// It never touches the user's session bus: the address it exposes is the only one tests use.
/// The daemon stops, and its folder is removed, on `stop()`, when the object is released, or when
/// the test process exits.
public final class PrivateBus: Sendable {
    /// The bus address (`unix:path=…,guid=…`) to connect to.
    public let address: String
    /// The temporary folder holding the socket and the daemon's log.
    public let directory: URL
    /// The leash shell and the write end of its standard input, until `stop()`.
    private let leash: Mutex<(shell: RunningProcess, writeEnd: Int32)?>

    /// Starts a daemon with `config` (default `Fixtures/dbus/session.conf`).
    ///
    /// - Throws: `ChildProcessError` when `dbus-daemon` is missing or prints no address in 10 s.
    public init(config: URL = TestPaths.fixtures.appendingPathComponent("dbus/session.conf")) throws {
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("ferry-bus-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let daemon = try ChildProcess.resolve("dbus-daemon")
        // A small shell keeps the daemon on a leash: it waits for our end of its stdin pipe to
        // close (stop(), or this process dying in any way), then SIGKILLs the daemon and removes
        // its folder (a bus never stopped, like the shared one, leaves nothing behind).
        // Spawned with `RunningProcess`, never Foundation's `Process`: its `waitUntilExit` waits on
        // the run loop of the thread that launched it, which on the cooperative pool can be the
        // other thread waiting the same way — two tests stopping buses at once hung forever.
        let script = """
            "$0" "$@" </dev/null 2>"$FERRY_BUS_DIR/daemon.log" & daemon=$!
            echo "$daemon" > "$FERRY_BUS_DIR/daemon.pid"
            read -r _
            kill -KILL "$daemon" 2>/dev/null
            wait "$daemon" 2>/dev/null
            rm -rf "$FERRY_BUS_DIR"
            """
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SESSION_BUS_ADDRESS"] = nil
        env["FERRY_BUS_DIR"] = dir.path
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw ChildProcessError(description: "pipe failed: errno \(errno)") }
        // Children other tests spawn meanwhile must not inherit these ends: a copy of the
        // leash's write end would keep the shell (and the daemon) alive forever.
        ends.forEach(setCloseOnExec)
        let shell: RunningProcess
        do {
            defer { Foundation.close(ends[0]) }
            shell = try RunningProcess("/bin/sh", [
                "-c", script, daemon, "--config-file=\(config.path)", "--nofork", "--print-address=1",
                "--address=unix:dir=\(dir.path)",
            ], environment: env, standardInput: ends[0])
        } catch {
            Foundation.close(ends[1])
            throw error
        }
        let line = Self.readLine(shell.standardOutput, timeoutMs: 10_000)
        guard let line, line.hasPrefix("unix:") else {
            Foundation.close(ends[1])
            Self.reap(shell)
            let logText = (try? String(contentsOf: dir.appendingPathComponent("daemon.log"), encoding: .utf8)) ?? ""
            throw ChildProcessError(description: "dbus-daemon printed no address: \(logText)")
        }
        self.address = line
        self.directory = dir
        self.leash = Mutex((shell, ends[1]))
    }

    /// One bus shared by every test in this process that asks for it (saves start-up time).
    ///
    /// Tests sharing it must not depend on one another: use your own connections and names.
    public static func shared() throws -> PrivateBus {
        try sharedBus.withLock { bus in
            if let bus { return bus }
            let started = try PrivateBus()
            bus = started
            return started
        }
    }

    /// A bus that admits connections of every uid (the usual config plus `<allow user="*"/>`),
    /// its folder open to them: for tests that call ferryd as another user (`setpriv`).
    public static func admittingEveryUser() throws -> PrivateBus {
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-anyuser-\(UUID().uuidString).conf")
        let usual = try String(contentsOf: TestPaths.fixtures.appendingPathComponent("dbus/session.conf"), encoding: .utf8)
        let open = usual.replacingOccurrences(of: "<policy context=\"default\">",
                                              with: "<policy context=\"default\">\n    <allow user=\"*\"/>")
        guard open != usual else { throw ChildProcessError(description: "session.conf has no default policy to widen") }
        try open.write(to: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: config) }
        let bus = try PrivateBus(config: config)
        chmod(bus.directory.path, 0o755)
        return bus
    }

    /// An environment for a child process that should use this bus as its session bus.
    public func environment(adding extra: [String: String] = [:]) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SESSION_BUS_ADDRESS"] = address
        env.merge(extra) { _, new in new }
        return env
    }

    /// Stops the daemon (SIGKILL, then waits) and removes its folder. Safe to call twice.
    public func stop() {
        guard let (shell, writeEnd) = leash.withLock({ l -> (RunningProcess, Int32)? in
            defer { l = nil }
            return l
        }) else { return }
        Foundation.close(writeEnd)
        // Kill the daemon directly too, in case another child inherited the leash.
        let pidFile = directory.appendingPathComponent("daemon.pid")
        if let text = try? String(contentsOf: pidFile, encoding: .utf8),
           let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
            kill(pid, SIGKILL)
        }
        Self.reap(shell)
        try? FileManager.default.removeItem(at: directory)
    }

    /// Waits for the leash shell, which exits once the daemon is gone; if it lingers, kills it
    /// rather than hang.
    private static func reap(_ shell: RunningProcess) {
        let deadline = ContinuousClock.now + .seconds(2)
        while shell.isRunning && ContinuousClock.now < deadline { usleep(2_000) }
        shell.kill()
    }

    deinit { stop() }

    private static let sharedBus = Mutex<PrivateBus?>(nil)
    /// Reads one line from `fd`, waiting at most `timeoutMs`.
    private static func readLine(_ fd: Int32, timeoutMs: Int) -> String? {
        var bytes: [UInt8] = []
        let deadline = ContinuousClock.now + .milliseconds(timeoutMs)
        while ContinuousClock.now < deadline {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let n = poll(&pfd, 1, 100)
            if n <= 0 { continue }
            var byte: UInt8 = 0
            let r = read(fd, &byte, 1)
            if r <= 0 { return nil }
            if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
        return nil
    }
}
