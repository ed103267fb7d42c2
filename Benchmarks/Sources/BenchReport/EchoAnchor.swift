import CDBusBench
import DBus
#if canImport(Glibc)
import Glibc
#endif

/// The latency anchor of paste-bench (P1, P2) and drag-bench (P5): a bare libdbus round trip on
/// the same bus — the C client of `dbus-bench` (CDBusBench) calling `Echo(ay)` on the C echo
/// server, which the benchmark runs as a child of itself (`<bench> --serve-echo ADDRESS`, which
/// must call ``serverMain(address:)``).
public struct EchoAnchor: Sendable {
    /// The server's bus name.
    public static let name = "org.ferry.BenchEcho"
    let address: String
    /// The C echo server's process.
    public let server: pid_t

    /// `<bench> --serve-echo ADDRESS`: serves Echo until Quit; the process's exit status.
    public static func serverMain(address: String) -> Int32 {
        cdb_serve(address, name) == 0 ? 0 : 1
    }

    /// Starts the server and waits until it owns its name.
    /// - Throws: `Spawn.Failure` when it never appears.
    public init(address: String, connection: Connection) async throws {
        self.address = address
        server = try Spawn.start([Spawn.ownPath, "--serve-echo", address], stdin: .inherited, stdout: .inherited)
        let busName = try BusName(Self.name)
        for _ in 0..<400 {
            if try await connection.owner(of: busName) != nil { return }
            try await Task.sleep(for: .milliseconds(25))
        }
        kill(server, SIGTERM)
        Spawn.wait(server)
        throw Spawn.Failure(description: "the C echo server never appeared")
    }

    /// `iterations` blocking Echo calls with a `payload`-byte array, back to back (the C client
    /// opens its own connection per batch); the round-trip times in µs.
    /// - Throws: `Spawn.Failure` when the C client fails.
    public func echo(payload: Int, iterations: Int) throws -> [Double] {
        var times = [Double](repeating: 0, count: iterations)
        let rc = times.withUnsafeMutableBufferPointer {
            cdb_echo(address, Self.name, payload, Int32(iterations), $0.baseAddress)
        }
        guard rc == 0 else { throw Spawn.Failure(description: "the C echo client failed") }
        return times
    }

    /// Quits the server and waits for it.
    public func stop() {
        _ = cdb_quit(address, Self.name)
        Spawn.wait(server)
    }
}
