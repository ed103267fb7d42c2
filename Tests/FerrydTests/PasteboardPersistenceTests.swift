import DBus
import FerryTestSupport
import Foundation
import Testing

/// History, named pasteboards, and what survives a kill -9 of the daemon.
@Suite("ferryd: history, named pasteboards, persistence across kill -9")
struct PasteboardPersistenceTests {
    typealias F = FerrydFixture

    @Test("history and restore; held items, history and named pasteboards come back after kill -9")
    func historyAndRestart() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start(["--history-limit", "2"])
        let client = try await fixture.connect()
        let big = F.pattern(1 << 20, seed: 5)
        try await F.setItems(client, [F.item([F.representation("public.utf8-plain-text", "first")])])
        try await F.setItems(client, [F.item([F.representation("public.utf8-plain-text", "second")])])
        try await F.setItems(client, [F.item([F.representation("public.png", fd: try F.file(big))])])
        try await F.setItems(client, [F.item([F.representation("public.utf8-plain-text", "fourth")])])
        let path = try await F.call(client, "Pasteboard", [.string("notes.drafts"), .variantDictionary([:])])[0].get(ObjectPath.self)
        #expect(path == "/org/ferry/Pasteboard/notes_2edrafts")
        try await F.setItems(client, [F.item([F.representation("public.utf8-plain-text", "draft")])], at: path)

        let history = try await F.pasteboard(client, "History")[0].get([VariantDictionary].self)
        #expect(try history.map { try $0.value(forKey: "changeCount", as: UInt64.self) } == [3, 2], "newest first, at most 2")
        let entryItems = try #require(history.first?["items"])
        guard case .array(_, let elements) = entryItems else { Issue.record("items is \(entryItems)"); return }
        #expect(try F.types(try VariantDictionary(dbusValue: elements[0].unwrappingVariants)) == ["public.png"])
        let named = await F.failure { _ = try await F.pasteboard(client, "History", at: path) }
        #expect(named?.name == "org.ferry.Error.NotFound")

        daemon.send(SIGKILL)
        #expect(await daemon.waitForExit(timeout: .seconds(5)) != nil)
        let restarted = try await fixture.start(["--history-limit", "2"])
        defer { restarted.stop() }
        let again = try await fixture.connect()
        #expect(try await F.call(again, "ListPasteboards") == [.array(element: .string, elements: ["general", "notes.drafts"])])
        #expect(try await F.read(again, 0, "public.text").bytes() == Array("fourth".utf8))
        #expect(try await F.read(again, 0, "public.text", at: path).bytes() == Array("draft".utf8))
        let changed = try await F.changes(again)
        #expect(try await F.pasteboard(again, "RestoreHistory", [.uint32(0)]) == [.uint64(5)])
        #expect(try await F.next(changed)?.body == [.uint64(5)])
        let png = try await F.read(again, 0, "public.image")
        #expect(png.deliveredType == "public.png")
        #expect(try await firstDifference(png.bytes(), big) == nil, "the 1 MiB blob survived")
        let after = try await F.pasteboard(again, "History")[0].get([VariantDictionary].self)
        #expect(try after.map { try $0.value(forKey: "changeCount", as: UInt64.self) } == [4, 2])
        let missing = await F.failure { _ = try await F.pasteboard(again, "RestoreHistory", [.uint32(7)]) }
        #expect(missing?.name == "org.ferry.Error.NotFound")
        _ = try await F.pasteboard(again, "ClearHistory")
        #expect(try await F.pasteboard(again, "History")[0].get([VariantDictionary].self).isEmpty)
        await client.close()
        await again.close()
    }

    @Test("named pasteboards: created on demand, listed, removed with a last Changed; general cannot be removed")
    func namedPasteboards() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let client = try await fixture.connect()
        let path = try await F.call(client, "Pasteboard", [.string("my.board"), .variantDictionary(["x": .int32(1)])])[0]
            .get(ObjectPath.self)
        #expect(path == "/org/ferry/Pasteboard/my_2eboard")
        #expect(try await F.call(client, "Pasteboard", [.string("general"), .variantDictionary([:])])[0] == .objectPath(F.general))
        _ = try await F.call(client, "Pasteboard", [.string("a_b"), .variantDictionary([:])])
        #expect(try await F.call(client, "ListPasteboards")[0].get([String].self) == ["general", "a_b", "my.board"])
        let name = try await client.call(destination: F.broker, path: path, interface: "org.freedesktop.DBus.Properties",
                                         member: "Get", body: ["org.ferry.Pasteboard1", "Name"], timeout: .seconds(10))
        #expect(name[0].unwrappingVariants == .string("my.board"))
        let (count, _) = try await F.setItems(client, [F.item([F.representation("public.utf8-plain-text", "x")])], at: path)

        let changed = try await F.changes(client, at: path)
        _ = try await F.call(client, "RemovePasteboard", [.string("my.board")])
        #expect(try await F.next(changed)?.body == [.uint64(count + 1)], "a last Changed")
        #expect(try await F.call(client, "ListPasteboards")[0].get([String].self) == ["general", "a_b"])
        let gone = await F.failure { _ = try await F.items(client, at: path) }
        #expect(gone?.name == "org.freedesktop.DBus.Error.UnknownObject")

        let general = await F.failure { _ = try await F.call(client, "RemovePasteboard", [.string("general")]) }
        #expect(general?.name == "org.ferry.Error.InvalidArgument")
        let unknown = await F.failure { _ = try await F.call(client, "RemovePasteboard", [.string("no.such.board")]) }
        #expect(unknown?.name == "org.ferry.Error.NotFound")
        let bad = await F.failure { _ = try await F.call(client, "Pasteboard", [.string("bad name!"), .variantDictionary([:])]) }
        #expect(bad?.name == "org.ferry.Error.InvalidArgument")
        #expect(daemon.isRunning)
        await client.close()
    }
}
