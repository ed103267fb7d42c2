import DBus
import Ferry
import FerryModel
import FerryTestSupport
import Foundation
import Testing

/// Copy in one client, paste in another, through a real ferryd on a private bus.
@Suite("Ferry: pasteboard reads and writes between clients")
struct PasteboardClientTests {
    @Test("a string set by one client is the string another client reads")
    func stringAcrossClients() async throws {
        try await ClientFixture.with { fixture in
            let writer = try await fixture.client(), reader = try await fixture.client()
            let before = try await reader.general.changeCount
            let count = try await writer.general.setString("héllo, ferry ✂︎")
            #expect(count > before)
            #expect(try await reader.general.string == "héllo, ferry ✂︎")
            #expect(try await reader.general.changeCount == count)
            #expect(try await reader.general.hasStrings)
            #expect(try await !reader.general.hasImages)
            await writer.close()
            await reader.close()
        }
    }

    @Test("a 200 KiB image travels as a descriptor and arrives byte for byte; public.image delivers the PNG")
    func imageThroughDescriptor() async throws {
        try await ClientFixture.with { fixture in
            let writer = try await fixture.client(), reader = try await fixture.client()
            let png = pngLikeBytes(200 * 1024)
            try await writer.general.setData(png, forType: .png)
            let read = try await reader.general.read(item: 0, type: .image)
            #expect(read.deliveredType == .png)
            #expect(read.size == Int64(png.count))
            guard case .stream(_, let transfer) = read.content else {
                Issue.record("200 KiB of held data should come as a descriptor")
                return
            }
            #expect(transfer == nil)
            #expect(Data(try await read.bytes()) == png)
            #expect(try await reader.general.data(forType: .png) == png)
            #expect(try await reader.general.hasImages)
            await writer.close()
            await reader.close()
        }
    }

    @Test("several items with several representations: each read gets its own item; public.image prefers the first image type")
    func multipleItemsAndSupertype() async throws {
        try await ClientFixture.with { fixture in
            let writer = try await fixture.client(), reader = try await fixture.client()
            var first = ItemProvider()
            first.registerDataRepresentation(for: .utf8PlainText, data: Data("one".utf8))
            var second = ItemProvider()
            second.registerDataRepresentation(for: .png, data: pngLikeBytes(64, seed: 1))
            second.registerDataRepresentation(for: .jpeg, data: Data([0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3]))
            second.suggestedName = "picture"
            var third = ItemProvider()
            third.registerDataRepresentation(for: .html, data: Data("<b>three</b>".utf8))
            third.registerDataRepresentation(for: .utf8PlainText, data: Data("three".utf8))
            try await writer.general.setItemProviders([first, second, third])

            let items = try await reader.general.items
            #expect(items.count == 3)
            #expect(items.map(\.contentTypes) == [[.utf8PlainText], [.png, .jpeg], [.html, .utf8PlainText]])
            #expect(items[1].metadata.suggestedName == "picture")
            #expect(Set(items.map(\.id)).count == 3)
            #expect(try await reader.general.numberOfItems == 3)

            let image = try await reader.general.read(item: 1, type: .image)
            #expect(image.deliveredType == .png)
            #expect(Data(try await image.bytes()) == pngLikeBytes(64, seed: 1))
            #expect(try await reader.general.data(forType: .jpeg, item: 1) == Data([0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3]))
            #expect(try await reader.general.data(forType: .plainText, item: 2) == Data("three".utf8))
            #expect(try await reader.general.strings == ["one", "three"])
            // Nothing conforming is nil for the convenience, NotFound for the low-level read.
            #expect(try await reader.general.data(forType: .image, item: 0) == nil)
            await #expect(throws: FerryError.self) { _ = try await reader.general.read(item: 7, type: .data) }

            let providers = try await reader.general.itemProviders
            #expect(providers.count == 3)
            let loaded = try await providers[2].loadData(for: .text)
            #expect(loaded.contentType == .html)
            #expect(loaded.data == Data("<b>three</b>".utf8))
            await writer.close()
            await reader.close()
        }
    }

    @Test("a URL round-trips, a named pasteboard is separate from the general one and can be removed")
    func urlAndNamedPasteboards() async throws {
        try await ClientFixture.with { fixture in
            let client = try await fixture.client()
            let url = try #require(URL(string: "https://example.com/a?b=c"))
            try await client.general.setURL(url)
            #expect(try await client.general.url == url)
            #expect(try await client.general.hasURLs)

            let named = try await client.pasteboard(named: "my.board")
            #expect(named.name == "my.board")
            try await named.setString("on the named one")
            #expect(try await named.string == "on the named one")
            #expect(try await client.general.url == url)
            #expect(try await client.pasteboardNames().contains("my.board"))
            try await client.removePasteboard(named: "my.board")
            #expect(try await !client.pasteboardNames().contains("my.board"))
            let gone = await #expect(throws: FerryError.self) { _ = try await named.items }
            #expect(gone?.code == .notFound)

            let error = await #expect(throws: FerryError.self) { _ = try await client.pasteboard(named: "bad name!") }
            #expect(error?.code == .invalidArgument)
            await client.close()
        }
    }

