import BrokerCore
import FerryModel
import Foundation
import Testing

@Suite struct PasteboardStoreLifecycleTests {
    @Test func promisesOfAPreviousRunAreDroppedOnReopening() throws {
        let fixture = try StoreFixture()
        var store = try fixture.open()
        try store.write([text("earlier")], to: "general")
        try store.write([item([(.utf8PlainText, .bytes(Data("held".utf8))),
                               (.png, .promised(owner: ":1.5", estimatedSize: nil))])], to: "general")
        try store.write([item([(.png, .promised(owner: ":1.5", estimatedSize: nil))])], to: "board")
        store.close()
        store = try fixture.open()
        let stored = try store.items(in: "general")[0]
        #expect(stored.representations.map(\.contentType) == [.utf8PlainText], "the dead promise is gone, the held bytes stay")
        #expect(code { try store.readData(item: stored.id, representation: .png) } == .notFound)
        #expect(try bytes(store, stored.id, .utf8PlainText) == Data("held".utf8))
        #expect(try store.items(in: "board").isEmpty, "an item left with nothing is gone")
        #expect(try store.history().count == 1)
    }

    @Test func aFulfilledPromiseIsReadableAndDurable() throws {
        let fixture = try StoreFixture()
        var store = try fixture.open()
        let image = pattern(500_000)
        try store.write([item([(.png, .promised(owner: ":1.5", estimatedSize: nil)),
                               (.utf8PlainText, .promised(owner: ":1.5", estimatedSize: 5))])], to: "general")
        let id = try store.items(in: "general")[0].id
        #expect(try store.promises(of: ":1.5").map(\.contentType) == [.png, .utf8PlainText])
        #expect(code { try store.fulfillPromise(item: id, representation: .png, data: .bytes(image), from: ":1.6") }
                == .permissionDenied)
        try store.fulfillPromise(item: id, representation: .png, data: .bytes(image), from: ":1.5")
        try store.fulfillPromise(item: id, representation: .utf8PlainText, data: .bytes(Data("hello".utf8)), from: ":1.5")
        #expect(code { try store.fulfillPromise(item: id, representation: .png, data: .bytes(image), from: ":1.5") }
                == .invalidArgument)
        #expect(code { try store.fulfillPromise(item: id, representation: .pdf, data: .bytes(image), from: ":1.5") }
                == .notFound)
        store.close()
        store = try fixture.open()
        #expect(try store.items(in: "general")[0].representations.map(\.storage) == [.blob, .inline])
        #expect(try bytes(store, id, .png) == image)
        #expect(try firstText(store) == "hello")
    }

    @Test func droppedPromisesLeaveNothingBehind() throws {
        let fixture = try StoreFixture()
        let store = try fixture.open()
        try store.write([item([(.png, .promised(owner: ":1.5", estimatedSize: nil))]),
                         item([(.png, .promised(owner: ":1.8", estimatedSize: nil))])], to: "general")
        let before = try store.changeCount(of: "general")
        let dropped = try store.items(in: "general")[0].id
        let changes = try store.dropPromises(of: ":1.5")
        #expect(changes["general"]?.representations == 1 && changes["general"]?.items == 1)
        #expect(changes["general"]?.changeCount == before + 1)
        #expect(try store.changeCount(of: "general") == before + 1)
        let items = try store.items(in: "general")
        #expect(items.count == 1)
        guard case .promised(":1.8") = try store.readData(item: items[0].id, representation: .png) else {
            Issue.record("another owner's promise is untouched"); return
        }
        #expect(code { try store.fulfillPromise(item: dropped, representation: .png, data: .bytes(Data()), from: ":1.5") }
                == .notFound)
        #expect(try store.dropPromises(of: ":1.5").isEmpty, "nothing left to drop: no change")
    }

    @Test func theGeneralPasteboardFallsBackToItsPreviousContent() throws {
        let fixture = try StoreFixture()
        let store = try fixture.open()
        try store.write([text("first")], to: "general")
        try store.write([text("second")], to: "general")
        try store.write([item([(.png, .promised(owner: ":1.5", estimatedSize: 300 << 20))])], to: "general")
        // A history entry made only of the dead owner's promises goes too.
        try store.write([text("third")], to: "general")
        try store.write([item([(.png, .promised(owner: ":1.5", estimatedSize: 300 << 20))])], to: "general")
        #expect(try store.history().count == 4)
        let changes = try store.dropPromises(of: ":1.5")
        #expect(changes["general"]?.restoredHistory == true)
        #expect(changes["general"]?.remainingItems == 1)
        #expect(try firstText(store) == "third")
        #expect(try store.history().count == 2, "the entry restored and the one of promises only are gone")
        #expect(try store.items(in: "general").allSatisfy { $0.representations.allSatisfy { $0.storage != .unavailable } })

        try store.write([item([(.png, .promised(owner: ":1.6", estimatedSize: nil))])], to: "board")
        #expect(try store.dropPromises(of: ":1.6")["board"]?.remainingItems == 0)
        #expect(try store.items(in: "board").isEmpty, "a named pasteboard has no history: it is empty")
    }

    @Test func expiredItemsAreGoneForEveryone() throws {
        let fixture = try StoreFixture()
        let store = try fixture.open()
        let now = Date()
        let soon = now.addingTimeInterval(60)
        try store.write([text("lasting"), item([(.png, .bytes(pattern(100_000)))], options: .init(expirationDate: soon))],
                        to: "general", now: now)
        let items = try store.items(in: "general", now: now)
        #expect(items.count == 2 && items[1].options.expirationDate == soon)
        #expect(try store.nextExpiration() == soon)

        let later = soon.addingTimeInterval(1)
        #expect(try store.items(in: "general", now: later).count == 1)
        #expect(code { try store.readData(item: items[1].id, representation: .png, now: later) } == .notFound)
        #expect(try store.removeExpired(now: later) == ["general"])
        #expect(try fixture.blobFiles().isEmpty)
        #expect(try store.items(in: "general", now: now).count == 1)
        #expect(try store.nextExpiration() == nil)
    }

    @Test func expiredItemsLeaveTheHistoryToo() throws {
        let fixture = try StoreFixture()
        let store = try fixture.open()
        let now = Date()
        try store.write([text("fleeting", options: .init(expirationDate: now.addingTimeInterval(10)))], to: "general", now: now)
        try store.write([text("next")], to: "general", now: now)
        #expect(try store.history(now: now).count == 1)
        let later = now.addingTimeInterval(11)
        #expect(try store.history(now: later).isEmpty)
        #expect(code { try store.restoreHistory(0, now: later) } == .notFound)
        try store.removeExpired(now: later)
        #expect(try store.history(now: now).isEmpty)
    }

    @Test func orphanBlobsAreRemovedOnOpen() throws {
        let fixture = try StoreFixture()
        var store = try fixture.open()
        try store.write([item([(.png, .bytes(pattern(100_000)))])], to: "general")
        let kept = try fixture.blobFiles()
        store.close()
        // What a crash between a blob's write and its commit leaves behind.
        let orphan = UUID().uuidString.lowercased()
        try pattern(10).write(to: URL(fileURLWithPath: fixture.directory + "/blobs/" + orphan))
        try pattern(10).write(to: URL(fileURLWithPath: fixture.directory + "/blobs/.tmp-" + orphan))
        #expect(try fixture.blobFiles().count == 3)
        store = try fixture.open()
        #expect(try fixture.blobFiles() == kept)
        #expect(try bytes(store, try store.items(in: "general")[0].id, .png) == pattern(100_000))
    }

    @Test func pasteLogIsNewestFirstAndLimited() throws {
        let fixture = try StoreFixture()
        let store = try fixture.open()
        for n in 0..<5 {
            try store.logPaste(PasteRecord(appID: nil, uniqueName: ":1.\(n)", uid: 1000, pid: Int32(100 + n),
                                           pasteboard: "general", itemIndex: n, contentType: .utf8PlainText))
        }
        #expect(try store.pasteLog(limit: 3).map(\.uniqueName) == [":1.4", ":1.3", ":1.2"])
        #expect(try store.pasteLog().count == 5)
    }
}
