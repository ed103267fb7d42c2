import DBus
import Foundation
import FerryTestSupport
import Synchronization
import Testing

/// A service connection exporting a test object, and a client connection, on the shared bus.
struct CallFixture {
    static let interfaceName: InterfaceName = "org.ferry.Test.Calls"
    static let path: ObjectPath = "/org/ferry/Test/Calls"
    let service: Connection
    let client: Connection

    init() async throws {
        let bus = try PrivateBus.shared()
        service = try await Connection(address: bus.address)
        client = try await Connection(address: bus.address)
        let interface = Interface(Self.interfaceName) {
            Method("Add", in: ["a": "i", "b": "i"], out: ["sum": "i"]) { call in
                let (a, b) = try call.arguments(Int32.self, Int32.self)
                return [.int32(a &+ b)]
            }
            Method("WhoAmI", out: ["caller": "s"]) { call in [.string(call.sender.rawValue)] }
            Method("Fail", in: ["name": "s", "text": "s"]) { call in
                throw DBusError(try ErrorName(call.argument(0, as: String.self)), try call.argument(1, as: String.self))
            }
            Method("Crash") { _ in throw CocoaError(.fileNoSuchFile) }
            Method("Sleep", in: ["ms": "u"]) { call in
                try await Task.sleep(for: .milliseconds(Int(try call.argument(0, as: UInt32.self))))
                return []
            }
            Method("Lie", out: ["n": "i"]) { _ in [.string("not an int")] }
            Method("Echo", in: ["data": "ay"], out: ["data": "ay"]) { call in [call.arguments[0]] }
        }
        try service.export(interface, at: Self.path)
    }

    func call(_ member: MemberName, _ body: [DBusValue] = [], timeout: Duration? = nil,
              interface: InterfaceName? = interfaceName, path: ObjectPath = path) async throws -> [DBusValue] {
        try await client.call(destination: service.uniqueName, path: path, interface: interface,
                              member: member, body: body, timeout: timeout)
    }

    /// Closes both ends. A test's `Sleep` handlers may still be running: their replies are not
    /// wanted, so the service does not give them the grace period (`ConnectionCloseTests` tests it).
    func close() async {
        await client.close()
        await service.close(gracePeriod: .zero)
    }
}

@Suite("Connection calls")
struct ConnectionCallTests {
    @Test("A method call round-trips its arguments and the handler sees the caller's unique name")
    func roundTrip() async throws {
        let f = try await CallFixture()
        #expect(try await f.call("Add", [.int32(40), .int32(2)]) == [.int32(42)])
        let sum = try await f.client.call(destination: f.service.uniqueName, path: CallFixture.path,
                                          interface: CallFixture.interfaceName, member: "Add",
                                          body: [.int32(-5), .int32(3)], returning: Int32.self)
        #expect(sum == -2)
        #expect(try await f.call("WhoAmI") == [.string(f.client.uniqueName.rawValue)])
        // Without an interface, the member is looked up across the object's interfaces.
        #expect(try await f.call("Add", [.int32(1), .int32(1)], interface: nil) == [.int32(2)])
        await f.close()
    }

