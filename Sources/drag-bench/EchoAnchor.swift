import BenchReport
import CDBusBench
import DBus
#if canImport(Glibc)
import Glibc
#endif

/// The anchor: a bare libdbus round trip on the same bus — the C client of `dbus-bench`
/// (CDBusBench) calling `Echo(ay)` on the C echo server, which this program runs as a child
/// (as paste-bench's P1 anchor does).
struct EchoAnchor {
    static let name = "org.ferry.DragBenchEcho"
    /// Bytes echoed: about a Move's argument (a `(dd)`).
    static let payload = 16
    let address: String
    let server: pid_t

    /// `drag-bench --serve-echo ADDRESS`: serves Echo until Quit.
    static func serverMain(address: String) -> Int32 {
        cdb_serve(address, name) == 0 ? 0 : 1
    }

    /// Starts the server and waits until it owns its name.
    init(address: String, connection: Connection) async throws {
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

    /// `iterations` blocking Echo calls back to back (the C client opens its own connection per
    /// batch); the round-trip times in µs.
    func echo(iterations: Int) throws -> [Double] {
        var times = [Double](repeating: 0, count: iterations)
        let rc = times.withUnsafeMutableBufferPointer {
            cdb_echo(address, Self.name, Self.payload, Int32(iterations), $0.baseAddress)
        }
        guard rc == 0 else { throw Spawn.Failure(description: "the C echo client failed") }
        return times
    }

    func stop() {
        _ = cdb_quit(address, Self.name)
        Spawn.wait(server)
    }
}
