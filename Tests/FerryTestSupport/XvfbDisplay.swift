import Foundation
import Synchronization

/// A private X server for tests: `Xvfb` on a display number of its own, killed by its pid.
///
/// Xvfb picks the number itself (`-displayfd`: the first display whose lock file it can create,
/// so parallel tests and other users of the machine never collide) and writes it once it accepts
/// connections. As `PrivateBus` does, a small shell keeps the server on a leash: it kills the
/// server when our end of its standard input closes, which `stop()`, releasing the object, or the
/// test process dying in any way (a crash included) all do.
public final class XvfbDisplay: Sendable {
    /// The display name, `:N`.
    public let name: String
    /// The server's process id.
    public let pid: Int32
    private let leash: Mutex<(shell: RunningProcess, writeEnd: Int32)?>

    /// Starts Xvfb (640×480×24, no TCP) and waits until it accepts connections.
    ///
    /// - Throws: `ChildProcessError` when Xvfb is missing or names no display in `timeout`.
    public init(timeout: Duration = .seconds(15)) throws {
        var env = ProcessInfo.processInfo.environment
        env["DISPLAY"] = nil
        let xvfb = try ChildProcess.resolve("Xvfb")
        let script = """
            "$0" -displayfd 1 -screen 0 640x480x24 -nolisten tcp </dev/null 2>/dev/null & server=$!
            echo "pid $server"
            read -r _
            kill -TERM "$server" 2>/dev/null
            wait "$server"
            """
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw ChildProcessError(description: "pipe failed: errno \(errno)") }
        ends.forEach(setCloseOnExec)
        let shell: RunningProcess
        do {
            defer { Foundation.close(ends[0]) }
            shell = try RunningProcess("/bin/sh", ["-c", script, xvfb], environment: env, standardInput: ends[0])
        } catch {
            Foundation.close(ends[1])
            throw error
        }
        let deadline = ContinuousClock.now + timeout
        let pidLine = Self.readLine(shell.standardOutput, until: deadline)
        let number = Self.readLine(shell.standardOutput, until: deadline)
        guard let pidLine, pidLine.hasPrefix("pid "), let pid = Int32(pidLine.dropFirst(4)),
              let number, Int(number) != nil else {
            Foundation.close(ends[1])
            shell.kill()
            throw ChildProcessError(description: "Xvfb named no display within \(timeout)")
        }
        self.pid = pid
        self.name = ":\(number)"
        self.leash = Mutex((shell, ends[1]))
    }

    /// The test process's environment with `DISPLAY` set to this display and no session bus.
    public func environment(adding extra: [String: String] = [:]) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["DISPLAY"] = name
        env["DBUS_SESSION_BUS_ADDRESS"] = nil
        env["WAYLAND_DISPLAY"] = nil
        env.merge(extra) { _, new in new }
        return env
    }

    /// Kills the server by its pid and waits until the leash reaped it. Safe to call twice.
    public func stop() {
        guard let (shell, writeEnd) = leash.withLock({ l -> (RunningProcess, Int32)? in
            defer { l = nil }
            return l
        }) else { return }
        // While the shell runs, the server's pid cannot have been reused: signal it directly.
        kill(pid, SIGTERM)
        Foundation.close(writeEnd)
        let deadline = ContinuousClock.now + .seconds(3)
        while shell.isRunning && ContinuousClock.now < deadline { usleep(2_000) }
        shell.kill()
    }

    deinit { stop() }

    private static func readLine(_ fd: Int32, until deadline: ContinuousClock.Instant) -> String? {
        var bytes: [UInt8] = []
        while ContinuousClock.now < deadline {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 100) > 0 else { continue }
            var byte: UInt8 = 0
            guard read(fd, &byte, 1) == 1 else { return nil }
            if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
        return nil
    }
}