    @Test("pattern detection answers per item without a paste; item providers stop loading once the pasteboard changed")
    func patternsAndStaleProviders() async throws {
        try await ClientFixture.with { fixture in
            let writer = try await fixture.client(), reader = try await fixture.client()
            try await writer.general.setStrings(["https://example.com/page", "42"])
            let detected = try await reader.general.detectPatterns([.probableWebURL, .number, .emailAddress])
            #expect(detected == [[.probableWebURL], [.number]])
            #expect(try await reader.pasteLog().isEmpty)

            let providers = try await reader.general.itemProviders
            #expect(String(decoding: try await providers[1].loadData(for: .plainText).data, as: UTF8.self) == "42")
            try await writer.general.setString("something else")
            await #expect(throws: FerryModelError.self) { _ = try await providers[1].loadData(for: .plainText) }
            await writer.close()
            await reader.close()
        }
    }

    @Test("detectValues hands iOS 15's values over as a paste: the items it read are in the paste log")
    func detectedValues() async throws {
        try await ClientFixture.with { fixture in
            let writer = try await fixture.client(), reader = try await fixture.client()
            try await writer.general.setStrings(["flight LH 400 for €89,90 via https://lufthansa.com", "-3.5", "nothing here"])
            let values = try await reader.general.detectValues([.flightNumber, .moneyAmount, .link, .number])
            #expect(values.count == 3)
            #expect(values.first == [.flightNumber: .matches(["LH 400"]), .link: .matches(["https://lufthansa.com"]),
                                     .moneyAmount: .moneyAmounts([MoneyAmount(amount: 89.9, currency: "EUR")])])
            #expect(values.dropFirst().first == [.number: .number(-3.5)])
            #expect(values.last == [:])
            #expect(try await reader.pasteLog().map(\.item).sorted() == [0, 1])
            await writer.close()
            await reader.close()
        }
    }

    @Test("changes() yields the new change count after another client writes")
    func changesAfterWrite() async throws {
        try await ClientFixture.with { fixture in
            let watcher = try await fixture.client(), writer = try await fixture.client()
            let changes = try await watcher.general.changes()
            let written = try await writer.general.setString("watch me")
            var iterator = changes.makeAsyncIterator()
            let seen = try await iterator.next()
            #expect(seen == written)
            let cleared = try await writer.general.clear()
            #expect(try await iterator.next() == cleared)
            #expect(try await watcher.general.string == nil)
            await watcher.close()
            await writer.close()
        }
    }

    @Test("history keeps replaced contents; restoring brings them back; the paste log records reads")
    func historyAndPasteLog() async throws {
        try await ClientFixture.with { fixture in
            let client = try await fixture.client()
            try await client.general.setString("first")
            try await client.general.setString("second")
            let history = try await client.general.history()
            #expect(history.first?.items.first?.contentTypes == [.utf8PlainText])
            try await client.general.restoreHistory(0)
            #expect(try await client.general.string == "first")
            let log = try await client.pasteLog(limit: 10)
            #expect(log.first?.pasteboard == "general")
            #expect(log.first?.uniqueName == client.connection.uniqueName.rawValue)
            try await client.general.clearHistory()
            #expect(try await client.general.history().isEmpty)
            await client.close()
        }
    }

    @Test("an origin given to setItemProviders comes back as PasteboardItem.origin, in items and history; a bad one is invalidArgument")
    func origin() async throws {
        try await ClientFixture.with { fixture in
            let writer = try await fixture.client(), reader = try await fixture.client()
            var imported = ItemProvider()
            imported.registerDataRepresentation(for: .utf8PlainText, data: Data("from the desktop".utf8))
            try await writer.general.setItemProviders([imported], origin: "desktop:CLIPBOARD")
            #expect(try await reader.general.items.map(\.origin) == ["desktop:CLIPBOARD"])
            try await writer.general.setString("through ferry")
            #expect(try await reader.general.items.map(\.origin) == [nil])
            #expect(try await reader.general.history().first?.items.map(\.origin) == ["desktop:CLIPBOARD"])
            let refused = await #expect(throws: FerryError.self) {
                try await writer.general.setItemProviders([imported], origin: "desktop:\u{1B}[31m")
            }
            #expect(refused?.code == .invalidArgument)
            #expect(try await reader.general.string == "through ferry", "a refused write changes nothing")
            await writer.close()
            await reader.close()
        }
    }
}
