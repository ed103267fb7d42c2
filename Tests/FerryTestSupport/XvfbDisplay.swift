import Foundation

/// A private X server for tests: `Xvfb` on a display number of its own, killed by its pid.
///
/// Xvfb picks the number itself (`-displayfd`: the first display whose lock file it can create,
/// so parallel tests and other users of the machine never collide) and writes it once it accepts
/// connections. The server stops on `stop()` or when the object is released.
public final class XvfbDisplay: Sendable {
    /// The display name, `:N`.
    public let name: String
    private let server: Subprocess

    /// Starts Xvfb (640×480×24, no TCP) and waits until it accepts connections.
    ///
    /// - Throws: `ChildProcessError` when Xvfb is missing or names no display in `timeout`.
    public init(timeout: Duration = .seconds(15)) throws {
        var env = ProcessInfo.processInfo.environment
        env["DISPLAY"] = nil
        let server = try Subprocess("Xvfb", ["-displayfd", "1", "-screen", "0", "640x480x24", "-nolisten", "tcp"],
                                    environment: env)
        guard let number = Self.readLine(server.standardOutput, timeout: timeout), Int(number) != nil else {
            server.kill()
            throw ChildProcessError(description: "Xvfb named no display within \(timeout)")
        }
        self.server = server
        self.name = ":\(number)"
    }

    /// The server's process id.
    public var pid: Int32 { server.pid }

    /// Whether the server still runs.
    public var isRunning: Bool { server.isRunning }

    /// The test process's environment with `DISPLAY` set to this display and no session bus.
    public func environment(adding extra: [String: String] = [:]) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["DISPLAY"] = name
        env["DBUS_SESSION_BUS_ADDRESS"] = nil
        env["WAYLAND_DISPLAY"] = nil
        env.merge(extra) { _, new in new }
        return env
    }

    /// Kills the server (SIGTERM, then SIGKILL) and reaps it. Safe to call twice.
    public func stop() { server.terminate(grace: .seconds(2)) }

    deinit { stop() }

    private static func readLine(_ fd: Int32, timeout: Duration) -> String? {
        var bytes: [UInt8] = []
        let deadline = ContinuousClock.now + timeout
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
