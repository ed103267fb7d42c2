import DBus
import FerryBus
import FerryModel
import Foundation
import Testing

/// The bus side of the one `a{sv}` reader: D-Bus dictionaries become `WireReader`s whose
/// unknown keys are never looked at (whatever they hold), and whose known keys are named when
/// they hold the wrong thing.
@Suite("FerryBus: WireReader over D-Bus dictionaries")
struct WireReaderBusTests {
    func failure(_ read: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) -> FerryModelError? {
        #expect(throws: FerryModelError.self, sourceLocation: sourceLocation) { try read() }
    }

    @Test func widthsWidenAndVariantsUnwrap() throws {
        let options: VariantDictionary = [
            "byte": .byte(200), "short": .int16(-2), "path": .objectPath("/org/ferry/Scenes"), "flag": .variant(.variant(.boolean(true))),
            "names": .array(element: .objectPath, elements: [.objectPath("/a")]),
        ]
        let wire = WireReader(dbus: options, path: "options")
        #expect(try wire.int64("byte") == 200 && wire.int32("short") == -2)
        #expect(try wire.string("path") == "/org/ferry/Scenes" && wire.bool("flag") == true && wire.strings("names") == ["/a"])
    }

    @Test func valuesWithoutAWireShapeAreIgnoredUntilRead() throws {
        let (read, write) = try FileDescriptor.pipe()
        _ = write
        let options: VariantDictionary = [
            "app": .string("org.example.App"), "future": .structure([.double(1), .double(2)]), "fd": .unixFD(read),
            "location": .structure([.double(10), .double(-4.5)]),
        ]
        let wire = WireReader(dbus: options, path: "options")
        #expect(try wire.string("app") == "org.example.App", "an unknown struct or fd does not spoil the rest")
        let struckFlag = failure { _ = try wire.bool("future") }
        #expect(struckFlag?.keyPath == "options.future" && struckFlag?.code == .invalidArgument)
        #expect(failure { _ = try wire.string("fd") }?.keyPath == "options.fd")
        #expect(try options.descriptor("fd", keyPath: "options.fd") === read)
        #expect(failure { _ = try options.descriptor("app", keyPath: "options.app") }?.message == "expected a file descriptor (h), found s")
        #expect(try options.point("location", keyPath: "options.location") == Point(x: 10, y: -4.5))
        let notFinite: VariantDictionary = ["location": .structure([.double(.infinity), .double(0)])]
        #expect(failure { _ = try notFinite.point("location", keyPath: "info.location") }?.keyPath == "info.location")
        #expect(try options.point("absent", keyPath: "options.absent") == nil)
    }

    @Test func replyValuesThatAreNotDictionariesAreNamed() throws {
        #expect(failure { _ = try WireReader(dbus: DBusValue.string("x"), path: "result") }?.message == "expected a dictionary (a{sv}), found s")
        let list = DBusValue.array(element: .variant, elements: [.variant(.variantDictionary(["a": .int32(1)])), .variant(.uint32(3))])
        #expect(failure { _ = try WireReader.readers(dbus: list, path: "apps") }?.keyPath == "apps[1]")
        let good = DBusValue.array(element: "a{sv}", elements: [.variantDictionary(["a": .int32(1)]), .variantDictionary([:])])
        let readers = try WireReader.readers(dbus: good, path: "apps")
        #expect(try readers.count == 2 && readers[0].int64("a") == 1)
        #expect(failure { _ = try readers[0].string("a") }?.keyPath == "apps[0].a")
    }

    /// A listing read straight from a message's bytes (`readers(plainReply:)`) holds what its
    /// values read through `WireValue(dbusValue:)` hold, widened alike, from the message built
    /// here and from libdbus's parse of its bytes.
    @Test func aListingReadFromItsBytesIsWhatItsValuesRead() throws {
        let narrow = DBusValue.variantDictionary([
            "byte": .byte(200), "short": .int16(-2), "ushort": .uint16(7), "path": .objectPath("/org/ferry/Scenes1"),
            "paths": .array(element: .objectPath, elements: [.objectPath("/a")]), "twice": .variant(.variant(.boolean(true))),
            "ints": .array(element: .int32, elements: [.int32(3)]), "pairs": .dictionary(key: "s", value: "s", entries: []),
        ])
        let body: [DBusValue] = [.array(element: "a{sv}", elements: [FerryBusTests.everyCase.dbusValue, narrow, .variantDictionary([:])])]
        let built = try Message.methodCall(destination: nil, path: "/p", interface: "a.b", member: "M", body: body)
        for message in [built, try Message(wireBytes: try built.wireBytes())] {
            let plain = try #require(try message.plainDictionaries(of: WireValue.self))
            let values = try WireReader.variantDictionaries(body[0], path: "sessions").map { try [String: WireValue](dbusValue: $0.dbusValue) }
            // Compared on the bus, where doubles compare by bit pattern (NaN, -0.0).
            #expect(plain.map(\.dbusValue) == values.map(\.dbusValue))
            let readers = try #require(try WireReader.readers(plainReply: message, path: "sessions"))
            #expect(try readers.count == 3 && readers[1].int64("byte") == 200 && readers[1].strings("paths") == ["/a"])
            #expect(failure { _ = try readers[1].string("byte") }?.keyPath == "sessions[1].byte")
        }
    }

    /// A value without a wire shape anywhere in a listing leaves it to the value reader, which
    /// reads the rest and names that key only when it is read.
    @Test func aListingWithAStructIsLeftToTheValueReader() throws {
        let body: [DBusValue] = [.array(element: "a{sv}", elements: [.variantDictionary(["app": .string("a"), "future": .structure([.int32(1)])])])]
        let message = try Message.methodCall(destination: nil, path: "/p", interface: "a.b", member: "M", body: body)
        #expect(try WireReader.readers(plainReply: message, path: "sessions") == nil)
        let readers = try WireReader.readers(dbus: try message.body[0], path: "sessions")
        #expect(try readers[0].string("app") == "a")
        #expect(failure { _ = try readers[0].int32("future") }?.keyPath == "sessions[0].future")
    }
}
