import DBus
import FerryTestSupport
import Synchronization
import Testing

/// A method whose handler never awaits picks the synchronous `Method` form: on the connection
/// thread it runs inline as the call is dispatched (no task); on the pool it still runs as a task.
@Suite("Synchronous method handlers")
struct SynchronousHandlerTests {
    /// What the handlers saw, in order.
    final class Log: Sendable {
        let items = Mutex<[UInt32]>([])
    }

    /// Whether the code calling it runs inside a task.
    static func inTask() -> Bool { withUnsafeCurrentTask { $0 != nil } }

    @Test("a synchronous connection-thread handler runs without a task; async ones and the pool's run in one")
    func inlineOnlyOnTheConnectionThread() async throws {
        let bus = try PrivateBus.shared()
        let service = try await Connection(address: bus.address)
        let client = try await Connection(address: bus.address)
        try service.export(Interface("org.ferry.Test.Sync") {
            Method("Inline", out: ["in_task": "b"], execution: .connectionThread) { _ in [.boolean(Self.inTask())] }
            Method("Awaiting", out: ["in_task": "b"], execution: .connectionThread) { _ in
                await Task.yield()
                return [.boolean(Self.inTask())]
            }
            Method("Pooled", out: ["in_task": "b"]) { _ in [.boolean(Self.inTask())] }
        }, at: "/org/ferry/Sync")
        func call(_ member: MemberName) async throws -> [DBusValue] {
            try await client.call(destination: service.uniqueName, path: "/org/ferry/Sync",
                                  interface: "org.ferry.Test.Sync", member: member, timeout: .seconds(10))
        }
        #expect(try await call("Inline") == [.boolean(false)])
        #expect(try await call("Awaiting") == [.boolean(true)])
        #expect(try await call("Pooled") == [.boolean(true)])
        await client.close()
        await service.close()
    }

    @Test("inline handlers: arguments, byte arrays, errors, calls without a reply, in order")
    func inlineHandlersServeCalls() async throws {
        let bus = try PrivateBus.shared()
        let service = try await Connection(address: bus.address)
        let client = try await Connection(address: bus.address)
        let log = Log()
        try service.export(Interface("org.ferry.Test.Sync") {
            Method("Echo", in: ["data": "ay"], out: ["data": "ay"], execution: .connectionThread) { call in
                [.bytes(try call.argument(0, as: [UInt8].self))]
            }
            Method("Note", in: ["n": "u"], execution: .connectionThread) { call in
                let n = try call.argument(0, as: UInt32.self)
                log.items.withLock { $0.append(n) }
                return []
            }
            Method("Notes", out: ["notes": "au"], execution: .connectionThread) { _ in
                [log.items.withLock { $0 }.dbusValue]
            }
            Method("Refuse", execution: .connectionThread) { _ in
                throw DBusError(ErrorName("org.ferry.Error.Refused"), "never")
            }
        }, at: "/org/ferry/Sync")
        func call(_ member: MemberName, _ body: [DBusValue] = []) async throws -> [DBusValue] {
            try await client.call(destination: service.uniqueName, path: "/org/ferry/Sync",
                                  interface: "org.ferry.Test.Sync", member: member, body: body, timeout: .seconds(10))
        }
        let bytes = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        #expect(try await call("Echo", [.bytes(bytes)]) == [.bytes(bytes)])
        #expect(try await call("Echo", [.bytes([])]) == [.bytes([])])
        let refused = await #expect(throws: DBusError.self) { try await call("Refuse") }
        #expect(refused?.name.rawValue == "org.ferry.Error.Refused")
        #expect(refused?.message == "never")
        // Sent without waiting (NO_REPLY_EXPECTED): each still runs, in the order sent.
        for n in 1...20 as ClosedRange<UInt32> {
            try client.send(Message.methodCall(destination: service.uniqueName, path: "/org/ferry/Sync",
                                               interface: "org.ferry.Test.Sync", member: "Note", body: [.uint32(n)]))
        }
        #expect(try await call("Notes") == [Array(1...20 as ClosedRange<UInt32>).dbusValue])
        await client.close()
        await service.close()
    }

    @Test("a byte array converts to [UInt8] and back without changing a byte")
    func byteArraysConvert() throws {
        let bytes: [UInt8] = [0, 1, 254, 255, 42]
        #expect(try firstDifference([UInt8](dbusValue: .bytes(bytes)), bytes) == nil)
        let elements = DBusValue.array(element: .byte, elements: bytes.map { .byte($0) })
        #expect(try firstDifference([UInt8](dbusValue: elements), bytes) == nil)
        #expect(bytes.dbusValue == .bytes(bytes))
        #expect(throws: DBusError.self) { try [UInt8](dbusValue: .array(element: .uint32, elements: [.uint32(1)])) }
    }
}

/// `Method.replying`: a handler that builds its reply from typed values.
@Suite("Typed replies from handlers")
struct TypedReplyTests {
    @Test("a typed reply reaches the caller; one of another signature becomes an error; no reply when none is expected")
    func typedRepliesAreCheckedAndSent() async throws {
        let bus = try PrivateBus.shared()
        let service = try await Connection(address: bus.address)
        let client = try await Connection(address: bus.address)
        let sent = SynchronousHandlerTests.Log()
        let listing = try [MarshalledDictionary(["a": .uint32(1)]), MarshalledDictionary([:]).adding(["b": .string("x")])]
        try service.export(Interface("org.ferry.Test.Typed") {
            // On the connection's thread, so calls are served in the order they arrive.
            Method.replying("List", in: ["n": "u"], out: ["items": "aa{sv}", "n": "u"], execution: .connectionThread) { call in
                let n = try call.argument(0, as: UInt32.self)
                sent.items.withLock { $0.append(n) }
                return try call.reply(listing, n)
            }
            Method.replying("Wrong", out: ["items": "aa{sv}"]) { call in
                try call.reply("not a listing")
            }
        }, at: "/org/ferry/Typed")
        func call(_ member: MemberName, _ body: [DBusValue] = []) async throws -> [DBusValue] {
            try await client.call(destination: service.uniqueName, path: "/org/ferry/Typed",
                                  interface: "org.ferry.Test.Typed", member: member, body: body, timeout: .seconds(10))
        }
        #expect(try await call("List", [.uint32(5)]) == [listing.dbusValue, .uint32(5)])
        let wrong = await #expect(throws: DBusError.self) { try await call("Wrong") }
        #expect(wrong?.name == .failed)
        #expect(wrong?.message == "org.ferry.Test.Typed.Wrong returned 's', declared 'aa{sv}'")
        // Without a reply expected the handler runs and nothing is sent back.
        try client.send(Message.methodCall(destination: service.uniqueName, path: "/org/ferry/Typed",
                                           interface: "org.ferry.Test.Typed", member: "List", body: [.uint32(6)],
                                           noReplyExpected: true))
        #expect(try await call("List", [.uint32(7)]).last == .uint32(7))
        #expect(sent.items.withLock { $0 } == [5, 6, 7])
        await client.close()
        await service.close()
    }
}
