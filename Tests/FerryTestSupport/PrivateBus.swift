import Foundation
import Synchronization

/// A private `dbus-daemon` for tests, listening in its own temporary folder.
///
/// It never touches the user's session bus: the address it exposes is the only one tests use.
/// The daemon stops on `stop()`, when the object is released, or when the test process exits.
public final class PrivateBus: Sendable {
    /// The bus address (`unix:path=…,guid=…`) to connect to.
    public let address: String
    /// The temporary folder holding the socket and the daemon's log.
    public let directory: URL
    private let process: Mutex<(Process, FileHandle)?>

    /// Starts a daemon with `config` (default `Fixtures/dbus/session.conf`).
    ///
    /// - Throws: `ChildProcessError` when `dbus-daemon` is missing or prints no address in 10 s.
    public init(config: URL = TestPaths.fixtures.appendingPathComponent("dbus/session.conf")) throws {
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("ferry-bus-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let daemon = try ChildProcess.resolve("dbus-daemon")
        let process = Process()
        // A small shell keeps the daemon on a leash: it waits for our end of its stdin pipe to
        // close (stop(), or this process dying in any way) and then SIGKILLs the daemon.
        // SIGKILL because children spawned from Swift threads inherit a mask blocking SIGTERM.
        let script = """
            "$0" "$@" </dev/null & daemon=$!
            echo "$daemon" > "$FERRY_BUS_DIR/daemon.pid"
            read -r _
            kill -KILL "$daemon" 2>/dev/null
            """
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [
            "-c", script, daemon, "--config-file=\(config.path)", "--nofork", "--print-address=1",
            "--address=unix:dir=\(dir.path)",
        ]
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SESSION_BUS_ADDRESS"] = nil
        env["FERRY_BUS_DIR"] = dir.path
        process.environment = env
        let out = Pipe()
        process.standardOutput = out
        let leash = Pipe()
        process.standardInput = leash
        let log = dir.appendingPathComponent("daemon.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let logHandle = try FileHandle(forWritingTo: log)
        process.standardError = logHandle
        // Children other tests spawn meanwhile must not inherit these ends: a copy of the
        // leash's write end would keep the shell (and the daemon) alive forever.
        for fd in [out.fileHandleForReading.fileDescriptor, out.fileHandleForWriting.fileDescriptor,
                   leash.fileHandleForReading.fileDescriptor, leash.fileHandleForWriting.fileDescriptor,
                   logHandle.fileDescriptor] {
            setCloseOnExec(fd)
        }
        try process.run()
        try? logHandle.close()

        let line = Self.readLine(out.fileHandleForReading.fileDescriptor, timeoutMs: 10_000)
        guard let line, line.hasPrefix("unix:") else {
            try? leash.fileHandleForWriting.close()
            Self.reap(process)
            let logText = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            throw ChildProcessError(description: "dbus-daemon printed no address: \(logText)")
        }
        self.address = line
        self.directory = dir
        self.process = Mutex((process, leash.fileHandleForWriting))
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

    /// An environment for a child process that should use this bus as its session bus.
    public func environment(adding extra: [String: String] = [:]) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SESSION_BUS_ADDRESS"] = address
        env.merge(extra) { _, new in new }
        return env
    }

    /// Stops the daemon (SIGKILL, then waits) and removes its folder. Safe to call twice.
    public func stop() {
        guard let (process, leash) = self.process.withLock({ p -> (Process, FileHandle)? in
            defer { p = nil }
            return p
        }) else { return }
        try? leash.close()
        // Kill the daemon directly too, in case another child inherited the leash.
        let pidFile = directory.appendingPathComponent("daemon.pid")
        if let text = try? String(contentsOf: pidFile, encoding: .utf8),
           let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
            kill(pid, SIGKILL)
        }
        Self.reap(process)
        try? FileManager.default.removeItem(at: directory)
    }

    /// Waits for the leash shell, which exits once the daemon is gone; if it lingers, kills it
    /// rather than hang.
    private static func reap(_ process: Process) {
        let deadline = ContinuousClock.now + .seconds(2)
        while process.isRunning && ContinuousClock.now < deadline { usleep(5_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
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
