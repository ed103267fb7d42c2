import Foundation
import Testing
@testable import DBus

private struct Point: Codable, Equatable {
    var x: Int32
    var y: Int32
}

private struct Item: Codable, Equatable {
    enum Kind: String, Codable { case text, image }
    var name: String
    var kind: Kind
    var size: UInt64
    var ratio: Double
    var tags: [String]
    var origin: Point
    var payload: Data
    var counts: [String: Int32]
    var path: ObjectPath
    var note: String?
}

private let sample = Item(
    name: "photo.png", kind: .image, size: 1234, ratio: 1.5, tags: ["a", "b"], origin: Point(x: 1, y: -2),
    payload: Data([0, 1, 2]), counts: ["k": 3], path: "/org/ferry/Item/1", note: nil)

@Suite struct CodableBridgeTests {
    @Test func structLayoutMakesADBusStruct() throws {
        let value = try DBusEncoder(layout: .structure).encode(sample)
        #expect(value.signature == "(sstdas(ii)aya{si}o)")
        let back = try wireRoundTrip([value])
        #expect(try DBusDecoder().decode(Item.self, from: back[0]) == sample)
    }

    @Test func trailingOptionalInStructLayout() throws {
        var withNote = sample
        withNote.note = "hello"
        let value = try DBusEncoder().encode(withNote)
        #expect(value.signature == "(sstdas(ii)aya{si}os)")
        #expect(try DBusDecoder().decode(Item.self, from: value) == withNote)
    }

    @Test func dictionaryLayoutMakesAnASVWithOptionalsAbsent() throws {
        let value = try DBusEncoder(layout: .dictionary).encode(sample)
        #expect(value.signature == "a{sv}")
        let back = try wireRoundTrip([value])[0]
        let dict = try VariantDictionary(dbusValue: back)
        #expect(dict["note"] == nil)
        #expect(Set(dict.keys) == ["name", "kind", "size", "ratio", "tags", "origin", "payload", "counts", "path"])
        #expect(try dict.value(forKey: "size", as: UInt64.self) == 1234)
        #expect(dict["origin"]?.signature == "a{sv}")
        #expect(try DBusDecoder(layout: .dictionary).decode(Item.self, from: back) == sample)
    }

    @Test func unknownKeysAreIgnored() throws {
        var dict = try VariantDictionary(dbusValue: try DBusEncoder(layout: .dictionary).encode(Point(x: 5, y: 6)))
        dict["z"] = .string("from a newer peer")
        dict.set("w", to: [1.0, 2.0])
        #expect(try DBusDecoder(layout: .dictionary).decode(Point.self, from: dict.dbusValue) == Point(x: 5, y: 6))
    }

    @Test func typeMismatchNamesBothSignatures() throws {
        let wrong = DBusValue.variantDictionary(["x": .uint32(5), "y": .int32(6)])
        let message = expectDBusError(.invalidArgs) {
            _ = try DBusDecoder(layout: .dictionary).decode(Point.self, from: wrong)
        }
        #expect(message?.contains("'i'") == true)
        #expect(message?.contains("'u'") == true)
        #expect(message?.contains("x") == true)

        let notAStruct = expectDBusError(.invalidArgs) { _ = try DBusDecoder().decode(Point.self, from: .string("p")) }
        #expect(notAStruct?.contains("'s'") == true)

        let missing = expectDBusError(.invalidArgs) {
            _ = try DBusDecoder(layout: .dictionary).decode(Point.self, from: .variantDictionary(["x": .int32(1)]))
        }
        #expect(missing?.contains("'y'") == true)
    }

    @Test func emptyStructIsAnError() {
        struct Empty: Codable {}
        expectDBusError(.invalidValue) { _ = try DBusEncoder().encode(Empty()) }
        #expect(throws: Never.self) { _ = try DBusEncoder(layout: .dictionary).encode(Empty()) }
    }

    @Test func arraysOfStructsAndEmptyArraysOfRepresentables() throws {
        struct Bag: Codable, Equatable { var points: [Point]; var ids: [UInt32] }
        let full = Bag(points: [Point(x: 1, y: 2), Point(x: 3, y: 4)], ids: [])
        let value = try DBusEncoder().encode(full)
        #expect(value.signature == "(a(ii)au)")
        #expect(try DBusDecoder().decode(Bag.self, from: try wireRoundTrip([value])[0]) == full)
    }
}

private struct Pair: Codable, Equatable, DBusSignatureProviding {
    static let dbusSignature: Signature = "(ii)"
    var a: Int32
    var b: Int32
}

@Suite struct CodableShapeTests {
    @Test func emptyArraysTakeTheDeclaredElementType() throws {
        struct Holder: Codable, Equatable { var pairs: [Pair]; var points: [Point] }
        let value = try DBusEncoder().encode(Holder(pairs: [], points: []))
        #expect(value.signature == "(a(ii)av)")
        #expect(try DBusDecoder().decode(Holder.self, from: try wireRoundTrip([value])[0]) == Holder(pairs: [], points: []))
    }

