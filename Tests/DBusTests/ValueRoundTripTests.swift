import Testing
@testable import DBus

/// Builds a method call carrying `values`, marshals it to wire bytes, parses them back and
/// returns the parsed body.
func wireRoundTrip(_ values: [DBusValue]) throws -> [DBusValue] {
    let message = try Message.methodCall(
        destination: "org.ferry.Test", path: "/org/ferry/Test", interface: "org.ferry.Test1",
        member: "Echo", body: values)
    let parsed = try Message(wireBytes: try message.wireBytes())
    #expect(parsed.signature == message.signature)
    return try parsed.body
}

@Suite struct ValueRoundTripTests {
    @Test func integerEdgeValuesSurviveTheWire() throws {
        let values: [DBusValue] = [
            .byte(0), .byte(.max),
            .int16(.min), .int16(0), .int16(.max), .uint16(0), .uint16(.max),
            .int32(.min), .int32(0), .int32(.max), .uint32(0), .uint32(.max),
            .int64(.min), .int64(0), .int64(.max), .uint64(0), .uint64(.max),
            .boolean(true), .boolean(false),
        ]
        #expect(try wireRoundTrip(values) == values)
    }

    @Test func doublesKeepTheirBits() throws {
        let values: [DBusValue] = [
            .double(.nan), .double(.infinity), .double(-.infinity), .double(-0.0), .double(0.0),
            .double(.leastNonzeroMagnitude), .double(.greatestFiniteMagnitude),
        ]
        let back = try wireRoundTrip(values)
        #expect(back == values)
        guard case .double(let negativeZero) = back[3] else { Issue.record("not a double"); return }
        #expect(negativeZero.sign == .minus)
        guard case .double(let nan) = back[0] else { Issue.record("not a double"); return }
        #expect(nan.isNaN)
    }

    @Test func stringsOfAllKindsSurviveTheWire() throws {
        let big = String(repeating: "é", count: 512 * 1024)  // 1 MiB of UTF-8
        let values: [DBusValue] = [
            .string(""), .string("plain"), .string("Ünïcödé ✓ 🚢👩‍👩‍👧 \u{FFFE}"), .string(big),
            .objectPath("/"), .objectPath("/org/ferry/Broker_1"),
            .signature(""), .signature("a{sv}(ii)"),
        ]
        #expect(try wireRoundTrip(values) == values)
    }

    @Test func emptyContainersKeepTheirSignature() throws {
        let values: [DBusValue] = [
            .bytes([]),
            .array(element: "s", elements: []),
            .array(element: "a{sv}", elements: []),
            .array(element: "(ia{s(ay)})", elements: []),
            .dictionary(key: "s", value: "v", entries: []),
            .dictionary(key: "t", value: "aas", entries: []),
            .variant(.array(element: "o", elements: [])),
        ]
        let back = try wireRoundTrip(values)
        #expect(back == values)
        #expect(back.map(\.signature.rawValue) == ["ay", "as", "aa{sv}", "a(ia{s(ay)})", "a{sv}", "a{taas}", "v"])
        guard case .variant(let inner) = back[6] else { Issue.record("not a variant"); return }
        #expect(inner.signature == "ao")
    }

    @Test func nestedVariantsSurviveTheWire() throws {
        let dict = DBusValue.variantDictionary(["k": .array(element: "i", elements: [.int32(1), .int32(2)])])
        let value = DBusValue.variant(.variant(.array(element: "a{sv}", elements: [dict, dict])))
        #expect(try wireRoundTrip([value]) == [value])
    }

    @Test func structWithEveryTypeSurvivesTheWire() throws {
        let value = DBusValue.structure([
            .byte(7), .boolean(true), .int16(-2), .uint16(3), .int32(-4), .uint32(5), .int64(-6),
            .uint64(7), .double(8.5), .string("nine"), .objectPath("/ten"), .signature("ii"),
            .bytes([1, 2, 3]), .array(element: "s", elements: ["a", "b"]),
            .variantDictionary(["x": .int32(1), "y": .string("z")]),
            .structure([.int32(1), .structure([.string("deep")])]), .variant(.uint64(11)),
        ])
        #expect(value.signature == "(ybnqiuxtdsogayasa{sv}(i(s))v)")
        #expect(try wireRoundTrip([value]) == [value])
    }

    @Test func deepNestingUpToTheSpecLimitWorks() throws {
        var arrays = DBusValue.int32(1)
        for _ in 0..<32 { arrays = .array(element: arrays.signature, elements: [arrays]) }
        var structs = DBusValue.int32(1)
        for _ in 0..<32 { structs = .structure([structs]) }
        var variants = DBusValue.int32(1)
        for _ in 0..<60 { variants = .variant(variants) }
        let values = [arrays, structs, variants]
        #expect(try wireRoundTrip(values) == values)
    }

