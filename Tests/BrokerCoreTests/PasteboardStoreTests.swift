import BrokerCore
import FerryModel
import FerryTestSupport
import Foundation
import Testing

@Suite struct PasteboardStoreTests {
    @Test func everyStorageKindRoundTrips() throws {
        let fixture = try StoreFixture()
        let store = try fixture.open()
        let small = pattern(1024), large = pattern(3 * 1024 * 1024 + 5)
        let fileBytes = pattern(200_000, seed: 3)
        let source = fixture.directory + "/../source"
        try fileBytes.write(to: URL(fileURLWithPath: source))
        let fd = open(source, O_RDONLY)
        defer { close(fd) }
        let smallFromFD = fixture.directory + "/../small"
        try small.write(to: URL(fileURLWithPath: smallFromFD))
        let smallFD = open(smallFromFD, O_RDONLY)
        defer { close(smallFD) }

        let written = item([
            (.utf8PlainText, .bytes(small)), (.png, .bytes(large)), (.data, .fileDescriptor(fd)),
            (.plainText, .fileDescriptor(smallFD)), (.pdf, .promised(owner: ":1.7", estimatedSize: 99)),
        ], name: "Drawing")
        #expect(try store.write([written], to: "general") == 1)

        let items = try store.items(in: "general")
        try #require(items.count == 1)
        let stored = items[0]
        #expect(stored.id == written.id)
        #expect(stored.suggestedName == "Drawing" && stored.sourceAppID == "org.example.Writer")
        #expect(stored.representations.map(\.contentType) == [.utf8PlainText, .png, .data, .plainText, .pdf])
        #expect(stored.representations.map(\.storage) == [.inline, .blob, .blob, .inline, .promised(owner: ":1.7")])
        #expect(stored.representations.map(\.size) == [1024, Int64(large.count), 200_000, 1024, 99])
        #expect(try bytes(store, stored.id, .utf8PlainText) == small)
        #expect(try firstDifference(bytes(store, stored.id, .png), large) == nil)
        #expect(try bytes(store, stored.id, .data) == fileBytes)
        #expect(try bytes(store, stored.id, .plainText) == small)
        guard case .promised(":1.7") = try store.readData(item: stored.id, representation: .pdf) else {
            Issue.record("a promised representation reads as its owner"); return
        }
        #expect(try fixture.blobFiles().count == 2)
    }

    /// Also: a type this process has no declaration for (another app's) survives a restart.
    @Test func emptyRepresentationsAndUndeclaredTypesRoundTrip() throws {
        let fixture = try StoreFixture()
        var store = try fixture.open()
        let empty = try ItemProvider.RepresentationInfo(wireDictionary: ["type": .string("org.example.empty")]).contentType
        #expect(ContentType("org.example.empty") == nil)
        let devNull = open("/dev/null", O_RDONLY)
        defer { close(devNull) }
        try store.write([item([(empty, .bytes(Data())), (.data, .fileDescriptor(devNull))])], to: "general")
        store.close()
        store = try fixture.open()
        let stored = try store.items(in: "general")[0]
        #expect(stored.representations.map(\.size) == [0, 0])
        #expect(stored.representations[0].contentType.identifier == "org.example.empty")
        #expect(try bytes(store, stored.id, empty).isEmpty)
        #expect(try bytes(store, stored.id, .data).isEmpty)
    }

    @Test func inlineLimitIsTheBoundary() throws {
        let fixture = try StoreFixture()
        let store = try fixture.open()
        let limit = PasteboardStore.inlineLimit
        try store.write([item([(.data, .bytes(pattern(limit))), (.png, .bytes(pattern(limit + 1)))])], to: "general")
        #expect(try store.items(in: "general")[0].representations.map(\.storage) == [.inline, .blob])
    }

    @Test func reopeningBringsEverythingBack() throws {
        let fixture = try StoreFixture()
        var store = try fixture.open()
        let large = pattern(100_000)
        try store.write([text("one")], to: "general")
        try store.write([text("two"), item([(.png, .bytes(large))])], to: "general")
        try store.write([text("draft")], to: "com.example.drafts")
        try store.write([text("draft 2")], to: "com.example.drafts")
        try store.logPaste(PasteRecord(appID: "org.example.Reader", uniqueName: ":1.9", uid: 1000, pid: 42,
                                       pasteboard: "general", itemIndex: 1, contentType: .png,
                                       timestamp: Date(timeIntervalSince1970: 1_700_000_000)))
        try store.logPaste(PasteRecord(appID: nil, uniqueName: ":1.10", uid: 1000, pid: 43, process: "gimp-2.10",
                                       writerProcess: "xclip", historyEntry: 3,
                                       pasteboard: "general", itemIndex: 1, contentType: .png,
                                       timestamp: Date(timeIntervalSince1970: 1_700_000_001)))
        let before = (try store.items(in: "general"), try store.history(), try store.pasteLog())
        store.close()

        store = try fixture.open()
        #expect(try store.pasteboards() == ["general", "com.example.drafts"])
        #expect(try store.changeCount(of: "general") == 2)
        #expect(try store.changeCount(of: "com.example.drafts") == 2)
        #expect(try store.items(in: "general") == before.0)
        #expect(try firstText(store) == "two")
        #expect(try firstDifference(bytes(store, before.0[1].id, .png), large) == nil)
        #expect(try firstText(store, "com.example.drafts") == "draft 2")
        #expect(try store.history() == before.1)
        #expect(try store.history().map { try firstText(of: $0, store) } == ["one"])
        #expect(try store.pasteLog() == before.2)
        #expect(try store.pasteLog().first?.contentType == .png)
        #expect(try store.pasteLog().map(\.process) == ["gimp-2.10", nil], "the process name survives a reopen; none stays none")
        #expect(try store.pasteLog().map(\.writerProcess) == ["xclip", nil], "so does the writer's")
        #expect(try store.pasteLog().map(\.historyEntry) == [3, nil], "a history read stays one")
        #expect(try store.checkIntegrity().isEmpty)
    }

