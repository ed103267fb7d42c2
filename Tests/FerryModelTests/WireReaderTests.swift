import Foundation
import FerryModel
import Testing

/// The one typed `a{sv}` reader: every accessor's shapes, and errors that name the key path a
/// program on the bus has to fix.
@Suite("WireReader: typed a{sv} access with named errors")
struct WireReaderTests {
    /// The error `read` throws, which must be a `FerryModelError`.
    func failure(_ read: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) -> FerryModelError? {
        #expect(throws: FerryModelError.self, sourceLocation: sourceLocation) { try read() }
    }

    @Test func integersOfAnyWidthThatFit() throws {
        let wire = WireReader(["u": .uint32(7), "i": .int32(-3), "t": .uint64(9), "big": .uint64(.max), "neg": .int64(-1)],
                              path: "options")
        #expect(try wire.int64("u") == 7 && wire.int64("i") == -3 && wire.int32("t") == 9)
        #expect(try wire.uint64("big") == .max && wire.uint64("u") == 7)
        #expect(try wire.int64("absent") == nil)
        #expect(failure { _ = try wire.int64("big") }?.message == "\(UInt64.max) is too large: at most \(Int64.max) (2^63 - 1)")
        #expect(failure { _ = try wire.uint64("neg") }?.keyPath == "options.neg")
        #expect(failure { _ = try wire.uint32("i") }?.message == "expected an unsigned integer (u), found i")
        #expect(failure { _ = try wire.int32("big") }?.keyPath == "options.big")
    }

    @Test func missingAndMistypedKeysAreNamed() throws {
        let wire = WireReader(["name": .int32(1)], path: "items[2]")
        let mistyped = failure { _ = try wire.string("name") }
        #expect(mistyped?.code == .invalidArgument)
        #expect(mistyped?.keyPath == "items[2].name")
        #expect(mistyped?.message == "expected a string (s), found i")
        let missing = failure { _ = try wire.required("type", wire.string) }
        #expect(missing?.keyPath == "items[2].type" && missing?.message == "required key is missing")
        #expect(failure { _ = try wire.bool("name") }?.message == "expected a boolean (b), found i")
    }

    @Test func listsOfStringsAndOfLists() throws {
        let wire = WireReader([
            "as": .strings(["a", "b"]), "av": .array([.string("c")]), "empty": .array([]), "mixed": .array([.string("a"), .int32(1)]),
            "aas": .array([.strings(["x"]), .strings([]), .array([])]), "badLists": .array([.strings(["x"]), .string("y")]), "dict": .dictionary([:]),
        ], path: "info")
        #expect(try wire.strings("as") == ["a", "b"] && wire.strings("av") == ["c"] && wire.strings("empty") == [])
        #expect(failure { _ = try wire.strings("mixed") }?.keyPath == "info.mixed[1]")
        #expect(failure { _ = try wire.strings("dict", of: "activity types") }?.message == "expected an array of activity types (as), found a{sv}")
        #expect(try wire.stringLists("aas") == [["x"], [], []])
        #expect(failure { _ = try wire.stringLists("badLists") }?.keyPath == "info.badLists[1]")
        #expect(failure { _ = try wire.stringLists("as") }?.keyPath == "info.as")
    }

    @Test func typeIdentifiersAreCheckedOneByOne() throws {
        let wire = WireReader(["types": .strings(["public.png", "org.example.private-type", "not a type"])], path: "info")
        let error = failure { _ = try wire.contentTypes("types") }
        #expect(error?.keyPath == "info.types[2]")
        #expect(error?.message == "\"not a type\" is not a type identifier")
        let good = WireReader(["types": .strings(["public.png", "org.example.private-type"])])
        let types = try #require(try good.contentTypes("types"))
        #expect(types.map(\.identifier) == ["public.png", "org.example.private-type"])
        #expect(types[0] == .png, "a declared type is the declared type, with its conformances")
    }

    @Test func nestedDictionariesCarryTheirPath() throws {
        let wire = WireReader(["metadata": .array([.dictionary(["title": .string("ok")]), .dictionary(["title": .bool(true)])]),
                               "frame": .dictionary(["x": .double(1), "y": .int32(2), "width": .double(3)])], path: "info")
        let entries = try #require(try wire.dictionaries("metadata"))
        #expect(try entries[0].string("title") == "ok")
        #expect(failure { _ = try entries[1].string("title") }?.keyPath == "info.metadata[1].title")
        #expect(failure { _ = try wire.decode(Rect.self, "frame") }?.keyPath == "info.frame.height")
        #expect(failure { _ = try wire.dictionaries("frame") }?.message == "expected an array of dictionaries (av), found a{sv}")
    }

    @Test func aValueThatDidNotConvertFailsOnlyWhenRead() throws {
        let unreadable = FerryModelError(.invalidArgument, "expected a property-list value, found 'h'", keyPath: "options.fd")
        let wire = WireReader(["app": .string("org.example.App")], path: "options", unreadable: ["fd": unreadable])
        #expect(try wire.string("app") == "org.example.App", "other keys read as ever")
        #expect(wire.contains("fd") && !wire.contains("other"))
        #expect(failure { _ = try wire.bool("fd") } == unreadable)
    }
}