    @Test func byteArraysTakeTheFastPath() throws {
        var big = [UInt8](repeating: 0xAB, count: 16 << 20)
        for i in stride(from: 0, to: big.count, by: 4093) { big[i] = UInt8(truncatingIfNeeded: i) }
        let values: [DBusValue] = [.bytes([]), .bytes(big), .array(element: "y", elements: [.byte(9)])]
        let back = try wireRoundTrip(values)
        #expect(back[0] == .bytes([]))
        #expect(back[1] == .bytes(big))
        #expect(back[2] == .bytes([9]))
    }

    @Test func headersAreReadBack() throws {
        let call = try Message.methodCall(
            destination: "org.ferry.Test", path: "/a/b", interface: "org.ferry.Test1", member: "Do",
            body: [.int32(1)], noReplyExpected: true)
        let parsed = try Message(wireBytes: try call.wireBytes())
        #expect(parsed.kind == .methodCall)
        #expect(parsed.destination == "org.ferry.Test")
        #expect(parsed.path == "/a/b")
        #expect(parsed.interface == "org.ferry.Test1")
        #expect(parsed.member == "Do")
        #expect(parsed.serial == call.serial && call.serial != 0)
        #expect(parsed.noReplyExpected)
        #expect(parsed.signature == "i")

        let reply = try Message.methodReturn(replyingTo: parsed, body: ["ok"])
        #expect(reply.kind == .methodReturn)
        #expect(reply.replySerial == call.serial)
        #expect(try reply.body == ["ok"])

        let error = try Message.error(replyingTo: parsed, name: .accessDenied, message: "no\0way")
        #expect(error.kind == .error)
        #expect(error.errorName == .accessDenied)
        #expect(error.error == DBusError(.accessDenied, "no\u{FFFD}way"))

        let signal = try Message.signal(path: "/a", interface: "org.ferry.Test1", member: "Changed",
                                        body: [.uint32(3)])
        let parsedSignal = try Message(wireBytes: try signal.wireBytes())
        #expect(parsedSignal.kind == .signal)
        #expect(parsedSignal.member == "Changed")
        #expect(parsedSignal.replySerial == nil)
        #expect(try parsedSignal.body == [.uint32(3)])
    }
}

@Suite struct ValueEqualityTests {
    @Test func byteArraysEqualTheirBytesForm() {
        let bytes = DBusValue.bytes([1, 2])
        let array = DBusValue.array(element: "y", elements: [.byte(1), .byte(2)])
        #expect(bytes == array)
        #expect(Set([bytes, array]).count == 1)
        #expect(DBusValue.array(of: .byte, [.byte(1)]) == .bytes([1]))
        #expect(bytes != .array(element: "q", elements: [.uint16(1), .uint16(2)]))
    }

    @Test func doublesCompareByBits() {
        #expect(DBusValue.double(.nan) == .double(.nan))
        #expect(DBusValue.double(-0.0) != .double(0.0))
        #expect(Set([DBusValue.double(.nan), .double(.nan)]).count == 1)
    }

    @Test func anOptionsDictionaryConvertsAndAnotherDictionaryIsRefused() throws {
        let options = DBusValue.dictionary(key: "s", value: "v", entries: [
            DBusDictionaryEntry(key: .string("fd"), value: .variant(.boolean(true))),
            DBusDictionaryEntry(key: .string("n"), value: .variant(.uint64(1))),
            DBusDictionaryEntry(key: .string("n"), value: .variant(.uint64(2))),
        ])
        #expect(try options.get([String: DBusValue].self) == ["fd": .boolean(true), "n": .uint64(2)],
                "unwrapped from their variants; a repeated key keeps its last value")
        let strings = DBusValue.dictionary(key: "s", value: "s", entries: [DBusDictionaryEntry(key: .string("a"), value: .string("b"))])
        #expect(throws: DBusError.self) { try strings.get([String: DBusValue].self) }
        #expect(try strings.get([String: String].self) == ["a": "b"])
        #expect(throws: DBusError.self) { try options.get([String: String].self) }
    }

    @Test func emptyContainersDifferByType() {
        #expect(DBusValue.array(element: "s", elements: []) != .array(element: "i", elements: []))
        #expect(DBusValue.dictionary(key: "s", value: "v", entries: []) != .dictionary(key: "s", value: "s", entries: []))
        #expect(DBusValue.variant(.int32(1)) != .int32(1))
        #expect(DBusValue.variant(.variant(.int32(1))).unwrappingVariants == .int32(1))
    }
}
