import FerryTestSupport
import Testing
@testable import DBus

/// The per-message shortcuts of the D-Bus layer (types derived without parsing their text,
/// element signatures read without asking libdbus, reply signatures compared piece by piece)
/// must give exactly what the general path gives, and reject exactly what it rejects.
@Suite struct BodyValidatorTests {
    static let basics: [DBusValue] = [
        .byte(1), .boolean(true), .int16(-2), .uint16(3), .int32(-4), .uint32(5), .int64(-6), .uint64(7),
        .double(0.5), .string("s"), .objectPath("/o"), .signature("a{sv}"), .variant(.string("inner")),
    ]

    /// Arrays, dictionaries and flat structs of every basic type and of variants, plus nested ones
    /// that still go through the parser.
    static var containers: [DBusValue] {
        var values: [DBusValue] = []
        for value in basics {
            values.append(.array(element: value.signature, elements: [value, value]))
            values.append(.array(element: value.signature, elements: []))
            values.append(.structure([value]))
            values.append(.structure([value, .double(1), .variant(.int32(2))]))
            if case .variant = value { continue }
            values.append(.dictionary(key: value.signature, value: "v", entries: [.init(key: value, value: .variant(value))]))
            values.append(.dictionary(key: "s", value: value.signature, entries: [.init(key: "k", value: value)]))
        }
        values.append(.structure([.structure([.double(1)]), .array(of: "s", ["x"])]))
        values.append(.array(element: "(dd)", elements: [.structure([.double(1), .double(2)])]))
        values.append(.dictionary(key: "s", value: "as", entries: [.init(key: "k", value: .array(of: "s", ["v"]))]))
        return values
    }

    @Test func shortcutTypesAreTheParsedTypes() throws {
        for value in Self.basics + Self.containers {
            let node = try BodyValidator.node(of: value)
            #expect(node == (try SignatureParser.parseSingle(value.signature.rawValue)), "\(value)")
            #expect(node.text == value.signature.rawValue)
        }
    }

    @Test func valuesKeepTheirTypesThroughAMessage() throws {
        for value in Self.basics + Self.containers {
            let body = [value, .string("after")]
            let message = try Message.methodCall(destination: nil, path: "/t", interface: nil, member: "M", body: body)
            let read = try message.body
            #expect(read == body)
            #expect(read.map(\.signature) == body.map(\.signature))
            #expect(message.signature.rawValue == value.signature.rawValue + "s")
        }
    }

    @Test func flatStructsStopAtTheSignatureLimit() throws {
        // "(" + 253 codes + ")" is 255 bytes, the most a signature may hold; one more field is too many.
        let longest = DBusValue.structure(Array(repeating: .byte(1), count: 253))
        _ = try Message.methodCall(destination: nil, path: "/t", interface: nil, member: "M", body: [longest])
        expectDBusError(.invalidSignature) {
            _ = try Message.methodCall(destination: nil, path: "/t", interface: nil, member: "M",
                                       body: [.structure(Array(repeating: .byte(1), count: 254))])
        }
        expectDBusError(.invalidSignature) {
            _ = try Message.methodCall(destination: nil, path: "/t", interface: nil, member: "M",
                                       body: [.variant(.structure(Array(repeating: .byte(1), count: 254)))])
        }
    }

    @Test func replySignaturesAreComparedWhole() {
        let values: [DBusValue] = [.string("copy"), .boolean(false), .array(of: "s", ["a"]), .structure([.double(1)])]
        #expect(ConnectionRouter.signatures(of: values, equal: "sbas(d)"))
        #expect(ConnectionRouter.signatures(of: [], equal: ""))
        for wrong in ["", "sbas", "sbas(d)s", "sbas(i)", "sbai(d)", "bsas(d)"] {
            #expect(!ConnectionRouter.signatures(of: values, equal: wrong), "\(wrong)")
        }
    }

    @Test("a handler returning values of another signature is answered with Failed naming both")
    func wrongReplySignatureIsAnError() async throws {
        let bus = try PrivateBus.shared()
        let service = try await Connection(address: bus.address)
        let client = try await Connection(address: bus.address)
        try service.export(Interface("org.ferry.Test.Replies") {
            Method("Wrong", out: ["a": "s", "b": "b"], execution: .connectionThread) { _ in [.string("x"), .int32(1)] }
            Method("Right", out: ["a": "s", "b": "b"]) { _ in [.string("x"), .boolean(true)] }
        }, at: "/org/ferry/Replies")
        func call(_ member: MemberName) async throws -> [DBusValue] {
            try await client.call(destination: service.uniqueName, path: "/org/ferry/Replies",
                                  interface: "org.ferry.Test.Replies", member: member, timeout: .seconds(10))
        }
        #expect(try await call("Right") == [.string("x"), .boolean(true)])
        let error = await #expect(throws: DBusError.self) { try await call("Wrong") }
        #expect(error?.name == .failed)
        #expect(error?.message.contains("returned 'si', declared 'sb'") == true)
        await client.close()
        await service.close()
    }
}