    @Test func namedPasteboardsAreRemovableAndClearable() throws {
        let fixture = try StoreFixture()
        let store = try fixture.open()
        try store.write([item([(.png, .bytes(pattern(300_000)))])], to: "scratch")
        #expect(try fixture.blobFiles().count == 1)
        #expect(try store.clear("scratch") == 2)
        #expect(try store.items(in: "scratch").isEmpty)
        #expect(try fixture.blobFiles().isEmpty)
        try store.removePasteboard("scratch")
        #expect(try store.pasteboards() == ["general"])
        #expect(throws: FerryModelError.self) { try store.changeCount(of: "scratch") }
        #expect(code { try store.removePasteboard("scratch") } == .notFound)
        #expect(code { try store.removePasteboard("general") } == .invalidArgument)
        #expect(code { try store.items(in: "nowhere") } == .notFound)
        #expect(code { try store.clear("nowhere") } == .notFound)
    }

    @Test(arguments: ["", "with space", "-dash-first", ".hidden", "a/b", "ünicode", String(repeating: "x", count: 129)])
    func badPasteboardNamesAreRefused(_ name: String) throws {
        let fixture = try StoreFixture()
        let store = try fixture.open()
        #expect(code { try store.write([text("x")], to: name) } == .invalidArgument)
        #expect(code { try store.items(in: name) } == .invalidArgument)
        #expect(try store.pasteboards() == ["general"])
    }

    @Test func unknownItemsAndTypesAreNotFound() throws {
        let fixture = try StoreFixture()
        let store = try fixture.open()
        try store.write([text("hello")], to: "general")
        let id = try store.items(in: "general")[0].id
        #expect(code { try store.readData(item: UUID(), representation: .utf8PlainText) } == .notFound)
        #expect(code { try store.readData(item: id, representation: .png) } == .notFound)
        #expect(code { try store.item(UUID()) } == .notFound)
    }

    @Test func malformedWritesChangeNothing() throws {
        let fixture = try StoreFixture()
        let store = try fixture.open()
        try store.write([text("kept")], to: "general")
        let twice = item([(.png, .bytes(pattern(100_000))), (.png, .bytes(Data()))])
        #expect(code { try store.write([twice], to: "general") } == .invalidArgument)
        let noOwner = item([(.png, .promised(owner: "", estimatedSize: nil))])
        #expect(code { try store.write([noOwner], to: "general") } == .invalidArgument)
        let unreadable = item([(.png, .bytes(pattern(100_000))), (.data, .fileDescriptor(-1))])
        #expect(code { try store.write([unreadable], to: "general") } == .invalidArgument)
        let existing = try store.items(in: "general")[0].id
        var reused = text("again")
        reused.id = existing
        #expect(code { try store.write([reused], to: "other") } == .invalidArgument)
        #expect(try firstText(store) == "kept")
        #expect(try store.changeCount(of: "general") == 1)
        #expect(try fixture.blobFiles().isEmpty)
    }

    @Test func stateDirectoryIsPrivateAndExclusive() throws {
        let fixture = try StoreFixture()
        let store = try fixture.open()
        let attributes = try FileManager.default.attributesOfItem(atPath: fixture.directory)
        #expect((attributes[.posixPermissions] as? Int) == 0o700)
        #expect(code { try fixture.open() } == .unavailable)
        store.close()
        #expect(throws: Never.self) { try fixture.open() }
    }

    @Test func defaultDirectoryFollowsXDG() {
        #expect(StateDirectory.defaultPath(environment: ["XDG_STATE_HOME": "/s", "HOME": "/h"]) == "/s/ferry")
        #expect(StateDirectory.defaultPath(environment: ["XDG_STATE_HOME": "rel", "HOME": "/h"]) == "/h/.local/state/ferry")
        #expect(StateDirectory.defaultPath(environment: ["HOME": "/h/"]) == "/h/.local/state/ferry")
    }
}

/// The error code `body` throws, nil when it does not throw a `FerryModelError`.
func code(_ body: () throws -> Any) -> FerryModelError.Code? {
    do {
        _ = try body()
        return nil
    } catch {
        return (error as? FerryModelError)?.code
    }
}

func firstText(of entry: HistoryEntry, _ store: PasteboardStore) throws -> String {
    String(decoding: try bytes(store, entry.items[0].id, .utf8PlainText), as: UTF8.self)
}
