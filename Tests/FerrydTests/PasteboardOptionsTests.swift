import DBus
import FerryTestSupport
import Foundation
import Testing

/// ownApp, localOnly, expiration and sensitive items, as other processes see them.
@Suite("ferryd: pasteboard item options (ownApp, localOnly, expiration, sensitive)")
struct PasteboardOptionsTests {
    typealias F = FerrydFixture

    @Test("ownApp representations only for the writing app; localOnly is reported; expired items are gone for everyone")
    func ownAppLocalOnlyExpiration() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let notes = try await fixture.connect(), cli = try await fixture.connect()
        try await F.register(notes, "org.ferry.notes", manifest: try F.manifest("Notes"))
        try await F.setItems(notes, [
            F.item([F.representation("org.ferry.notes.note", Array("{note}".utf8), visibility: "ownApp"),
                    F.representation("public.utf8-plain-text", "note text")], ["localOnly": .boolean(true)]),
        ])
        // #require, not [0]: an empty answer must fail this test, not trap the whole test process.
        let own = try #require(try await F.items(notes).first)
        #expect(try F.types(own) == ["org.ferry.notes.note", "public.utf8-plain-text"])
        #expect(try own.value(forKey: "sourceAppID", as: String.self) == "org.ferry.notes")
        #expect(try own.value(forKey: "localOnly", as: Bool.self))
        let others = try #require(try await F.items(cli).first)
        #expect(try F.types(others) == ["public.utf8-plain-text"], "ownApp is invisible to others")
        let hidden = await F.failure { _ = try await F.read(cli, 0, "org.ferry.notes.note") }
        #expect(hidden?.name == "org.ferry.Error.NotFound")
        #expect(try await F.read(cli, 0, "public.text").deliveredType == "public.utf8-plain-text")
        let mine = try await F.read(notes, 0, "public.plain-text", ["user-action": .boolean(true)])
        #expect(mine.deliveredType == "org.ferry.notes.note", "the app itself gets its own, higher-fidelity type")

