import BrokerCore
import DBus
import FerryBroker
import FerryModel
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// org.ferry.activity.copy: a share's items become an ordinary copy on the general pasteboard.
@Suite("ferryd built-in activities: copy")
struct BuiltInCopyTests {
    typealias F = FerrydFixture
    typealias B = BuiltInBroker

    @Test("copy puts the items on the general pasteboard as the sharer, promised bytes fetched first: readable after the app quits; in history")
    func copy() async throws {
        let broker = try await BuiltInBroker.start()
        let photo = F.pattern(300_000, seed: 7)
        let served = Counter()
        let source = try await broker.drag.app("org.ferry.notes", serving: ["public.png": photo],
                                               onServe: { served.count.withLock { $0 += 1 } })
        let sharer = try await broker.drag.app("org.ferry.gallery", manifest: "Gallery")
        let reader = try await broker.fixture.connect()
        try await broker.createShare(writer: source, sharer: sharer)
        try await broker.write(source, [
            F.item([F.representation("public.utf8-plain-text", "a shared note"), F.promised("public.png", estimatedSize: 300_000)],
                   ["suggestedName": "cat"]),
            F.item([F.representation("public.html", "<b>bold</b>"),
                    F.representation("org.ferry.notes.private", Array("own".utf8), visibility: "ownApp")]),
        ])
        let before = try await F.pasteboard(reader, "Items")[0].get([VariantDictionary].self).count
        let changes = try await F.changes(reader)

        let completion = await broker.perform(.copy, sharer: sharer, sourceApp: "org.ferry.notes")
        #expect(completion.completed, "\(completion)")
        #expect(completion.activityType == .copy)
        #expect(completion.message == "Copied 2 items")
        #expect(completion.errorName == nil)
        #expect(served.count.withLock { $0 } == 1, "the promise was fetched from its app during the perform")
        #expect(try await F.next(changes) != nil, "Changed on the general pasteboard")

        // The app that promised the photo quits: the copy holds the bytes itself.
        await source.close()
        let items = try await F.items(reader)
        #expect(before == 0 && items.count == 2)
        #expect(try items.map(F.types) == [["public.utf8-plain-text", "public.png"], ["public.html"]],
                "another app's ownApp representation stays behind")
        #expect(try F.representations(items[0]).map { try $0.value(forKey: "promised", as: Bool.self) } == [false, false])
        #expect(try items[0].value(forKey: "suggestedName", as: String.self) == "cat")
        #expect(try items[0].value(forKey: "sourceAppID", as: String.self) == "org.ferry.gallery", "written as the sharer")
        #expect(try await firstDifference(F.read(reader, 0, "public.png").bytes(), photo) == nil)
        #expect(try await F.read(reader, 1, "public.html").bytes() == Array("<b>bold</b>".utf8))

        // The next copy pushes it into the general pasteboard's history.
        try await F.setItems(reader, [F.item([F.representation("public.utf8-plain-text", "next")])])
        let history = try await F.pasteboard(reader, "History")[0].get([VariantDictionary].self)
        let entry = try #require(history.first)
        guard case .array(_, let elements)? = entry["items"] else {
            Issue.record("no items in \(entry)")
            return
        }
        let historyItems = try elements.map { try VariantDictionary(dbusValue: $0.unwrappingVariants) }
        #expect(try historyItems.map(F.types) == [["public.utf8-plain-text", "public.png"], ["public.html"]])
        #expect(try broker.store.changeCount(of: PasteboardName.general) == 2)

