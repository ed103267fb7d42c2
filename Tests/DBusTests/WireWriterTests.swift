import FerryTestSupport
import Testing
@testable import DBus

/// The Swift marshaller (`WireWriter`) against libdbus's own: the same header and, byte for
/// byte, the same body, for chosen bodies and for random ones; and the Swift reader
/// (`WireReader`) against libdbus's iterators, in both byte orders.
@Suite struct WireWriterTests {
    /// The message both ways, with what each puts on the wire.
    private func both(_ header: WireWriter.Header, _ body: [DBusValue]) throws -> (swift: Message, libdbus: Message) {
        (try Message.build(header, body: body, marshaller: .swift),
         try Message.build(header, body: body, marshaller: .libdbus))
    }

    /// The body bytes of a marshalled message: its last `body length` bytes.
    private func bodyBytes(_ message: Message) throws -> [UInt8] {
        let bytes = try message.wireBytes()
        let length = Int(bytes[4]) | Int(bytes[5]) << 8 | Int(bytes[6]) << 16 | Int(bytes[7]) << 24
        return Array(bytes.suffix(length))
    }

    private func expectAgreement(_ body: [DBusValue], _ header: WireWriter.Header = call,
                                 sourceLocation: SourceLocation = #_sourceLocation) throws {
        let (swift, libdbus) = try both(header, body)
        #expect(try bodyBytes(swift) == bodyBytes(libdbus), "body \(body)", sourceLocation: sourceLocation)
        #expect(swift.signature == libdbus.signature, sourceLocation: sourceLocation)
        #expect(try swift.body == body, sourceLocation: sourceLocation)
    }

    private static let call = WireWriter.Header(kind: .methodCall, path: "/org/ferry/Test",
                                                interface: "org.ferry.Test1", member: "Do", destination: ":1.7")

    @Test func headersAgree() throws {
        let headers = [
            Self.call,
            WireWriter.Header(kind: .methodCall, flags: WireWriter.noReplyExpected,
                              path: "/", member: "M"),
            WireWriter.Header(kind: .methodReturn, flags: WireWriter.noReplyExpected,
                              replySerial: 77, destination: ":1.42"),
            WireWriter.Header(kind: .error, flags: WireWriter.noReplyExpected,
                              errorName: "org.ferry.Error.NotFound", replySerial: 9, destination: ":1.42"),
            WireWriter.Header(kind: .signal, flags: WireWriter.noReplyExpected,
                              path: "/org/ferry/Broker", interface: "org.ferry.Broker1", member: "Changed"),
        ]
        for header in headers {
            for body: [DBusValue] in [[], [.string("x")], [.byte(1), .int64(-2)]] {
                let (swift, libdbus) = try both(header, body)
                #expect(swift.kind == libdbus.kind)
                #expect(swift.path == libdbus.path)
                #expect(swift.interface == libdbus.interface)
                #expect(swift.member == libdbus.member)
                #expect(swift.errorName == libdbus.errorName)
                #expect(swift.replySerial == libdbus.replySerial)
                #expect(swift.destination == libdbus.destination)
                #expect(swift.noReplyExpected == libdbus.noReplyExpected)
                #expect(swift.signature == libdbus.signature)
                #expect(swift.serial >= 0x8000_0000 && libdbus.serial >= 0x8000_0000)
                #expect(try bodyBytes(swift) == bodyBytes(libdbus))
            }
        }
    }

    @Test func everyTypeAndPaddingAgree() throws {
        try expectAgreement([.byte(7), .boolean(true), .int16(-3), .uint16(65535), .int32(.min), .uint32(.max),
                             .int64(.min), .uint64(.max), .double(-0.5), .string("héllo"), .objectPath("/a/b"),
                             .signature("a{sv}(iy)")])
        // Padding before 8-aligned values inside arrays, and before an empty array's first element.
        try expectAgreement([.byte(1), .array(element: "x", elements: [])])
        try expectAgreement([.byte(1), .array(element: "t", elements: [.uint64(1), .uint64(2)])])
        try expectAgreement([.byte(1), .array(element: "(yd)", elements: [.structure([.byte(2), .double(3)])])])
        try expectAgreement([.byte(1), .dictionary(key: "s", value: "v", entries: [])])
        try expectAgreement([.string("a"), .variantDictionary(["n": .int32(4), "s": .string("t"),
                                                               "a": .bytes([1, 2, 3]), "v": .variant(.int64(5))])])
        try expectAgreement([.bytes([]), .bytes((0..<200).map(UInt8.init)), .array(element: "y", elements: [.byte(9)])])
        try expectAgreement([.uint32(0), .variant(.structure([.byte(1), .variant(.array(element: "ay",
                                                                                   elements: [.bytes([4])]))]))])
        try expectAgreement([.array(element: "a{sv}",
                                    elements: [.variantDictionary([:]), .variantDictionary(["k": .boolean(false)])])])
    }

