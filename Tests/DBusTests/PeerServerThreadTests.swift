@testable import DBus
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// A `PeerServer` serves the connections it accepts on its own thread: one thread for them all,
/// which outlives the listening socket and stops with the last connection.
@Suite("A peer server's thread")
struct PeerServerThreadTests {
    /// The connections a server accepted, each serving `Add`.
    final class Accepted: Sendable {
        let connections = Mutex<[Connection]>([])
        var all: [Connection] { connections.withLock { $0 } }

        func accept(_ connection: Connection) {
            try? connection.export(Interface("org.ferry.Test.Peer") {
                Method("Add", in: ["a": "i", "b": "i"], out: ["sum": "i"], execution: .connectionThread) { call in
                    let (a, b) = try call.arguments(Int32.self, Int32.self)
                    return [.int32(a &+ b)]
                }
            }, at: "/org/ferry/Test/Peer")
            connections.withLock { $0.append(connection) }
        }
    }

    static func add(_ client: Connection, _ a: Int32, _ b: Int32) async throws -> [DBusValue] {
        try await client.call(destination: nil, path: "/org/ferry/Test/Peer", interface: "org.ferry.Test.Peer",
                              member: "Add", body: [.int32(a), .int32(b)])
    }

    @Test("accepted connections share the server's thread, keep working once it stops listening, and the thread stops with the last")
    func sharedThread() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("peer-thread-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let accepted = Accepted()
        let server = try await PeerServer(listeningOn: "unix:path=\(directory.path)/socket", name: BusName(":0.0"),
                                          accepted: { accepted.accept($0) }, refused: { _ in })
        let clients = [try await Connection(peer: server.address, speakingFor: BusName(":1.1")),
                       try await Connection(peer: server.address, speakingFor: BusName(":1.2"))]
        #expect(try await Self.add(clients[0], 1, 2) == [.int32(3)])
        #expect(try await Self.add(clients[1], 3, 4) == [.int32(7)])
        let served = accepted.all
        try #require(served.count == 2)
        #expect(served[0].loop === served[1].loop, "one thread for both")

        await server.close()
        await #expect(throws: DBusError.self) { _ = try await Connection(peer: server.address, speakingFor: BusName(":1.3")) }
        #expect(try await Self.add(clients[0], 5, 6) == [.int32(11)], "still served after the server stopped listening")

        await clients[0].close()
        #expect(await eventually { !served[0].isConnected })
        #expect(try await Self.add(clients[1], 7, 8) == [.int32(15)], "the other connection is untouched")
        await clients[1].close()
        #expect(await eventually { !served[1].isConnected })
        // The last connection gone, the thread stops: its queue refuses work.
        #expect(await eventually { !served[1].loop.submit {} })
        await served[1].close()
        await served[0].close()
    }
}
