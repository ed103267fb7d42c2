import DBus
import FerryTestSupport
import Foundation
import Testing

/// The history habits of clipboard managers on the bus (issue #18): reading an entry without
/// restoring it (Read's history-entry), deleting entries (DeleteHistory), one entry for identical
/// consecutive writes, and ferryd's --history-bytes.
@Suite("ferryd: history entries read, deleted, deduplicated and capped in bytes", .serialized)
struct PasteboardHistoryHabitsTests {
    typealias F = FerrydFixture

    static func history(_ connection: Connection) async throws -> [VariantDictionary] {
        try await F.pasteboard(connection, "History")[0].get([VariantDictionary].self)
    }

    static func blobs(_ stateDir: URL) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: stateDir.appendingPathComponent("blobs").path)) ?? []
    }

    static func text(_ text: String) -> DBusValue {
        F.item([F.representation("public.utf8-plain-text", text)])
    }

    @Test("Read with history-entry gives an entry's bytes, inline or by fd, without a change; it is a logged paste")
    func readHistoryEntry() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let client = try await fixture.connect()
        let big = F.pattern(200 << 10)
        try await F.setItems(client, [F.item([F.representation("public.data", fd: try F.file(big))])])
        try await F.setItems(client, [Self.text("older text")])
        let (count, _) = try await F.setItems(client, [Self.text("current")])

        let text = try await F.read(client, 0, "public.plain-text", ["history-entry": .uint32(0)])
        #expect(text.deliveredType == "public.utf8-plain-text" && text.isInline)
        #expect(try await text.bytes() == Array("older text".utf8))
        let file = try await F.read(client, 0, "public.data", ["history-entry": .uint32(1), "fd": .boolean(true)])
        #expect(file.descriptor != nil && file.size == Int64(big.count))
        #expect(try await file.bytes() == big)

        #expect(try await F.read(client, 0, "public.plain-text").bytes() == Array("current".utf8), "the current items stay")
        #expect(try await F.pasteboard(client, "RestoreHistory", [.uint32(0)]).first == .uint64(count + 1),
                "no change was counted by the reads")
        let log = try await F.call(client, "PasteLog", [.uint32(10)])[0].get([VariantDictionary].self)
        #expect(log.count == 3)
        #expect(log.allSatisfy { $0["pasteboard"]?.unwrappingVariants == .string("general") })

        let missing = await F.failure { _ = try await F.read(client, 0, "public.data", ["history-entry": .uint32(7)]) }
        #expect(missing?.name == "org.ferry.Error.NotFound" && missing?.message.contains("history entry 7") == true,
                "\(String(describing: missing))")
        let noItem = await F.failure { _ = try await F.read(client, 3, "public.data", ["history-entry": .uint32(0)]) }
        #expect(noItem?.name == "org.ferry.Error.NotFound", "\(String(describing: noItem))")
        let badType = await F.failure { _ = try await F.read(client, 0, "public.data", ["history-entry": .string("0")]) }
        #expect(badType?.name == "org.ferry.Error.InvalidArgument", "\(String(describing: badType))")

        let named = try await F.call(client, "Pasteboard", [.string("notes"), .variantDictionary([:])])[0].get(ObjectPath.self)
        try await F.setItems(client, [Self.text("a note")], at: named)
        let noHistory = await F.failure {
            _ = try await F.read(client, 0, "public.data", ["history-entry": .uint32(0)], at: named)
        }
        #expect(noHistory?.name == "org.ferry.Error.NotFound", "\(String(describing: noHistory))")
        await client.close(gracePeriod: .zero)
    }

    @Test("DeleteHistory removes entries counted before any goes, with their files; a bad index deletes nothing")
    func deleteEntries() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let client = try await fixture.connect()
        for seed in [UInt8(1), 2, 3] {
            try await F.setItems(client, [F.item([F.representation("public.data", fd: try F.file(F.pattern(100 << 10, seed: seed)))])])
        }
        try await F.setItems(client, [Self.text("current")])
        #expect(Self.blobs(fixture.stateDir).count == 3)

        let outOfRange = await F.failure { _ = try await F.pasteboard(client, "DeleteHistory", [.array(of: .uint32, [.uint32(0), .uint32(3)])]) }
        #expect(outOfRange?.name == "org.ferry.Error.NotFound" && outOfRange?.message.contains("entry 3") == true,
                "\(String(describing: outOfRange))")
        #expect(try await Self.history(client).count == 3, "nothing was deleted")
        let empty = await F.failure { _ = try await F.pasteboard(client, "DeleteHistory", [.array(of: .uint32, [])]) }
        #expect(empty?.name == "org.ferry.Error.InvalidArgument", "\(String(describing: empty))")

        _ = try await F.pasteboard(client, "DeleteHistory", [.array(of: .uint32, [.uint32(2), .uint32(0), .uint32(2)])])
        #expect(try await Self.history(client).count == 1)
        let left = try await F.read(client, 0, "public.data", ["history-entry": .uint32(0)])
        #expect(try await left.bytes() == F.pattern(100 << 10, seed: 2), "the middle entry is the one left")
        #expect(Self.blobs(fixture.stateDir).count == 1, "the deleted entries' files left the disk")

        let named = try await F.call(client, "Pasteboard", [.string("notes"), .variantDictionary([:])])[0].get(ObjectPath.self)
        let noHistory = await F.failure { _ = try await F.pasteboard(client, "DeleteHistory", [.array(of: .uint32, [.uint32(0)])], at: named) }
        #expect(noHistory?.name == "org.ferry.Error.NotFound", "\(String(describing: noHistory))")
        await client.close(gracePeriod: .zero)
    }

    @Test("identical consecutive writes make one entry; other types, bytes or order make two")
    func identicalWrites() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let client = try await fixture.connect()
        let big = F.pattern(300 << 10)
        try await F.setItems(client, [Self.text("same")])
        let (count, _) = try await F.setItems(client, [Self.text("same")])
        #expect(count == 2, "an identical write still changes the pasteboard")
        #expect(try await Self.history(client).isEmpty)

        try await F.setItems(client, [F.item([F.representation("public.data", fd: try F.file(big))])])
        try await F.setItems(client, [F.item([F.representation("public.data", fd: try F.file(big))])])
        #expect(try await Self.history(client).count == 1, "the text, once")
        #expect(Self.blobs(fixture.stateDir).count == 1, "the second copy's file replaced the first")
        var changed = big
        changed[changed.count - 1] &+= 1
        try await F.setItems(client, [F.item([F.representation("public.data", fd: try F.file(changed))])])
        #expect(try await Self.history(client).count == 2, "one byte differs")

        try await F.setItems(client, [Self.text("same")])
        try await F.setItems(client, [F.item([F.representation("public.utf8-plain-text", "same"),
                                              F.representation("public.html", "same")])])
        try await F.setItems(client, [F.item([F.representation("public.html", "same"),
                                              F.representation("public.utf8-plain-text", "same")])])
        try await F.setItems(client, [F.item([F.representation("public.html", "same")]),
                                      F.item([F.representation("public.utf8-plain-text", "same")])])
        try await F.setItems(client, [F.item([F.representation("public.html", "same")]),
                                      F.item([F.representation("public.utf8-plain-text", "same")])])
        #expect(try await Self.history(client).count == 6, "another type list or item split is another entry")
        await client.close(gracePeriod: .zero)
    }

    @Test("--history-bytes drops the oldest entries first and never keeps one larger than itself")
    func historyBytes() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start(["--history-bytes", "250K"])
        defer { daemon.stop() }
        let client = try await fixture.connect()
        for seed in [UInt8(1), 2, 3] {
            try await F.setItems(client, [F.item([F.representation("public.data", fd: try F.file(F.pattern(100 << 10, seed: seed)))])])
        }
        try await F.setItems(client, [Self.text("now")])
        var history = try await Self.history(client)
        #expect(history.count == 2, "300 KiB do not fit in 250 KiB: the oldest went")
        #expect(Self.blobs(fixture.stateDir).count == 2)
        let newest = try await F.read(client, 0, "public.data", ["history-entry": .uint32(0)])
        #expect(try await newest.bytes() == F.pattern(100 << 10, seed: 3))

        try await F.setItems(client, [F.item([F.representation("public.data", fd: try F.file(F.pattern(300 << 10, seed: 4)))])])
        try await F.setItems(client, [Self.text("later")])
        history = try await Self.history(client)
        #expect(history.count == 3, "the 300 KiB entry is not kept, and costs the others nothing")
        #expect(try await F.read(client, 0, "public.plain-text", ["history-entry": .uint32(0)]).bytes() == Array("now".utf8))
        #expect(Self.blobs(fixture.stateDir).count == 2, "\(Self.blobs(fixture.stateDir))")
        await client.close(gracePeriod: .zero)
        daemon.stop()

        // A lower limit at the next start trims what is there.
        let restarted = try await fixture.start(["--history-bytes", "150K"])
        defer { restarted.stop() }
        let again = try await fixture.connect()
        #expect(try await Self.history(again).count == 2, "the text and the newest file")
        #expect(Self.blobs(fixture.stateDir).count == 1)
        let bad = try await fixture.run(["--history-bytes", "-1"])
        #expect(bad.status == 64 && bad.stderr.contains("history-bytes"), "\(bad)")
        await again.close(gracePeriod: .zero)
    }
}
