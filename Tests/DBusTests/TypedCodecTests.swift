import FerryTestSupport
import Foundation
import Testing
@testable import DBus

/// The typed codec (`WireCodable`): Swift values marshalled and read straight from the wire
/// bytes must give exactly the bytes and values the `DBusValue` codec and libdbus give, in both
/// byte orders, and refuse what they refuse.
@Suite struct TypedCodecTests {
    private static let header = WireWriter.Header(kind: .methodCall, path: "/org/ferry/Test",
                                                  interface: "org.ferry.Test1", member: "Do", destination: ":1.7")

    /// The body bytes of a marshalled message: its last `body length` bytes, in its own order.
    private func bodyBytes(_ message: Message) throws -> [UInt8] {
        let bytes = try message.wireBytes()
        let field = bytes[4..<8].map(Int.init)
        let length = bytes[0] == UInt8(ascii: "B")
            ? field[3] | field[2] << 8 | field[1] << 16 | field[0] << 24
            : field[0] | field[1] << 8 | field[2] << 16 | field[3] << 24
        return Array(bytes.suffix(length))
    }

    /// The typed message, the same values built from `DBusValue`s by the Swift marshaller and
    /// by libdbus, all three with the same body bytes and signature; and the typed message read
    /// back both ways.
    private func expectAgreement<each T: DBusRepresentable & Equatable>(
        _ values: repeat each T, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        var body: [DBusValue] = []
        for value in repeat each values { body.append(value.dbusValue) }
        let typed = try Message.build(Self.header, values: repeat each values)
        let swift = try Message.build(Self.header, body: body, marshaller: .swift)
        let libdbus = try Message.build(Self.header, body: body, marshaller: .libdbus)
        #expect(try bodyBytes(typed) == bodyBytes(libdbus), sourceLocation: sourceLocation)
        #expect(try bodyBytes(typed) == bodyBytes(swift), sourceLocation: sourceLocation)
        #expect(typed.signature == libdbus.signature, sourceLocation: sourceLocation)
        #expect(try typed.body == body, sourceLocation: sourceLocation)
        let read = try libdbus.arguments(as: repeat (each T).self)
        func same<U: Equatable>(_ got: U, _ sent: U) { #expect(got == sent, sourceLocation: sourceLocation) }
        repeat same(each read, each values)
    }

    @Test func everyWireCodableTypeMarshalsAsTheValueCodecDoes() throws {
        try expectAgreement(UInt8(7), true, Int16(-3), UInt16(65535), Int32.min, UInt32.max, Int64.min, UInt64.max,
                            -0.5, "héllo", "/a/b" as ObjectPath, "a{sv}(iy)" as Signature)
        // Padding: an 8-aligned value after a byte, inside arrays and dictionary entries.
        try expectAgreement(UInt8(1), [Int64](), [UInt64(1), 2], Int(-5), UInt(6))
        try expectAgreement(UInt8(1), [String: DBusValue](), ["b": DBusValue.int32(4), "a": .string("t"),
                                                             "c": .bytes([1, 2, 3]), "v": .variant(.int64(5))])
        try expectAgreement([UInt8](), [UInt8](0..<200), Data([9, 8]), [[UInt8]([1]), []])
        try expectAgreement(UInt8(3), [UInt32(9): ["x", "y"], 1: []], [["k": DBusValue.boolean(false)], [:]])
        try expectAgreement(UInt32(0), DBusValue.structure([.byte(1), .variant(.array(element: "ay", elements: [.bytes([4])]))]))
        try expectAgreement([Int16(-1): 2.5, 300: -1], ["/", "/x"] as [ObjectPath], ["", "v"] as [Signature])
    }

    @Test func typedReadsAgreeInBothByteOrders() throws {
        for marshaller in [Message.Marshaller.swift, .swiftBigEndian] {
            let options: [String: DBusValue] = ["user-action": .boolean(true), "change-count": .uint64(.max),
                                                "nested": .variantDictionary(["deep": .bytes([0, 255])])]
            let built = try Message.build(Self.header, values: UInt32(3), "public.utf8-plain-text", options,
                                          [UInt8](0..<100), -0.25, Int64.min, marshaller: marshaller)
            let parsed = try Message(wireBytes: try built.wireBytes())
            #expect(try parsed.wireBytes()[0] == UInt8(ascii: marshaller == .swift ? "l" : "B"))
            let (index, type, read, bytes, double, int) = try parsed.arguments(
                as: UInt32.self, String.self, [String: DBusValue].self, [UInt8].self, Double.self, Int64.self)
            #expect(index == 3 && type == "public.utf8-plain-text")
            #expect(read == options)
            #expect(bytes == [UInt8](0..<100))
            #expect(double == -0.25 && int == .min)
        }
    }

    @Test func aMismatchNamesBothSignaturesAndReadsNothing() throws {
        let message = try Message.build(Self.header, values: UInt32(1), "s")
        let error = #expect(throws: DBusError.self) { _ = try message.arguments(as: String.self, String.self) }
        #expect(error?.name == .invalidArgs)
        #expect(error?.message.contains("'ss'") == true && error?.message.contains("'us'") == true)
        #expect(throws: DBusError.self) { _ = try message.arguments(as: UInt32.self) }
    }

    @Test func invalidValuesAreRefusedWithNamedErrors() throws {
        let nul = #expect(throws: DBusError.self) { _ = try Message.build(Self.header, values: UInt32(1), "a\u{0}b") }
        #expect(nul?.name == .invalidValue)
        let nested = #expect(throws: DBusError.self) {
            _ = try Message.build(Self.header, values: ["k": DBusValue.string("x\u{0}")])
        }
        #expect(nested?.name == .invalidValue)
        let key = #expect(throws: DBusError.self) { _ = try Message.build(Self.header, values: ["\u{0}": UInt8(1)]) }
        #expect(key?.name == .invalidValue)
    }

