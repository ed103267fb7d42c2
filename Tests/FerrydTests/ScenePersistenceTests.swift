import DBus
import FerryTestSupport
import Foundation
import Testing

/// Sessions outlive their scenes: destruction and discards, app restarts, broker restarts.
@Suite("ferryd scenes: destruction, restoration, broker restarts")
struct ScenePersistenceTests {
    typealias F = FerrydFixture
    typealias S = SceneBus
    static let notes = SceneServiceTests.notes
    static let openNote = SceneServiceTests.openNote

    @Test("RequestDestruction: DisconnectScene (destroyed, commit) then DiscardSceneSessions; while the app is down the discard waits for its next registration")
    func destruction() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let app = try await FakeSceneApp.start(fixture, Self.notes, manifest: try F.manifest("Notes"))
        let first = try await SceneServiceTests.firstSession(app)
        let cli = try await fixture.connect()
        let second = try await S.activate(cli, app: Self.notes)
        let removed = try await cli.subscribe(to: MatchRule(type: .signal, interface: S.interface, member: "SessionRemoved"))

        let reply = try await S.call(cli, "RequestDestruction", [.string(second), (["animation": "commit"] as [String: DBusValue]).dbusValue])
        #expect(reply.isEmpty)
        let calls = try await app.waitForCalls { $0.contains { $0.member == "DiscardSceneSessions" } }
        let tail = calls.filter { $0.member == "DisconnectScene" || $0.member == "DiscardSceneSessions" }
        #expect(tail.map(\.member) == ["DisconnectScene", "DiscardSceneSessions"])
        let disconnect = try #require(tail.first)
        #expect(disconnect.id == second)
        #expect(try disconnect.dictionary.value(forKey: "reason", as: String.self) == "destroyed")
        #expect(try disconnect.dictionary.value(forKey: "animation", as: String.self) == "commit")
        #expect(try tail[1].arguments[0].get([String].self) == [second])
        var signals = removed.makeAsyncIterator()
        let signal = try #require(try await signals.next())
        #expect(try signal.body[1].get(String.self) == second)
        #expect(try await S.sessions(cli).count == 1)
        #expect(try await eventually(.seconds(30)) { try await S.property(cli, first, "State") == .string("foregroundActive") },
                "the remaining scene is active again")

        // The app goes away; its remaining session is destroyed meanwhile.
        await app.quit()
        removed.cancel()
        #expect(try await eventually(.seconds(30)) { try await S.property(cli, first, "State") == .string("unattached") })
        _ = try await S.call(cli, "RequestDestruction", [.string(first), [String: DBusValue]().dbusValue])
        #expect(try await S.sessions(cli).isEmpty)

        let again = try await FakeSceneApp.start(fixture, Self.notes, manifest: try F.manifest("Notes"))
        let fresh = try await SceneServiceTests.firstSession(again)
        #expect(again.calls.first?.member == "DiscardSceneSessions", "discards are delivered before any scene connects")
        #expect(try again.calls.first?.arguments[0].get([String].self) == [first])
        #expect(fresh != first, "with no session left, the app gets a new one")
        #expect(again.calls.filter { $0.member == "DiscardSceneSessions" }.count == 1)
        await again.quit()
        await cli.close()
    }

    @Test("app restart: archived sessions reconnect with their restoration activity, title and frame; pending options go with them")
    func appRestart() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let app = try await FakeSceneApp.start(fixture, Self.notes, manifest: try F.manifest("Notes"))
        let first = try await SceneServiceTests.firstSession(app)
        let cli = try await fixture.connect()
        let editor = try await S.activate(cli, app: Self.notes, ["placement": "right"])
        try await S.update(app.connection, editor, [
            "title": "Notes — groceries",
            "userInfo": ["noteID": "groceries"].dbusValue,
            "stateRestorationActivity": S.activity(Self.openNote, userInfo: ["noteID": "groceries"]),
        ])
        #expect(try await S.property(cli, editor, "Title") == .string("Notes — groceries"))
        await app.quit()
        #expect(try await eventually(.seconds(30)) { try await S.property(cli, editor, "State") == .string("unattached") })

        // While it is down: an activity for the archived first scene is kept for its connection.
        _ = try await S.activate(cli, app: "", session: first, ["userActivity": S.activity(Self.openNote, userInfo: ["noteID": "ideas"])])

        let again = try await FakeSceneApp.start(fixture, Self.notes, manifest: try F.manifest("Notes"))
        try await again.waitForCalls { calls in Set(calls.filter { $0.member == "ConnectScene" }.map(\.id)) == [first, editor] }
        #expect(!again.calls.contains { $0.member == "DiscardSceneSessions" })
        let restored = try #require(again.calls.first { $0.member == "ConnectScene" && $0.id == editor })
        let session = restored.dictionary
        #expect(try session.value(forKey: "title", as: String.self) == "Notes — groceries")
        let activity = try session.value(forKey: "stateRestorationActivity", as: VariantDictionary.self)
        #expect(try activity.value(forKey: "activityType", as: String.self) == Self.openNote)
        #expect(try activity.value(forKey: "userInfo", as: VariantDictionary.self).value(forKey: "noteID", as: String.self) == "groceries")
        #expect(try SceneBus.frame(session) == [960, 0, 960, 1080])
        #expect(restored.activities.isEmpty,
                "a plain restoration has no fresh activity")

        let pendingConnect = try #require(again.calls.first { $0.member == "ConnectScene" && $0.id == first })
        let fresh = try #require(pendingConnect.activities.first)
        #expect(try fresh.value(forKey: "userInfo", as: VariantDictionary.self).value(forKey: "noteID", as: String.self) == "ideas")
        #expect(try await eventually(.seconds(30)) { try await S.property(cli, first, "State") == .string("foregroundActive") },
                "it was brought forward while archived")
        await again.quit()
        await cli.close()
    }

    @Test("broker restart (kill -9): sessions, titles, frames and stacking come back; the app re-registers and they reconnect")
    func brokerRestart() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        let app = try await FakeSceneApp.start(fixture, Self.notes, manifest: try F.manifest("Notes"))
        let first = try await SceneServiceTests.firstSession(app)
        let cli = try await fixture.connect()
        let second = try await S.activate(cli, app: Self.notes, ["placement": "left"])
        try await S.update(app.connection, second, ["title": "Ideas", "frame": ["x": 100.0, "y": 50.0, "width": 700.0, "height": 500.0].dbusValue])
        let before = try await S.sessions(cli)
        daemon.send(SIGKILL)
        _ = await daemon.waitForExit()

        let restarted = try await fixture.start()
        defer { restarted.stop() }
        let after = try await S.sessions(cli)
        #expect(after.map { try? $0.value(forKey: "persistentIdentifier", as: String.self) }
            == before.map { try? $0.value(forKey: "persistentIdentifier", as: String.self) }, "same sessions, same order")
        #expect(try after.map(S.frame) == before.map(S.frame))
        #expect(after.allSatisfy { (try? $0.value(forKey: "state", as: Int32.self)) == -1 }, "archived until the app is back")
        #expect(try await S.property(cli, second, "Title") == .string("Ideas"))
        #expect(try S.frame(after[0]) == [100, 50, 700, 500])

        // The app (still on the bus) registers again, as the client library does.
        app.clearCalls()
        try await app.register()
        try await app.waitForCalls { calls in Set(calls.filter { $0.member == "ConnectScene" }.map(\.id)) == [first, second] }
        #expect(try await eventually(.seconds(30)) { try await S.property(cli, second, "State") == .string("foregroundActive") })
        await app.quit()
        await cli.close()
    }

    @Test("ferryd --screen twice: two screens side by side; a scene asked for on screen 1 opens there")
    func screens() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start(["--screen", "1280x720", "--screen", "1920x1080", "--edge-zone", "10"])
        defer { daemon.stop() }
        let cli = try await fixture.connect()
        let screens = try await cli.call(destination: F.broker, path: S.path, interface: "org.freedesktop.DBus.Properties",
                                         member: "Get", body: [.string("org.ferry.Scenes1"), "Screens"],
                                         timeout: .seconds(10))[0].unwrappingVariants.get([VariantDictionary].self)
        #expect(screens.count == 2)
        #expect(try screens[1].value(forKey: "index", as: UInt32.self) == 1)
        let frame = try screens[1].value(forKey: "frame", as: VariantDictionary.self)
        #expect(try frame.value(forKey: "x", as: Double.self) == 1280)
        #expect(try frame.value(forKey: "width", as: Double.self) == 1920)
        let zone = try await cli.call(destination: F.broker, path: S.path, interface: "org.freedesktop.DBus.Properties",
                                      member: "Get", body: [.string("org.ferry.Scenes1"), "EdgeZone"], timeout: .seconds(10))
        #expect(zone[0].unwrappingVariants == .double(10))

        let app = try await FakeSceneApp.start(fixture, Self.notes, manifest: try F.manifest("Notes"))
        _ = try await SceneServiceTests.firstSession(app)
        let id = try await S.activate(cli, app: Self.notes, ["screen": .uint32(1)])
        let session = try #require(try await S.session(cli, id))
        #expect(try S.frame(session) == [1328, 48, 960, 640])
        #expect(try session.value(forKey: "screen", as: UInt32.self) == 1)
        await app.quit()
        await cli.close()

        let bad = try await fixture.run(["--screen", "wide"], stateDir: fixture.stateDir.appendingPathComponent("other"))
        #expect(bad.status == 64 && bad.stderr.contains("The value 'wide' is invalid for '--screen <WIDTHxHEIGHT>'"), "\(bad.stderr)")
        let external = try await fixture.run(["--external-display", "1280x"], stateDir: fixture.stateDir.appendingPathComponent("other"))
        #expect(external.status == 64 && external.stderr.contains("The value '1280x' is invalid for '--external-display <WIDTHxHEIGHT>'"),
                "\(external.stderr)")
    }
}