        // Expiration: gone for everyone when the date passes, announced with a Changed signal.
        let path = try await F.call(cli, "Pasteboard", [.string("short.lived"), .variantDictionary([:])])[0].get(ObjectPath.self)
        let changed = try await F.changes(cli, at: path)
        let expires = Int64((Date().timeIntervalSince1970 + 1.5) * 1_000_000)
        let (count, _) = try await F.setItems(cli, [F.item([F.representation("public.utf8-plain-text", "soon gone")],
                                                           ["expirationDate": .int64(expires)])], at: path)
        #expect(try await F.next(changed)?.body == [.uint64(count)])
        // On a loaded machine the 1.5 s may be over already: then the item must be gone, not listed.
        if let listed = try await F.items(cli, at: path).first {
            #expect(try listed.value(forKey: "expirationDate", as: Int64.self) == expires)
        } else {
            #expect(Date().timeIntervalSince1970 * 1_000_000 >= Double(expires), "gone before its expiration date")
        }
        let expiry = try await F.next(changed, timeout: .seconds(30))
        #expect(try expiry?.body == [.uint64(count + 1)], "expiry is a change")
        #expect(Date().timeIntervalSince1970 * 1_000_000 >= Double(expires))
        #expect(try await F.items(cli, at: path).isEmpty)
        let gone = await F.failure { _ = try await F.read(cli, 0, "public.text", at: path) }
        #expect(gone?.name == "org.ferry.Error.NotFound")
        // Dates at the ends of 64 bits of microseconds: far future stays, far past is gone at once.
        try await F.setItems(cli, [F.item([F.representation("public.utf8-plain-text", "forever")], ["expirationDate": .int64(.max)]),
                                   F.item([F.representation("public.utf8-plain-text", "never")], ["expirationDate": .int64(.min)])],
                             at: path)
        let extremes = try await F.items(cli, at: path)
        #expect(extremes.count == 1)
        #expect(try extremes.first?.value(forKey: "expirationDate", as: Int64.self) ?? 0 > Int64.max - 1_000_000_000)
        await notes.close()
        await cli.close()
    }

    @Test("sensitive items (flag or KDE's hint) are readable, never in history, and gone after a kill -9 and restart")
    func sensitive() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        let client = try await fixture.connect()
        try await F.setItems(client, [F.item([F.representation("public.utf8-plain-text", "ordinary")])])
        let secret = F.pattern(30_000, seed: 42)
        try await F.setItems(client, [F.item([F.representation("public.utf8-plain-text", fd: try F.file(secret))],
                                             ["sensitive": .boolean(true)])])
        let items = try await F.items(client)
        #expect(try items[0].value(forKey: "sensitive", as: Bool.self))
        #expect(try await F.read(client, 0, "public.text").bytes() == secret)
        // KDE's convention marks an item sensitive too.
        let (count, _) = try await F.setItems(client, [F.item([
            F.representation("public.utf8-plain-text", "hunter2"), F.representation("x-kde-passwordManagerHint", "secret"),
        ])])
        #expect(count == 3)
        #expect(try await F.items(client)[0]["sensitive"] == .boolean(true))
        #expect(try await F.read(client, 0, "public.utf8-plain-text").bytes() == Array("hunter2".utf8))
        let history = try await F.pasteboard(client, "History")[0].get([VariantDictionary].self)
        #expect(history.count == 1, "only the ordinary write entered the history")
        #expect(try history[0].value(forKey: "changeCount", as: UInt64.self) == 1)

        daemon.send(SIGKILL)
        _ = await daemon.waitForExit(timeout: .seconds(5))
        let restarted = try await fixture.start()
        defer { restarted.stop() }
        let again = try await fixture.connect()
        #expect(try await F.items(again).isEmpty, "the secret did not survive, and neither did what it replaced")
        let property = try await again.call(destination: F.broker, path: F.general, interface: "org.freedesktop.DBus.Properties",
                                            member: "Get", body: ["org.ferry.Pasteboard1", "ChangeCount"], timeout: .seconds(10))
        #expect(property[0].unwrappingVariants == .uint64(3))
        let all = try FileManager.default.subpathsOfDirectory(atPath: fixture.stateDir.path).compactMap {
            FileManager.default.contents(atPath: fixture.stateDir.appendingPathComponent($0).path)
        }
        #expect(!all.contains { $0.range(of: Data("hunter2".utf8)) != nil }, "the secret never reached the disk")
        await client.close()
        await again.close()
    }

    @Test("KDE's hint marks an item sensitive in any case and with whitespace around secret, as data or as fd")
    func passwordManagerHintSpellings() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let client = try await fixture.connect()
        let hint = "x-kde-passwordManagerHint"
        for spelling in ["Secret", "SECRET\n", "  secret ", "secret\u{0}", "\tSeCrEt\r\n"] {
            try await F.setItems(client, [F.item([F.representation("public.utf8-plain-text", "pw"),
                                                  F.representation(hint, spelling)])])
            #expect(try await F.items(client)[0]["sensitive"] == .boolean(true), "\(spelling.debugDescription) as data")
            try await F.setItems(client, [F.item([F.representation("public.utf8-plain-text", "pw"),
                                                  F.representation(hint, fd: try F.file(Array(spelling.utf8)))])])
            #expect(try await F.items(client)[0]["sensitive"] == .boolean(true), "\(spelling.debugDescription) as fd")
        }
        for other in ["secrets", "not secret", "se cret", ""] {
            try await F.setItems(client, [F.item([F.representation("public.utf8-plain-text", "plain"),
                                                  F.representation(hint, other)])])
            #expect(try await F.items(client)[0]["sensitive"] != .boolean(true), "\(other.debugDescription) is no secret")
        }
        await client.close()
    }
}
