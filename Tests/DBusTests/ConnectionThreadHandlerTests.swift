import DBus
import FerryTestSupport
import Testing

/// Handlers declared with `execution: .connectionThread` run as tasks on the connection's own
/// thread: values, named errors, nested calls and concurrent callers all behave as on the pool.
@Suite("Exported methods on the connection thread")
struct ConnectionThreadHandlerTests {
    @Test("replies, named errors, a nested call from the handler, and 50 concurrent callers")
    func behavesLikeThePool() async throws {
        let bus = try PrivateBus.shared()
        let helper = try await Connection(address: bus.address)
        let service = try await Connection(address: bus.address)
        let client = try await Connection(address: bus.address)
        try helper.export(Interface("org.ferry.Test.Helper") {
            Method("Double", in: ["n": "u"], out: ["n": "u"]) { call in [.uint32(try call.argument(0, as: UInt32.self) * 2)] }
        }, at: "/org/ferry/Helper")
        let helperName = helper.uniqueName
        try service.export(Interface("org.ferry.Test.Threaded") {
            Method("Add", in: ["a": "i", "b": "i"], out: ["sum": "i"], execution: .connectionThread) { call in
                let (a, b) = try call.arguments(Int32.self, Int32.self)
                return [.int32(a + b)]
            }
            Method("Refuse", execution: .connectionThread) { _ in
                throw DBusError(ErrorName("org.ferry.Error.PermissionDenied"), "not now")
            }
            // Awaiting another call from the connection's own thread must not deadlock it.
            Method("Quadruple", in: ["n": "u"], out: ["n": "u"], execution: .connectionThread) { call in
                let twice = try await call.connection.call(destination: helperName, path: "/org/ferry/Helper",
                                                           interface: "org.ferry.Test.Helper", member: "Double",
                                                           body: [.uint32(try call.argument(0, as: UInt32.self))])
                return try await call.connection.call(destination: helperName, path: "/org/ferry/Helper",
                                                      interface: "org.ferry.Test.Helper", member: "Double", body: twice)
            }
        }, at: "/org/ferry/Threaded")
        func call(_ member: MemberName, _ body: [DBusValue] = []) async throws -> [DBusValue] {
            try await client.call(destination: service.uniqueName, path: "/org/ferry/Threaded",
                                  interface: "org.ferry.Test.Threaded", member: member, body: body, timeout: .seconds(10))
        }
        #expect(try await call("Add", [.int32(40), .int32(2)]) == [.int32(42)])
        let refused = await #expect(throws: DBusError.self) { try await call("Refuse") }
        #expect(refused?.name.rawValue == "org.ferry.Error.PermissionDenied")
        #expect(refused?.message == "not now")
        #expect(try await call("Quadruple", [.uint32(5)]) == [.uint32(20)])
        let sums = try await withThrowingTaskGroup(of: Int32.self) { group in
            for i in 0..<50 {
                group.addTask { try await call("Quadruple", [.uint32(UInt32(i))])[0].get(UInt32.self) == UInt32(4 * i) ? 1 : 0 }
            }
            return try await group.reduce(0, +)
        }
        #expect(sums == 50)
        await client.close()
        await service.close()
        await helper.close()
    }
}
