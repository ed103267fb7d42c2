import DBus
import FerryBus
import FerryModel
import Foundation
import Testing

/// The one mapping between wire values and D-Bus values: every case, widening, and errors that
/// name the key path instead of trapping.
@Suite("FerryBus: WireValue ↔ DBusValue")
struct FerryBusTests {
    static let everyCase: [String: WireValue] = [
        "b": .bool(true), "i": .int32(.min), "x": .int64(.max), "u": .uint32(.max), "t": .uint64(.max),
        "d": .double(-0.0), "nan": .double(.nan), "s": .string("é\u{1F600}"), "empty": .string(""),
        "y": .bytes(Data([0, 255])), "noBytes": .bytes(Data()), "S": .strings(["", "a"]), "noStrings": .strings([]),
        "v": .array([.int32(1), .string("two"), .array([]), .dictionary(["k": .bool(false)])]),
        "e": .dictionary(["inner": .dictionary(["deeper": .strings(["x"])])]), "noEntries": .dictionary([:]),
    ]

    /// `{outer: {inner: ["ok", <a signature>]}}`.
    static var nestedBadValue: DBusValue {
        let inner: [String: DBusValue] = [
            "inner": .array(element: .variant, elements: [.variant(.string("ok")), .variant(.signature(.string))]),
        ]
        let outer: [String: DBusValue] = ["outer": inner.dbusValue]
        return outer.dbusValue
    }

    @Test func everyWireCaseRoundTrips() throws {
        for (key, value) in Self.everyCase {
            let back = try WireValue(dbusValue: value.dbusValue)
            // Doubles compare by bit pattern on the bus; NaN and -0.0 must survive exactly.
            #expect(back.dbusValue == value.dbusValue, "\(key)")
            #expect(back.signature == value.signature, "\(key)")
        }
        let dictionary = try [String: WireValue](dbusValue: Self.everyCase.dbusValue)
        #expect(dictionary.dbusValue == Self.everyCase.dbusValue)
        #expect(dictionary.count == Self.everyCase.count)
    }

    @Test func signaturesOnTheBus() {
        let expected: [String: String] = [
            "b": "b", "i": "i", "x": "x", "u": "u", "t": "t", "d": "d", "s": "s", "y": "ay", "S": "as", "v": "av",
            "e": "a{sv}",
        ]
        for (key, signature) in expected {
            #expect(Self.everyCase[key]?.dbusValue.signature.rawValue == signature, "\(key)")
            #expect(Self.everyCase[key]?.signature == signature, "\(key)")
        }
    }

    @Test func dictionariesMarshalWithSortedKeys() {
        let value: [String: WireValue] = ["b": .int32(2), "a": .int32(1), "c": .int32(3)]
        guard case .dictionary(let key, let valueType, let entries) = value.dbusValue else {
            Issue.record("not a dictionary")
            return
        }
        #expect(key == .string && valueType == .variant)
        #expect(entries.map(\.key) == [.string("a"), .string("b"), .string("c")])
        #expect(entries.allSatisfy { if case .variant = $0.value { true } else { false } })
    }

    @Test func narrowerTypesWiden() throws {
        let path: ObjectPath = "/org/ferry/Scenes/x"
        let cases: [(DBusValue, WireValue)] = [
            (.byte(200), .uint32(200)),
            (.int16(-3), .int32(-3)),
            (.uint16(65535), .uint32(65535)),
            (.objectPath(path), .string("/org/ferry/Scenes/x")),
            (.variant(.variant(.int64(7))), .int64(7)),
            (.array(element: .objectPath, elements: [.objectPath(path)]), .strings(["/org/ferry/Scenes/x"])),
            // `ay` spelled as an array of bytes is still bytes (DBusValue counts both as equal).
            (.array(element: .byte, elements: [.byte(1), .byte(2)]), .bytes(Data([1, 2]))),
            (.array(element: .byte, elements: []), .bytes(Data())),
            (.array(element: .int16, elements: [.int16(1)]), .array([.int32(1)])),
            (.dictionary(key: .string, value: .string, entries: [DBusDictionaryEntry(key: .string("k"), value: .string("v"))]),
             .dictionary(["k": .string("v")])),
        ]
        for (input, expected) in cases {
            #expect(try WireValue(dbusValue: input) == expected, "\(input)")
        }
    }

    @Test func valuesWithoutAWireShapeAreNamedErrors() throws {
        let (read, write) = try FileDescriptor.pipe()
        defer { read.close(); write.close() }
        let cases: [(DBusValue, String?)] = [
            (.unixFD(read), nil),
            (.signature(.string), nil),
            (.structure([.int32(1)]), nil),
            (.array(element: .variant, elements: [.variant(.int32(1)), .variant(.structure([.int32(1)]))]), "[1]"),
            // An `as` or `ay` whose element does not match its signature.
            (.array(element: .string, elements: [.string("a"), .int32(1)]), "[1]"),
            (.array(element: .byte, elements: [.byte(1), .int32(1)]), "[1]"),
            (Self.nestedBadValue, "outer.inner[1]"),
            (.dictionary(key: .int32, value: .variant, entries: [DBusDictionaryEntry(key: .int32(1), value: .variant(.int32(1)))]), nil),
        ]
        for (input, keyPath) in cases {
            let error = #expect(throws: FerryModelError.self, "\(input)") { _ = try WireValue(dbusValue: input) }
            #expect(error?.code == .invalidArgument)
            #expect(error?.keyPath == keyPath, "\(input)")
        }
        // The key path given is put in front.
        let nested = #expect(throws: FerryModelError.self) {
            _ = try WireValue(dbusValue: .structure([]), keyPath: "options.userActivity")
        }
        #expect(nested?.keyPath == "options.userActivity")
        let inDictionary = #expect(throws: FerryModelError.self) {
            _ = try [String: WireValue](dbusValue: ["a": DBusValue.structure([.byte(1)])].dbusValue, keyPath: "changes")
        }
        #expect(inDictionary?.keyPath == "changes.a")
        // Something that is not a dictionary at all, where one is expected.
        let notADictionary = #expect(throws: FerryModelError.self) {
            _ = try [String: WireValue](dbusValue: .variant(.string("x")), keyPath: "options")
        }
        #expect(notADictionary?.keyPath == "options")
    }

    @Test func wireCodableValuesNameTheirKeysUnderTheKeyPath() throws {
        var activity = try UserActivity(activityType: "org.ferry.notes.open-note")
        activity.title = "Groceries"
        #expect(try UserActivity(dbusValue: try activity.dbusValue()) == activity)
        let missing = #expect(throws: FerryModelError.self) {
            _ = try UserActivity(dbusValue: [String: DBusValue]().dbusValue, keyPath: "options.userActivity")
        }
        #expect(missing?.keyPath == "options.userActivity.activityType")
        let wrongType = #expect(throws: FerryModelError.self) {
            _ = try UserActivity(dbusValue: ["activityType": DBusValue.int32(1)].dbusValue)
        }
        #expect(wrongType?.keyPath == "activityType")
    }
}
