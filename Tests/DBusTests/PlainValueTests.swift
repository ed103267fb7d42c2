import FerryTestSupport
import Testing
@testable import DBus

/// `Message.plainDictionaries(of:)`: an `aa{sv}` read straight from the bytes must give what
/// the same body read as `DBusValue`s gives, in both byte orders and from libdbus's form; stop
/// (nil) at what the type has no shape for; and refuse malformed bytes with a named error.
@Suite struct PlainValueTests {
    /// What the reader gives, case by case; a signature has no shape here.
    private indirect enum Plain: DBusPlainValue, Equatable {
        case basic(DBusValue), bytes([UInt8]), strings([String]), elements([Plain]), entries([String: Plain])

        init?(basic value: DBusValue) {
            if case .signature = value { return nil }
            self = .basic(value)
        }
        init(bytes: UnsafeRawBufferPointer) { self = .bytes(Array(bytes)) }
        init(strings: [String]) { self = .strings(strings) }
        init(elements: [Plain]) { self = .elements(elements) }
        init(entries: [String: Plain]) { self = .entries(entries) }

        /// The same value made from a `DBusValue`, by the rules ``DBusPlainValue`` states; nil
        /// for what has no shape.
        static func expected(_ value: DBusValue) -> Plain? {
            switch value {
            case .variant(let inner): return expected(inner)
            case .unixFD, .structure, .signature: return nil
            case .bytes(let bytes): return .bytes(bytes)
            case .array(let element, let elements) where element == .byte:
                return .bytes(elements.map { if case .byte(let b) = $0 { b } else { 0 } })
            case .array(let element, let elements) where element == .string || element == .objectPath:
                return .strings(elements.map { if case .string(let s) = $0 { s } else if case .objectPath(let p) = $0 { p.rawValue } else { "" } })
            case .array(_, let elements):
                var out: [Plain] = []
                for element in elements {
                    guard let plain = expected(element) else { return nil }
                    out.append(plain)
                }
                return .elements(out)
            case .dictionary(let key, _, let pairs):
                guard key == .string else { return nil }
                var out: [String: Plain] = [:]
                for pair in pairs {
                    guard case .string(let name) = pair.key, let plain = expected(pair.value) else { return nil }
                    out[name] = plain
                }
                return .entries(out)
            default: return .basic(value)
            }
        }
    }

    private static let header = WireWriter.Header(kind: .methodReturn, flags: WireWriter.noReplyExpected,
                                                  replySerial: 3, destination: ":1.7")

    /// `dictionaries` as an `aa{sv}` body.
    private static func listing(_ dictionaries: [[String: DBusValue]]) -> [DBusValue] {
        [.array(element: "a{sv}", elements: dictionaries.map { dictionary in
            .dictionary(key: .string, value: .variant, entries: dictionary.sorted { $0.key < $1.key }.map {
                DBusDictionaryEntry(key: .string($0.key), value: .variant($0.value))
            })
        })]
    }

    /// The body in every form a message takes: built in Swift, in the other byte order and
    /// parsed from bytes no library checked, and built by libdbus.
    private static func forms(_ body: [DBusValue]) throws -> [Message] {
        let swift = try Message.build(header, body: body, marshaller: .swift)
        let bigEndian = try Message.build(header, body: body, marshaller: .swiftBigEndian)
        let parsed = try Message(WireMessage(parsing: bigEndian.wireBytes(), fds: []))
        let libdbus = try Message.build(header, body: body, marshaller: .libdbus)
        return [swift, parsed, libdbus]
    }

    private static let everyShape: [[String: DBusValue]] = [
        ["y": .byte(200), "b": .boolean(true), "n": .int16(-2), "q": .uint16(65535), "i": .int32(.min),
         "u": .uint32(.max), "x": .int64(.min), "t": .uint64(.max), "d": .double(-0.5), "s": .string("grüße"),
         "o": .objectPath("/org/ferry/Scenes1/s1")],
        ["ay": .bytes([0, 1, 255]), "empty ay": .bytes([]), "as": .array(element: "s", elements: [.string("a"), .string("")]),
         "ao": .array(element: "o", elements: [.objectPath("/"), .objectPath("/a")]),
         "av": .array(element: "v", elements: [.variant(.int32(1)), .variant(.string("two")), .variant(.bytes([3]))]),
         "ai": .array(element: "i", elements: [.int32(4), .int32(-4)]), "ax": .array(element: "x", elements: [])],
        ["a{sv}": .variantDictionary(["frame": .variantDictionary(["x": .double(1), "y": .double(2)]), "none": .variantDictionary([:])]),
         "a{ss}": .dictionary(key: "s", value: "s", entries: [DBusDictionaryEntry(key: .string("k"), value: .string("v"))]),
         "aa{sv}": .array(element: "a{sv}", elements: [.variantDictionary(["n": .int32(1)]), .variantDictionary([:])]),
         "vv": .variant(.variant(.uint64(9)))],
        [:],
    ]

