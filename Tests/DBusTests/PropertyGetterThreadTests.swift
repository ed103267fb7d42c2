@testable import DBus
import FerryTestSupport
import Testing

/// `Properties.Get` runs a getter on the connection's thread; one that awaits still answers.
@Suite("Property getters on the connection thread")
struct PropertyGetterThreadTests {
    actor Counter {
        var value: UInt64 = 41
        func next() -> UInt64 { value += 1; return value }
    }

    @Test("Get runs the getter on the connection's thread; an awaiting getter and GetAll answer")
    func getterOnConnectionThread() async throws {
        let bus = try PrivateBus.shared()
        let service = try await Connection(address: bus.address)
        let client = try await Connection(address: bus.address)
        let counter = Counter()
        try service.export(Interface("org.ferry.Test.Props") {
            Property("OnThread", "b", get: { call in .boolean(call.connection.loop.onOwnerThread) })
            Property("Counted", "t", get: { _ in .uint64(await counter.next()) })
        }, at: "/org/ferry/Props")
        func get(_ name: String) async throws -> DBusValue {
            let reply = try await client.call(destination: service.uniqueName, path: "/org/ferry/Props",
                                              interface: "org.freedesktop.DBus.Properties", member: "Get",
                                              body: [.string("org.ferry.Test.Props"), .string(name)], timeout: .seconds(10))
            guard case .variant(let value)? = reply.first else { throw DBusError(.failed, "no variant in \(reply)") }
            return value
        }
        #expect(try await get("OnThread") == .boolean(true))
        #expect(try await get("Counted") == .uint64(42))
        let all = try await client.call(destination: service.uniqueName, path: "/org/ferry/Props",
                                        interface: "org.freedesktop.DBus.Properties", member: "GetAll",
                                        body: [.string("org.ferry.Test.Props")], timeout: .seconds(10))
        guard case .dictionary(_, _, let entries)? = all.first else { throw DBusError(.failed, "no dictionary in \(all)") }
        #expect(entries.first { $0.key == .string("OnThread") }?.value == .variant(.boolean(false)), "GetAll runs on the pool")
        #expect(entries.first { $0.key == .string("Counted") }?.value == .variant(.uint64(43)))
        await client.close()
        await service.close()
    }
}
