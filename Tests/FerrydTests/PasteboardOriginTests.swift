import DBus
import FerryTestSupport
import Foundation
import Testing

/// The `origin` an item's writer gives (ferry-bridge's `desktop:CLIPBOARD`): checked, kept,
/// given back.
@Suite("ferryd: item origin (SetItems key origin)")
struct PasteboardOriginTests {
    typealias F = FerrydFixture

    @Test("origin comes back in Items and History, survives a kill -9 and a restore; items without one have none")
    func roundTripAndRestart() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        let client = try await fixture.connect()
        #expect(try await Self.property(client, "Version") == .uint32(5))
        try await F.setItems(client, [F.item([F.representation("public.utf8-plain-text", "from firefox")],
                                             ["origin": .string("desktop:CLIPBOARD")]),
                                      F.item([F.representation("public.utf8-plain-text", "plain")])])
        let items = try await F.items(client)
        #expect(try items[0].value(forKey: "origin", as: String.self) == "desktop:CLIPBOARD")
        #expect(items[1]["origin"] == nil, "an item written without origin has none")
        let path = try await F.call(client, "Pasteboard", [.string("primary"), .variantDictionary([:])])[0].get(ObjectPath.self)
        try await F.setItems(client, [F.item([F.representation("public.utf8-plain-text", "selected")],
                                             ["origin": .string("desktop:PRIMARY")])], at: path)
        // The next write pushes the imported item into the history, origin and all.
        try await F.setItems(client, [F.item([F.representation("public.utf8-plain-text", "ferry copy")])])
        #expect(try await F.items(client)[0]["origin"] == nil)
        #expect(try await Self.historyOrigins(client) == ["desktop:CLIPBOARD", nil])