    @Test func everyPlainShapeReadsAsItsValueDoesInEveryForm() throws {
        let body = Self.listing(Self.everyShape)
        let expected = try #require(Plain.expected(body[0]))
        for message in try Self.forms(body) {
            let read = try #require(try message.plainDictionaries(of: Plain.self))
            #expect(Plain.elements(read.map(Plain.entries)) == expected)
            #expect(try message.body == body)
        }
    }

    @Test func anEmptyListingReadsAsNoDictionaries() throws {
        for message in try Self.forms(Self.listing([])) {
            #expect(try message.plainDictionaries(of: Plain.self) == [])
        }
    }

    @Test func aKeyGivenTwiceKeepsItsLastValue() throws {
        let body: [DBusValue] = [.array(element: "a{sv}", elements: [.dictionary(key: .string, value: .variant, entries: [
            DBusDictionaryEntry(key: .string("k"), value: .variant(.int32(1))),
            DBusDictionaryEntry(key: .string("k"), value: .variant(.int32(2))),
        ])])]
        for message in try Self.forms(body) {
            #expect(try message.plainDictionaries(of: Plain.self) == [["k": .basic(.int32(2))]])
        }
    }

    @Test("what has no plain shape stops the read with nil, for the caller to read values",
          arguments: [
              ["struct": DBusValue.structure([.int32(1), .string("a")])],
              ["deep struct": .array(element: "v", elements: [.variant(.structure([.byte(1)]))])],
              ["int keys": .dictionary(key: "i", value: "s", entries: [DBusDictionaryEntry(key: .int32(1), value: .string("a"))])],
              ["signature": .signature("a{sv}")],
          ] as [[String: DBusValue]])
    func notPlain(_ dictionary: [String: DBusValue]) throws {
        for message in try Self.forms(Self.listing([["fine": .string("yes")], dictionary])) {
            #expect(try message.plainDictionaries(of: Plain.self) == nil)
        }
    }

    @Test func anotherSignatureIsNotReadAsAListing() throws {
        for body: [DBusValue] in [[.variantDictionary(["k": .int32(1)])], [], Self.listing([]) + [.string("more")],
                                  [.array(element: "a{ss}", elements: [])]] {
            for message in try Self.forms(body) {
                #expect(try message.plainDictionaries(of: Plain.self) == nil)
            }
        }
    }

    @Test func aUnixFDIsNeverReadHowEverTheMessageHoldsIt() throws {
        let pipe = try FileDescriptor.pipe()
        let libdbus = try Message.build(Self.header, body: Self.listing([["fd": .unixFD(pipe.read)]]), marshaller: .libdbus)
        // libdbus holds it: the read does not start.
        #expect(try libdbus.plainDictionaries(of: Plain.self) == nil)
        // Bytes with the fd beside them, as a direct connection receives them: the reader stops
        // before duplicating it.
        let received = try Message(WireMessage(parsing: libdbus.wireBytes(), fds: [pipe.read]))
        #expect(try received.plainDictionaries(of: Plain.self) == nil)
        #expect(try received.body.count == 1)
    }

    @Test func malformedBytesAreRefusedWithANamedError() throws {
        let bytes = try Message.build(Self.header, body: Self.listing([["s": .string("abc")]]), marshaller: .swift).wireBytes()
        for (why, byte) in [("not UTF-8", UInt8(0xFF)), ("a NUL inside", UInt8(0))] {
            var corrupt = bytes
            corrupt[corrupt.count - 3] = byte
            let message = try Message(WireMessage(parsing: corrupt, fds: []))
            #expect(throws: DBusError.self, Comment(rawValue: why)) { _ = try message.plainDictionaries(of: Plain.self) }
        }
    }

    @Test func variantsNestedPast64LevelsAreRefusedNotRecursedInto() throws {
        // The listing's array, a dictionary (2), then variants: 61 more reach 64 levels.
        func listing(_ levels: Int) throws -> Message {
            var value = DBusValue.int32(1)
            for _ in 0..<levels { value = .variant(value) }
            let bytes = try Message.build(Self.header, body: Self.listing([["k": value]]), marshaller: .swift).wireBytes()
            return try Message(WireMessage(parsing: bytes, fds: []))
        }
        #expect(try listing(60).plainDictionaries(of: Plain.self) == [["k": .basic(.int32(1))]])
        #expect(throws: DBusError.self) { _ = try listing(61).plainDictionaries(of: Plain.self) }
    }

    @Test("random corruption is refused, or read as the values read it; never a crash")
    func corruption() throws {
        let bytes = try Message.build(Self.header, body: Self.listing(Self.everyShape), marshaller: .swift).wireBytes()
        var random = SplitMix64(seed: 27)
        var read = 0
        for _ in 0..<2_000 {
            let corrupt = random.corrupting(bytes)
            guard let message = try? Message(WireMessage(parsing: corrupt, fds: [])),
                  let plain = try? message.plainDictionaries(of: Plain.self) else { continue }
            // What was read must be what the value reader makes of the same bytes.
            let values = try message.body
            #expect(Plain.elements(plain.map(Plain.entries)) == Plain.expected(values[0]))
            read += 1
        }
        #expect(read > 0)
    }
}
