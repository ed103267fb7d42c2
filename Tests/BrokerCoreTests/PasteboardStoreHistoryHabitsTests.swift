import BrokerCore
import FerryModel
import Foundation
import Testing

/// The store's side of the history habits (issue #18): identity of consecutive writes, the byte
/// cap, deleting and reading single entries.
@Suite struct PasteboardStoreHistoryHabitsTests {
    @Test func promisedBytesAreNeverIdenticalAndOptionsDoNotMatter() throws {
        let fixture = try StoreFixture()
        let store = try fixture.open()
        let promise = item([(.png, .promised(owner: ":1.7", estimatedSize: 10))])
        try store.write([promise], to: "general")
        try store.write([item([(.png, .promised(owner: ":1.7", estimatedSize: 10))])], to: "general")
        #expect(try store.history().count == 1, "a promise cannot be compared, so it is kept")

        try store.write([text("same", options: .init(localOnly: true))], to: "general")
        try store.write([text("same")], to: "general")
        #expect(try store.history().count == 2, "only the types and bytes decide")
        #expect(try store.items(in: "general")[0].options.localOnly == false, "the new write's options stay")
        try store.write([text("same"), text("same")], to: "general")
        #expect(try store.history().count == 3, "another number of items")
    }

    @Test func aLowerByteCapAtOpenTrimsTheOldestAndDeleteRemovesBlobs() throws {
        let fixture = try StoreFixture()
        do {
            let store = try fixture.open()
            for seed in 1...4 { try store.write([item([(.png, .bytes(pattern(100_000, seed: UInt8(seed))))])], to: "general") }
            #expect(try store.history().count == 3)
            store.close()
        }
        let store = try PasteboardStore.open(directory: fixture.directory, historyBytes: 250_000)
        let history = try store.history()
        #expect(history.count == 2)
        #expect(try bytes(store, history[1].items[0].id, .png) == pattern(100_000, seed: 2))
        #expect(try fixture.blobFiles().count == 3, "the current item and two entries")

        #expect(code { try store.deleteHistory([0, 2]) } == .notFound)
        #expect(try store.history().count == 2, "nothing deleted")
        try store.deleteHistory([1, 1])
        #expect(try fixture.blobFiles().count == 2)
        #expect(try store.historyEntry(0).items[0].id == history[0].items[0].id)
        #expect(code { try store.historyEntry(1) } == .notFound)
        #expect(code { try PasteboardStore.open(directory: fixture.directory + "2", historyBytes: -1) } == .invalidArgument)
    }
}