    @Test("a typed signature is checked for depth: 32 nested arrays go, 33 are refused")
    func nestingLimit() throws {
        let deepest = try Message.build(Self.header, values: Nested32(), UInt8(1))
        #expect(deepest.signature.rawValue == String(repeating: "a", count: 32) + "yy")
        let parsed = try Message(wireBytes: try deepest.wireBytes())
        #expect(try parsed.arguments(as: Nested32.self, UInt8.self).1 == 1)
        let tooDeep = #expect(throws: DBusError.self) { _ = try Message.build(Self.header, values: Nested33()) }
        #expect(tooDeep?.name == .invalidSignature)
    }

    @Test func valuesTheSwiftMarshallerCannotWriteGoThroughLibdbus() throws {
        let (reader, writer) = try FileDescriptor.pipe()
        defer { withExtendedLifetime(writer) {} }
        // A descriptor: at the top level (no wire form), and inside a variant, found on writing.
        let top = try Message.build(Self.header, values: reader, "s")
        #expect(top.signature == "hs")
        let (fd, text) = try top.arguments(as: FileDescriptor.self, String.self)
        #expect(fd.isOpen && text == "s")
        let inVariant = try Message.build(Self.header, values: ["fd": DBusValue.unixFD(reader)], UInt8(2))
        #expect(inVariant.signature == "a{sv}y")
        let (options, byte) = try inVariant.arguments(as: [String: DBusValue].self, UInt8.self)
        guard case .unixFD(let passed)? = options["fd"] else {
            Issue.record("no fd in \(options)")
            return
        }
        #expect(passed.isOpen && byte == 2)
        // A large byte array: libdbus appends it in fewer copies; the message is the same.
        let big = [UInt8](repeating: 0xAB, count: Message.wireWriterLimit + 1)
        #expect(try Message.build(Self.header, values: big).arguments(as: [UInt8].self) == big)
    }