    @Test("A thrown DBusError reaches the caller with its name and message")
    func thrownErrorName() async throws {
        let f = try await CallFixture()
        let error = await #expect(throws: DBusError.self) {
            try await f.call("Fail", [.string("org.ferry.Error.NotFound"), .string("no such item")])
        }
        #expect(error?.name.rawValue == "org.ferry.Error.NotFound")
        #expect(error?.message == "no such item")
        let other = await #expect(throws: DBusError.self) { try await f.call("Crash") }
        #expect(other?.name == .failed)
        #expect(other?.message.isEmpty == false)
        await f.close()
    }

    @Test("An error that is DBusErrorConvertible is replied with its own name")
    func convertibleErrorName() async throws {
        struct Refusal: DBusErrorConvertible {
            var dbusError: DBusError { DBusError("org.ferry.Error.PermissionDenied", "not while in background") }
        }
        let f = try await CallFixture()
        try f.service.export(Interface("org.ferry.Test.Refuse") {
            Method("Refuse") { _ in throw Refusal() }
        }, at: "/org/ferry/Test/Refuse")
        let error = await #expect(throws: DBusError.self) {
            try await f.call("Refuse", interface: "org.ferry.Test.Refuse", path: "/org/ferry/Test/Refuse")
        }
        #expect(error?.name.rawValue == "org.ferry.Error.PermissionDenied")
        #expect(error?.message == "not while in background")
        await f.close()
    }

    @Test("A handler that uses a closed descriptor (FerrySystem's SystemCallError) replies SystemError, errno named")
    func closedDescriptorReplySystemError() async throws {
        let f = try await CallFixture()
        try f.service.export(Interface("org.ferry.Test.Closed") {
            Method("Use") { _ in
                let (_, write) = try FileDescriptor.pipe()
                write.close()
                try write.withRawValue { _ in }
                return []
            }
        }, at: "/org/ferry/Test/Closed")
        let error = await #expect(throws: DBusError.self) {
            try await f.call("Use", interface: "org.ferry.Test.Closed", path: "/org/ferry/Test/Closed")
        }
        #expect(error?.name == .systemError)
        #expect(error?.message.contains("use of a closed descriptor failed") == true)
        #expect(error?.message.contains("(errno \(EBADF))") == true)
        await f.close()
    }

    @Test("Unknown object, interface and method, and wrong arguments, get the standard errors")
    func standardErrors() async throws {
        let f = try await CallFixture()
        let object = await #expect(throws: DBusError.self) { try await f.call("Add", path: "/no/such/object") }
        #expect(object?.name == .unknownObject)
        let interface = await #expect(throws: DBusError.self) {
            try await f.call("Add", [.int32(1), .int32(2)], interface: "org.ferry.Test.Missing")
        }
        #expect(interface?.name == .unknownInterface)
        let method = await #expect(throws: DBusError.self) { try await f.call("Subtract") }
        #expect(method?.name == .unknownMethod)
        let args = await #expect(throws: DBusError.self) { try await f.call("Add", [.string("1"), .int32(2)]) }
        #expect(args?.name == .invalidArgs)
        let missing = await #expect(throws: DBusError.self) { try await f.call("Add", [.int32(1)]) }
        #expect(missing?.name == .invalidArgs)
        // A handler returning values that break its declaration is a Failed reply, not a crash.
        let lie = await #expect(throws: DBusError.self) { try await f.call("Lie") }
        #expect(lie?.name == .failed)
        // The service still works afterwards.
        #expect(try await f.call("Add", [.int32(2), .int32(2)]) == [.int32(4)])
        await f.close()
    }

    @Test("A call past its timeout fails with NoReply")
    func timeout() async throws {
        let f = try await CallFixture()
        let start = ContinuousClock.now
        let error = await #expect(throws: DBusError.self) {
            try await f.call("Sleep", [.uint32(2_000)], timeout: .milliseconds(200))
        }
        #expect(error?.name == .noReply)
        // The handler would reply (successfully) after 2 s: NoReply alone proves the timeout
        // fired. The bound is loose because the whole suite shares two pool threads.
        #expect(ContinuousClock.now - start < .seconds(10))
        await f.close()
    }

    @Test("Cancelling the calling task cancels the pending call")
    func cancellation() async throws {
        let f = try await CallFixture()
        let start = ContinuousClock.now
        let task = Task { try await f.call("Sleep", [.uint32(5_000)]) }
        try await Task.sleep(for: .milliseconds(100))
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        // Without cancellation the call would return a value after 5 s, failing the line above;
        // the bound is loose because the whole suite shares two pool threads.
        #expect(ContinuousClock.now - start < .seconds(10))
        // The connection is still usable.
        #expect(try await f.call("Add", [.int32(3), .int32(4)]) == [.int32(7)])
        await f.close()
    }

    @Test("send() delivers a call without a reply")
    func noReplySend() async throws {
        let f = try await CallFixture()
        let seen = Mutex<[Int32]>([])
        let path: ObjectPath = "/org/ferry/Test/Sink"
        try f.service.export(Interface("org.ferry.Test.Sink") {
            Method("Put", in: ["n": "i"]) { call in
                let n = try call.argument(0, as: Int32.self)
                seen.withLock { $0.append(n) }
                return []
            }
        }, at: path)
        var messages: [Message] = []
        for n in Int32(1)...3 {
            messages.append(try Message.methodCall(destination: f.service.uniqueName, path: path,
                                                   interface: "org.ferry.Test.Sink", member: "Put", body: [.int32(n)]))
        }
        for message in messages { try f.client.send(message) }
        // Sending an already-sent message again is fine (libdbus would abort if it were changed).
        try f.client.send(messages[0])
        // A round trip on the same path orders after the sends.
        _ = try await f.call("Add", [.int32(0), .int32(0)])
        _ = await eventually(every: .milliseconds(5)) { seen.withLock { $0.count } >= 4 }
        #expect(seen.withLock { $0.sorted() } == [1, 1, 2, 3])
        // A call message can be sent twice too, one call after the other.
        let add = try Message.methodCall(destination: f.service.uniqueName, path: CallFixture.path,
                                         interface: CallFixture.interfaceName, member: "Add", body: [.int32(1), .int32(2)])
        #expect(try await f.client.call(add).body == [.int32(3)])
        #expect(try await f.client.call(add).body == [.int32(3)])
        await f.close()
    }

    @Test("Many concurrent calls from many tasks all get their own replies")
    func concurrentCalls() async throws {
        let f = try await CallFixture()
        try await withThrowingTaskGroup(of: (Int32, [DBusValue]).self) { group in
            for i in Int32(0)..<64 {
                group.addTask { (i, try await f.call("Add", [.int32(i), .int32(1000)])) }
            }
            var count = 0
            for try await (i, reply) in group {
                #expect(reply == [.int32(i + 1000)])
                count += 1
            }
            #expect(count == 64)
        }
        await f.close()
    }

    @Test("A 16 MiB byte array goes out and comes back (read and write watches drain big messages)")
    func bigMessage() async throws {
        let f = try await CallFixture()
        var payload = [UInt8](repeating: 0xA5, count: 16 << 20)
        for i in stride(from: 0, to: payload.count, by: 4093) { payload[i] = UInt8(truncatingIfNeeded: i) }
        let reply = try await f.call("Echo", [.bytes(payload)], timeout: .seconds(60))
        #expect(reply == [.bytes(payload)])
        await f.close()
    }

    @Test("close() with calls in flight fails them with Disconnected")
    func closeWithCallsInFlight() async throws {
        let f = try await CallFixture()
        let tasks = (0..<5).map { _ in Task { try await f.call("Sleep", [.uint32(5_000)]) } }
        try await Task.sleep(for: .milliseconds(100))
        await f.client.close()
        for task in tasks {
            let error = await #expect(throws: DBusError.self) { try await task.value }
            #expect(error?.name == .disconnected)
        }
        let after = await #expect(throws: DBusError.self) { try await f.call("Add", [.int32(1), .int32(1)]) }
        #expect(after?.name == .disconnected)
        #expect(throws: DBusError.self) {
            try f.client.send(Message.signal(path: "/a", interface: "org.ferry.Test", member: "Gone"))
        }
        await f.service.close(gracePeriod: .zero)
    }
}