        changes.cancel()
        await sharer.close()
        await reader.close()
        await broker.stop()
    }

    @Test("a sensitive item stays sensitive: held in memory, never in history")
    func sensitive() async throws {
        let broker = try await BuiltInBroker.start()
        let sharer = try await broker.fixture.connect()
        try await broker.createShare(writer: sharer)
        try await broker.write(sharer, [F.item([F.representation("public.utf8-plain-text", "hunter2")], ["sensitive": true])])
        let completion = await broker.perform(.copy, sharer: sharer)
        #expect(completion.completed && completion.message == "Copied 1 item")
        let items = try await F.items(sharer)
        #expect(try items.first?.value(forKey: "sensitive", as: Bool.self) == true)
        #expect(try await F.read(sharer, 0, "public.plain-text").bytes() == Array("hunter2".utf8))
        try await F.setItems(sharer, [F.item([F.representation("public.utf8-plain-text", "next")])])
        let history = try await F.pasteboard(sharer, "History")[0].get([VariantDictionary].self)
        #expect(history.isEmpty, "a sensitive copy never reaches history")
        await sharer.close()
        await broker.stop()
    }

    @Test("a 129 MiB promise is copied through a scratch file into the store: readable after its app quits")
    func largePromise() async throws {
        let broker = try await BuiltInBroker.start()
        let movie = BuiltInSaveTests.largeMovie()
        let source = try await broker.drag.app("org.ferry.gallery", manifest: "Gallery", serving: ["public.mpeg-4": movie])
        let sharer = try await broker.fixture.connect()
        try await broker.createShare(writer: source, sharer: sharer)
        try await broker.write(source, [F.item([F.promised("public.mpeg-4")])])
        let completion = await broker.perform(.copy, sharer: sharer)
        #expect(completion.completed, "\(completion)")
        await source.close()
        let read = try await F.read(sharer, 0, "public.mpeg-4")
        #expect(read.size == Int64(movie.count))
        #expect(try await firstDifference(read.bytes(), movie) == nil)
        let blobs = broker.fixture.stateDir.appendingPathComponent("blobs").path
        #expect(try FileManager.default.contentsOfDirectory(atPath: blobs).filter { $0.hasPrefix(".tmp-") }.isEmpty,
                "no scratch file left")
        await sharer.close()
        await broker.stop()
    }

    @Test("a promise that never ends is refused with TooLarge at the disk budget: no scratch file left, the budget given back")
    func endlessPromiseStopsAtTheDiskBudget() async throws {
        // The broker stops reading and closes the pipe: this process takes EPIPE, not SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        let budget: Int64 = 4 << 20
        let broker = try await BuiltInBroker.start(diskBudget: budget)
        let written = Counter()
        let source = try await broker.endlessApp(written: written)
        let sharer = try await broker.fixture.connect()
        try await broker.createShare(writer: source, sharer: sharer)
        try await broker.write(source, [F.item([F.promised("public.data")])])

        let started = ContinuousClock.now
        let refused = await broker.perform(.copy, sharer: sharer, promiseBudget: .seconds(60))
        #expect(!refused.completed)
        #expect(refused.errorName == "org.ferry.Error.TooLarge", "\(refused)")
        #expect(refused.error?.contains("--disk-budget") == true, "\(refused.error ?? "")")
        #expect(ContinuousClock.now - started < .seconds(30), "stopped at the budget, not at the time limit")
        #expect(written.count.withLock { $0 } < 64 << 20, "the broker stopped reading soon after the budget")
        let blobs = broker.fixture.stateDir.appendingPathComponent("blobs").path
        #expect(try FileManager.default.contentsOfDirectory(atPath: blobs).isEmpty, "no scratch file or blob left")
        #expect(try await F.items(sharer).isEmpty, "nothing copied")
        // What the scratch file took is given back: a write of most of the budget fits.
        try await F.setItems(sharer, [F.item([F.representation("public.data", fd: try F.file(F.pattern(3 << 20)))])])
        await source.close()
        await sharer.close()
        await broker.stop()
    }

    @Test("a promise that cannot be fetched (its app failing or gone) → not completed, Unavailable; the general pasteboard is untouched")
    func unavailable() async throws {
        let broker = try await BuiltInBroker.start()
        // Serves public.png only: the promised public.jpeg fails.
        let source = try await broker.drag.app("org.ferry.notes", serving: ["public.png": [1, 2, 3]])
        let sharer = try await broker.fixture.connect()
        try await broker.createShare(writer: source, sharer: sharer)
        try await broker.write(source, [F.item([F.promised("public.png"), F.promised("public.jpeg")])])
        let failed = await broker.perform(.copy, sharer: sharer)
        #expect(!failed.completed)
        #expect(failed.activityType == .copy)
        #expect(failed.errorName == "org.ferry.Error.Unavailable")
        #expect(failed.error?.contains("item 0's public.jpeg cannot be fetched") == true, "\(failed.error ?? "")")
        #expect(try await F.items(sharer).isEmpty)
        #expect(try broker.store.changeCount(of: PasteboardName.general) == 0)

        // The app goes away before the perform: its promises are unavailable.
        try await broker.createShare(writer: source, sharer: sharer)
        try await broker.write(source, [F.item([F.promised("public.png")])])
        await source.close()
        #expect(await eventually(.seconds(30)) {
            (try? await broker.pasteboards.transientItems(B.name).first?.representations.first?.storage) == .unavailable
        })
        let gone = await broker.perform(.copy, sharer: sharer)
        #expect(!gone.completed && gone.errorName == "org.ferry.Error.Unavailable")
        #expect(try await F.items(sharer).isEmpty)
        await sharer.close()
        await broker.stop()
    }

    @Test("promises share one time budget: an app serving each slowly cannot keep the sharer waiting item after item")
    func slowPromises() async throws {
        // The broker gives up on a late promise and closes its pipe: the late app (this process)
        // must take EPIPE, not die of SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        let broker = try await BuiltInBroker.start()
        // An app that serves every promise, each after 600 ms.
        let source = try await broker.fixture.connect()
        try source.export(Interface("org.ferry.Client1") {
            Property("Version", "u", get: { _ in .uint32(1) })
            Method("ProvideRepresentation", in: ["item_id": "s", "type": "s", "fd": "h", "options": "a{sv}"], out: ["size": "t"]) { call in
                let (_, _, fd) = try call.arguments(String.self, String.self, FileDescriptor.self)
                try await Task.sleep(for: .milliseconds(600))
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    F.readers.async { continuation.resume(with: Result { try fd.write(all: [1, 2, 3]); fd.close() }) }
                }
                return [.uint64(3)]
            }
        }, at: "/org/ferry/Client")
        try await F.register(source, "org.ferry.notes", manifest: try F.manifest("Notes"))
        let sharer = try await broker.fixture.connect()
        try await broker.createShare(writer: source, sharer: sharer)
        try await broker.write(source, (0..<3).map { _ in F.item([F.promised("public.png")]) })
        // 1 s for all three: the second or third is too late (each alone would be in time).
        let failed = await broker.perform(.copy, sharer: sharer, promiseBudget: .seconds(1))
        #expect(!failed.completed && failed.errorName == "org.ferry.Error.Unavailable", "\(failed)")
        #expect(failed.error?.contains("did not serve it in time") == true, "\(failed.error ?? "")")
        #expect(try await F.items(sharer).isEmpty, "nothing copied")
        await source.close()
        await sharer.close()
        await broker.stop()
    }
}