        daemon.send(SIGKILL)
        #expect(await daemon.waitForExit(timeout: .seconds(5)) != nil)
        let restarted = try await fixture.start()
        defer { restarted.stop() }
        let again = try await fixture.connect()
        #expect(try await F.items(again, at: path).first?.value(forKey: "origin", as: String.self) == "desktop:PRIMARY")
        #expect(try await Self.historyOrigins(again) == ["desktop:CLIPBOARD", nil])
        _ = try await F.pasteboard(again, "RestoreHistory", [.uint32(0)])
        let restored = try await F.items(again)
        #expect(try restored.first?.value(forKey: "origin", as: String.self) == "desktop:CLIPBOARD")
        #expect(try await F.read(again, 0, "public.text").bytes() == Array("from firefox".utf8))
        await client.close()
        await again.close()
    }

    @Test("a store written before origins opens: its items have none, and new ones keep theirs")
    func storeWithoutOrigins() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        var daemon = try await fixture.start()
        var client = try await fixture.connect()
        try await F.setItems(client, [F.item([F.representation("public.utf8-plain-text", "older")])])
        await client.close()
        daemon.send(SIGTERM)
        _ = await daemon.waitForExit(timeout: .seconds(10))
        // Back to the schema of the previous version: its columns and its migration records.
        let database = fixture.stateDir.appendingPathComponent("ferry.sqlite").path
        let sql = """
            ALTER TABLE item DROP COLUMN origin;
            ALTER TABLE item DROP COLUMN sourceProcess;
            ALTER TABLE pasteLog DROP COLUMN process;
            ALTER TABLE pasteLog DROP COLUMN consent;
            ALTER TABLE pasteLog DROP COLUMN writerProcess;
            ALTER TABLE pasteLog DROP COLUMN historyEntry;
            DELETE FROM grdb_migrations WHERE identifier IN ('v3 item origin', 'v4 paste log process', 'v5 paste log consent',
                                                             'v6 writer process and history reads');
            SELECT group_concat(identifier) FROM grdb_migrations;
            """
        let edit = try await ChildProcess.run("/usr/bin/sqlite3", [database, sql], timeout: .seconds(30))
        #expect(edit.succeeded, "\(edit.stderr)")
        #expect(edit.stdout == "v1,v2 blob checksums\n", "the store is a v2 store: \(edit.stdout)")

        daemon = try await fixture.start()
        client = try await fixture.connect()
        let old = try #require(try await F.items(client).first)
        #expect(old["origin"] == nil)
        #expect(try await F.read(client, 0, "public.text").bytes() == Array("older".utf8))
        try await F.setItems(client, [F.item([F.representation("public.utf8-plain-text", "newer")],
                                             ["origin": .string("desktop:CLIPBOARD")])])
        daemon.send(SIGKILL)
        _ = await daemon.waitForExit(timeout: .seconds(5))
        daemon = try await fixture.start()
        defer { daemon.stop() }
        let again = try await fixture.connect()
        #expect(try await F.items(again).first?.value(forKey: "origin", as: String.self) == "desktop:CLIPBOARD")
        await client.close()
        await again.close()
    }

    @Test("a sensitive item keeps its origin while it is held in memory")
    func sensitiveOrigin() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let client = try await fixture.connect()
        try await F.setItems(client, [F.item([F.representation("public.utf8-plain-text", "hunter2"),
                                              F.representation("x-kde-passwordManagerHint", "secret")],
                                             ["origin": .string("desktop:CLIPBOARD")])])
        let item = try #require(try await F.items(client).first)
        #expect(item["sensitive"] == .boolean(true))
        #expect(try item.value(forKey: "origin", as: String.self) == "desktop:CLIPBOARD")
        await client.close()
    }

    @Test("an origin that is empty, too long, not printable ASCII or not a string is InvalidArgument and changes nothing",
          arguments: [DBusValue.string(""), .string(String(repeating: "x", count: 65)), .string("desktop:CLIPBÖARD"),
                      .string("desktop:\nCLIPBOARD"), .string("tab\there"), .string("del\u{7F}"), .int32(1)])
    func invalid(origin: DBusValue) async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let client = try await fixture.connect()
        let (count, _) = try await F.setItems(client, [F.item([F.representation("public.utf8-plain-text", "kept")])])
        let refused = await F.failure {
            try await F.setItems(client, [F.item([F.representation("public.utf8-plain-text", "refused")], ["origin": origin])])
        }
        #expect(refused?.name == "org.ferry.Error.InvalidArgument")
        #expect(refused?.message.contains("items[0].origin") == true, "the error names the key: \(refused?.message ?? "")")
        #expect(try await F.read(client, 0, "public.text").bytes() == Array("kept".utf8))
        #expect(try await Self.property(client, "ChangeCount") == .uint64(count))
        // The longest origin allowed, every printable character, is accepted as it is.
        let longest = " ~!az09:/" + String(repeating: "A", count: 55)
        try await F.setItems(client, [F.item([F.representation("public.utf8-plain-text", "ok")], ["origin": .string(longest)])])
        #expect(try await F.items(client)[0].value(forKey: "origin", as: String.self) == longest)
        await client.close()
    }

    /// A property of the general pasteboard.
    static func property(_ connection: Connection, _ name: String) async throws -> DBusValue {
        try await connection.call(destination: F.broker, path: F.general, interface: "org.freedesktop.DBus.Properties",
                                  member: "Get", body: [.string("org.ferry.Pasteboard1"), .string(name)],
                                  timeout: .seconds(10))[0].unwrappingVariants
    }

    /// The origins of the history's items, newest entry first.
    static func historyOrigins(_ connection: Connection) async throws -> [String?] {
        let history = try await F.pasteboard(connection, "History")[0].get([VariantDictionary].self)
        return try history.flatMap { entry -> [String?] in
            guard case .array(_, let elements)? = entry["items"] else { return [] }
            return try elements.map { element in
                try VariantDictionary(dbusValue: element.unwrappingVariants)["origin"].map { try $0.unwrappingVariants.get(String.self) }
            }
        }
    }
}