    @Test func randomBodiesAgree() throws {
        var random = SplitMix64(seed: 0xF_E77)
        for _ in 0..<400 {
            let body = (0..<random.next(upTo: 5)).map { _ in Self.randomValue(&random, depth: 0) }
            try expectAgreement(body)
        }
    }

    /// The body read in Swift (`WireReader`) and through libdbus's iterators, from a message
    /// libdbus parsed, in either byte order.
    private func expectReadersAgree(_ body: [DBusValue], sourceLocation: SourceLocation = #_sourceLocation) throws {
        for marshaller in [Message.Marshaller.swift, .swiftBigEndian] {
            let built = try Message.build(Self.call, body: body, marshaller: marshaller)
            let parsed = try Message(wireBytes: try built.wireBytes())
            let (swift, libdbus) = try parsed.withRaw { raw in
                (try WireReader.readBody(of: raw), try MessageReader.readBody(of: raw))
            }
            #expect(swift == body, "\(marshaller)", sourceLocation: sourceLocation)
            #expect(libdbus == body, "\(marshaller)", sourceLocation: sourceLocation)
        }
    }

    @Test func readersAgreeInBothByteOrders() throws {
        try expectReadersAgree([.byte(7), .boolean(true), .int16(-3), .uint16(65535), .int32(.min), .uint32(.max),
                                .int64(.min), .uint64(.max), .double(-0.5), .string("héllo"), .objectPath("/a/b"),
                                .signature("a{sv}(iy)"), .bytes([1, 2, 3]), .variantDictionary(["n": .int32(4)])])
        var random = SplitMix64(seed: 0xB16)
        for _ in 0..<300 {
            try expectReadersAgree((0..<random.next(upTo: 5)).map { _ in Self.randomValue(&random, depth: 0) })
        }
    }

    @Test func aBodyWithFDsIsLeftToLibdbus() throws {
        let (reader, writer) = try FileDescriptor.pipe()
        defer { withExtendedLifetime(writer) {} }
        // At the top level, and hidden in a variant, where the signature does not show it.
        for body: [DBusValue] in [[.unixFD(reader), .string("s")], [.variantDictionary(["fd": .unixFD(reader)])]] {
            let message = try Message.build(Self.call, body: body)
            #expect(try message.withRaw { try WireReader.readBody(of: $0) } == nil)
            #expect(try message.body.count == body.count)
        }
    }

    @Test func largeAndFDBodiesGoThroughLibdbus() throws {
        // Above the limit the body is libdbus's; the message is the same either way.
        let big = [UInt8](repeating: 0xAB, count: Message.wireWriterLimit + 1)
        let message = try Message.build(Self.call, body: [.bytes(big)])
        #expect(try message.body == [.bytes(big)])
        let (reader, writer) = try FileDescriptor.pipe()
        let withFD = try Message.build(Self.call, body: [.unixFD(reader), .string("s")])
        #expect(withFD.signature == "hs")
        withExtendedLifetime(writer) {}
    }

    // MARK: Random values

    private static func randomValue(_ random: inout SplitMix64, depth: Int) -> DBusValue {
        let kinds = depth < 3 ? 18 : 13
        switch random.next(upTo: kinds) {
        case 0: return .byte(UInt8(truncatingIfNeeded: random.next()))
        case 1: return .boolean(random.next() & 1 == 0)
        case 2: return .int16(Int16(truncatingIfNeeded: random.next()))
        case 3: return .uint16(UInt16(truncatingIfNeeded: random.next()))
        case 4: return .int32(Int32(truncatingIfNeeded: random.next()))
        case 5: return .uint32(UInt32(truncatingIfNeeded: random.next()))
        case 6: return .int64(Int64(bitPattern: random.next()))
        case 7: return .uint64(random.next())
        case 8: return .double(Double(Int64(bitPattern: random.next())) / 3)
        case 9: return .string(String(repeating: "ü", count: random.next(upTo: 9)))
        case 10: return .objectPath(ObjectPath(unchecked: random.next() % 2 == 0 ? "/" : "/a/x\(random.next(upTo: 9))"))
        case 11: return .signature(["", "v", "a{sv}", "(yxs)"][random.next(upTo: 4)])
        case 12: return .bytes((0..<random.next(upTo: 12)).map { UInt8($0) })
        case 13:
            let count = random.next(upTo: 4)
            return .array(element: "x", elements: (0..<count).map { _ in .int64(Int64(bitPattern: random.next())) })
        case 14:
            let count = random.next(upTo: 3)
            let elements = (0..<count).map { _ in DBusValue.variant(randomValue(&random, depth: depth + 1)) }
            return .array(element: "v", elements: elements)
        case 15:
            let entries = (0..<random.next(upTo: 4)).map { i in
                DBusDictionaryEntry(key: .string("k\(i)"), value: .variant(randomValue(&random, depth: depth + 1)))
            }
            return .dictionary(key: "s", value: "v", entries: entries)
        case 16:
            return .structure((0..<(1 + random.next(upTo: 3))).map { _ in randomValue(&random, depth: depth + 1) })
        default:
            return .variant(randomValue(&random, depth: depth + 1))
        }
    }
}
