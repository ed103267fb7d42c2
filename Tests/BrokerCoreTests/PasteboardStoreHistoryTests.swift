import BrokerCore
import FerryModel
import Foundation
import Testing

@Suite struct PasteboardStoreHistoryTests {
    @Test func historyKeepsTheMostRecentFirstUpToTheLimit() throws {
        let fixture = try StoreFixture()
        let store = try fixture.open(historyLimit: 3)
        for n in 1...6 {
            try store.write([text("copy \(n)"), item([(.png, .bytes(pattern(70_000, seed: UInt8(n))))])], to: "general")
        }
        let history = try store.history()
        #expect(try history.map { try firstText(of: $0, store) } == ["copy 5", "copy 4", "copy 3"])
        #expect(history.map(\.changeCount) == [5, 4, 3])
        #expect(try bytes(store, history[2].items[1].id, .png) == pattern(70_000, seed: 3))
        // Current items plus three entries, one blob each; the dropped entries' blobs are gone.
        #expect(try fixture.blobFiles().count == 4)
        // Named pasteboards have no history.
        try store.write([text("a")], to: "notes")
        try store.write([text("b")], to: "notes")
        #expect(try store.history().count == 3)
    }

    @Test func restoringPutsAnEntryBackAsANewWrite() throws {
        let fixture = try StoreFixture()
        let store = try fixture.open()
        for n in 1...3 { try store.write([text("copy \(n)")], to: "general") }
        // History: copy 2, copy 1. Restore "copy 1".
        #expect(try store.restoreHistory(1) == 4)
        #expect(try firstText(store) == "copy 1")
        #expect(try store.history().map { try firstText(of: $0, store) } == ["copy 3", "copy 2"])
        #expect(code { try store.restoreHistory(2) } == .notFound)
        #expect(code { try store.restoreHistory(-1) } == .notFound)
        try store.clearHistory()
        #expect(try store.history().isEmpty)
        #expect(try firstText(store) == "copy 1")
    }

    @Test func sensitiveItemsNeverReachTheDisk() throws {
        let fixture = try StoreFixture()
        var store = try fixture.open()
        try store.write([text("ordinary")], to: "general")
        let secret = Data("hunter2-\(UUID())".utf8)
        let bigSecret = secret + pattern(200_000)
        let sensitive = item([(.utf8PlainText, .bytes(secret)), (.data, .bytes(bigSecret))],
                             options: .init(sensitive: true))
        #expect(try store.write([sensitive], to: "general") == 2)
        #expect(try store.items(in: "general").isEmpty)
        // The replaced content went to history; the secret did not.
        try store.write([text("after")], to: "general")
        #expect(try store.history().map { try firstText(of: $0, store) } == ["ordinary"])
        store.close()
        #expect(!(try fixture.everyByteOnDisk().contains(secret)))

        store = try fixture.open()
        #expect(try store.changeCount(of: "general") == 3)
        #expect(try firstText(store) == "after")
    }

    @Test func aSensitiveWriteReplacesThePersistedItemsAcrossARestart() throws {
        let fixture = try StoreFixture()
        var store = try fixture.open()
        try store.write([text("old")], to: "notes")
        try store.write([text("secret", options: .init(sensitive: true))], to: "notes")
        store.close()
        store = try fixture.open()
        #expect(try store.items(in: "notes").isEmpty)
        #expect(try store.changeCount(of: "notes") == 2)
    }
}