    @Test func smallNumbersAndEnumsMapToDBusTypes() throws {
        struct Numbers: Codable, Equatable {
            enum Mode: String, Codable { case on, off }
            var small: Int8
            var ratio: Float
            var mode: Mode
            var big: UInt
        }
        let numbers = Numbers(small: -3, ratio: 0.5, mode: .off, big: .max)
        let value = try DBusEncoder().encode(numbers)
        #expect(value.signature == "(ndst)")
        #expect(try DBusDecoder().decode(Numbers.self, from: try wireRoundTrip([value])[0]) == numbers)
        let badMode = DBusValue.structure([.int16(1), .double(1), .string("sideways"), .uint64(1)])
        expectDBusError(.invalidArgs) { _ = try DBusDecoder().decode(Numbers.self, from: badMode) }
    }

    @Test func dictionariesOfStructs() throws {
        let map = ["one": Point(x: 1, y: 1), "two": Point(x: 2, y: 2)]
        let asStruct = try DBusEncoder().encode(map)
        #expect(asStruct.signature == "a{sv}")
        #expect(try DBusDecoder().decode([String: Point].self, from: try wireRoundTrip([asStruct])[0]) == map)
        let list = [Point(x: 1, y: 2)]
        let nested = try DBusEncoder(layout: .dictionary).encode(list)
        #expect(nested.signature == "aa{sv}")
        #expect(try DBusDecoder(layout: .dictionary).decode([Point].self, from: nested) == list)
    }

    @Test func mixedArraysNeedTheDictionaryLayout() throws {
        enum Either: Encodable {
            case number(Int32), text(String)
            func encode(to encoder: any Encoder) throws {
                var c = encoder.singleValueContainer()
                switch self {
                case .number(let n): try c.encode(n)
                case .text(let t): try c.encode(t)
                }
            }
        }
        let mixed = [Either.number(1), .text("a")]
        expectDBusError(.invalidValue) { _ = try DBusEncoder().encode(mixed) }
        let value = try DBusEncoder(layout: .dictionary).encode(mixed)
        #expect(value == .array(element: "v", elements: [.variant(.int32(1)), .variant(.string("a"))]))
    }
}

@Suite struct ValueRepresentableTests {
    @Test func basicTypesConvertBothWays() throws {
        #expect(try Int(dbusValue: 42.dbusValue) == 42)
        #expect(42.dbusValue == .int64(42))
        #expect(Int.dbusSignature == "x")
        #expect(try [UInt8](dbusValue: .bytes([1, 2])) == [1, 2])
        #expect([UInt8]([1, 2]).dbusValue == .bytes([1, 2]))
        #expect(Data([9]).dbusValue == .bytes([9]))
        #expect([String: [Int32]].dbusSignature == "a{sai}")
        #expect(try [String: [Int32]](dbusValue: ["a": [Int32(1)]].dbusValue) == ["a": [1]])
        #expect(VariantDictionary.dbusSignature == "a{sv}")
        let message = expectDBusError(.invalidArgs) { _ = try Int32(dbusValue: .string("x")) }
        #expect(message?.contains("'i'") == true && message?.contains("'s'") == true)
    }

    @Test func dictionariesEncodeInKeyOrder() {
        let strings = ["b": Int32(1), "a": 2, "c": 3].dbusValue
        guard case .dictionary(_, _, let entries) = strings else { Issue.record("not a dictionary"); return }
        #expect(entries.map(\.key) == ["a", "b", "c"])
        let numbers = [Int32(10): "x", -5: "y", 2: "z"].dbusValue
        guard case .dictionary(_, _, let numbered) = numbers else { Issue.record("not a dictionary"); return }
        #expect(numbered.map(\.key) == [.int32(-5), .int32(2), .int32(10)])
    }

    @Test func anyErrorConvertsToADBusError() {
        struct Oops: Error {}
        #expect(DBusError(converting: DBusError(.accessDenied, "no")) == DBusError(.accessDenied, "no"))
        #expect(DBusError(converting: Oops()).name == .failed)
    }

    @Test func variantDictionaryHelpers() throws {
        var dict: VariantDictionary = [:]
        dict.set("size", to: UInt64(10))
        dict.set("name", to: "n")
        dict.set("gone", to: Optional<String>.none)
        #expect(dict.count == 2)
        #expect(try dict.value(forKey: "size", as: UInt64.self) == 10)
        #expect(try dict.valueIfPresent(forKey: "missing", as: String.self) == nil)
        let message = expectDBusError(.invalidArgs) { _ = try dict.value(forKey: "size", as: String.self) }
        #expect(message?.contains("size") == true && message?.contains("'t'") == true)
        expectDBusError(.invalidArgs) { _ = try dict.value(forKey: "missing", as: String.self) }
        dict.set("name", to: Optional<String>.none)
        #expect(dict["name"] == nil)
        let back = try VariantDictionary(dbusValue: try wireRoundTrip([dict.dbusValue])[0])
        #expect(back == dict)
    }

    @Test func typedArguments() throws {
        let options: VariantDictionary = ["k": .int32(1)]
        let call = try Message.methodCall(destination: nil, path: "/a", interface: nil, member: "M",
                                          body: ["name", .uint32(7), options.dbusValue])
        let parsed = try Message(wireBytes: try call.wireBytes())
        let (name, flags, back) = try parsed.arguments(as: String.self, UInt32.self, VariantDictionary.self)
        #expect(name == "name" && flags == 7 && back == options)
        let message = expectDBusError(.invalidArgs) { _ = try parsed.arguments(as: String.self, Int32.self) }
        #expect(message?.contains("'si'") == true && message?.contains("'sua{sv}'") == true)
    }
}