    @Test func typedMessagesCrossLibdbusParsing() throws {
        // Each typed message is parsed back by libdbus (dbus_message_demarshal validates it
        // fully), so random typed bodies must all survive it.
        var random = SplitMix64(seed: 0x7E9)
        for _ in 0..<200 {
            let strings = (0..<random.next(upTo: 5)).map { _ in "s\(random.next(upTo: 1000))" + String(repeating: "ü", count: random.next(upTo: 4)) }
            var dictionary: [String: DBusValue] = [:]
            for key in strings { dictionary[key] = .uint64(random.next()) }
            let bytes = (0..<random.next(upTo: 40)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            try expectAgreement(UInt8(truncatingIfNeeded: random.next()), strings, dictionary, bytes,
                                Int64(bitPattern: random.next()))
        }
    }

    @Test func marshalledDictionariesLandAsTheirValuesWouldAtAnyAlignment() throws {
        // The second dictionary's first entries end unaligned (a uint16, a byte), so the entries
        // it adds start after padding; the array's elements land at offsets 4 and 0 mod 8.
        let first = try MarshalledDictionary(["b": .int32(4), "a": .string("t"), "nested": .variantDictionary(["x": .bytes([1])])])
        let second = try MarshalledDictionary(["q": .uint16(3), "y": .byte(9)]).adding(["w": .int64(-1), "d": .double(0.5)])
        let empty = try MarshalledDictionary([:])
        let onlyAdded = try empty.adding(["k": .boolean(true)])
        try expectAgreement(UInt8(1), [first, second, empty, onlyAdded], "x", second)
        try expectAgreement(first, UInt32(7), [onlyAdded])
        // Entries keep their order: sorted ones first, added ones after them as given.
        guard case .dictionary(.string, .variant, let entries) = second.dbusValue else {
            Issue.record("not an a{sv}: \(second.dbusValue)")
            return
        }
        #expect(entries.map(\.key) == [.string("q"), .string("y"), .string("w"), .string("d")])
        #expect(try MarshalledDictionary(dbusValue: second.dbusValue) == second)
        #expect(try empty.adding([:]) == empty)
    }

    @Test func aMarshalledDictionaryInTheOtherByteOrderAndItsRefusals() throws {
        // The bytes are this machine's order: a big-endian message takes the value path.
        let dictionary = try MarshalledDictionary(["n": .uint64(.max), "s": .string("é")])
        let built = try Message.build(Self.header, values: [dictionary], marshaller: .swiftBigEndian)
        #expect(try Message(wireBytes: try built.wireBytes()).arguments(as: [MarshalledDictionary].self) == [dictionary])
        let nul = #expect(throws: DBusError.self) { _ = try MarshalledDictionary(["k": .string("a\u{0}")]) }
        #expect(nul?.name == .invalidValue)
        let key = #expect(throws: DBusError.self) { _ = try dictionary.adding(["\u{0}": .byte(1)]) }
        #expect(key?.name == .invalidValue)
        let (reader, writer) = try FileDescriptor.pipe()
        defer { withExtendedLifetime((reader, writer)) {} }
        let fd = #expect(throws: DBusError.self) { _ = try MarshalledDictionary(["fd": .unixFD(reader)]) }
        #expect(fd?.message.contains("unix fd") == true)
        let other = #expect(throws: DBusError.self) { _ = try MarshalledDictionary(dbusValue: .string("a{sv}")) }
        #expect(other?.name == .invalidArgs)
        let mislabelled = DBusValue.dictionary(key: .string, value: .variant,
                                               entries: [DBusDictionaryEntry(key: .int32(1), value: .variant(.byte(2)))])
        let entry = #expect(throws: DBusError.self) { _ = try MarshalledDictionary(dbusValue: mislabelled) }
        #expect(entry?.name == .invalidValue)
    }
}

/// Arrays nested 1 to 33 deep (D-Bus allows 32).
private typealias Nested1 = [UInt8]
private typealias Nested2 = [Nested1]
private typealias Nested3 = [Nested2]
private typealias Nested4 = [Nested3]
private typealias Nested5 = [Nested4]
private typealias Nested6 = [Nested5]
private typealias Nested7 = [Nested6]
private typealias Nested8 = [Nested7]
private typealias Nested9 = [Nested8]
private typealias Nested10 = [Nested9]
private typealias Nested11 = [Nested10]
private typealias Nested12 = [Nested11]
private typealias Nested13 = [Nested12]
private typealias Nested14 = [Nested13]
private typealias Nested15 = [Nested14]
private typealias Nested16 = [Nested15]
private typealias Nested17 = [Nested16]
private typealias Nested18 = [Nested17]
private typealias Nested19 = [Nested18]
private typealias Nested20 = [Nested19]
private typealias Nested21 = [Nested20]
private typealias Nested22 = [Nested21]
private typealias Nested23 = [Nested22]
private typealias Nested24 = [Nested23]
private typealias Nested25 = [Nested24]
private typealias Nested26 = [Nested25]
private typealias Nested27 = [Nested26]
private typealias Nested28 = [Nested27]
private typealias Nested29 = [Nested28]
private typealias Nested30 = [Nested29]
private typealias Nested31 = [Nested30]
private typealias Nested32 = [Nested31]
private typealias Nested33 = [Nested32]
