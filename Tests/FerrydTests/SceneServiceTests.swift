import DBus
import FerryTestSupport
import Foundation
import Testing

/// org.ferry.Scenes1 with a real ferryd and a test app exporting org.ferry.Client1.
@Suite("ferryd scenes: sessions, activation, placement, destruction")
struct SceneServiceTests {
    typealias F = FerrydFixture
    typealias S = SceneBus
    static let notes = "org.ferry.notes"
    static let openNote = "org.ferry.notes.open-note"

    /// Waits for the first session of a freshly registered app to be connected and active.
    static func firstSession(_ app: FakeSceneApp) async throws -> String {
        let calls = try await app.waitForCalls { calls in
            guard let id = calls.first(where: { $0.member == "ConnectScene" })?.id else { return false }
            return calls.contains { $0.member == "SceneChanged" && $0.id == id
                && (try? $0.dictionary.value(forKey: "state", as: Int32.self)) == 0 }
        }
        return calls.first { $0.member == "ConnectScene" }!.id
    }

    @Test("first registration opens one session: ChooseConfiguration, ConnectScene, then inactive → active; ListApps shows it")
    func firstRegistration() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let app = try await FakeSceneApp.start(fixture, Self.notes, manifest: try F.manifest("Notes"))
        let id = try await Self.firstSession(app)
        #expect(app.calls.prefix(4).map(\.member) == ["ChooseConfiguration", "ConnectScene", "SceneChanged", "SceneChanged"])
        #expect(app.states(of: id) == [1, 0], "unattached → foregroundInactive → foregroundActive")
        let connect = try #require(app.calls.first { $0.member == "ConnectScene" })
        #expect(try connect.dictionary.value(forKey: "configurationName", as: String.self) == "Default")
        #expect(try connect.dictionary.value(forKey: "state", as: Int32.self) == -1)

        let cli = try await fixture.connect()
        let sessions = try await S.sessions(cli)
        #expect(sessions.count == 1)
        let session = try #require(sessions.first)
        #expect(try session.value(forKey: "persistentIdentifier", as: String.self) == id)
        #expect(try session.value(forKey: "bundleIdentifier", as: String.self) == Self.notes)
        #expect(try session.value(forKey: "configurationName", as: String.self) == "Default")
        #expect(try session.value(forKey: "state", as: Int32.self) == 0)
        #expect(try S.frame(session) == [48, 48, 960, 640])
        #expect(try session.value(forKey: "path", as: ObjectPath.self) == S.sessionPath(id))
        #expect(try session.value(forKey: "screen", as: UInt32.self) == 0)
        #expect(try session.value(forKey: "stackIndex", as: UInt32.self) == 0)
        #expect(try await S.property(cli, id, "State") == .string("foregroundActive"))
        #expect(try await S.property(cli, id, "AppID") == .string(Self.notes))
        #expect(try await S.property(cli, id, "Frame") == .structure([.double(48), .double(48), .double(960), .double(640)]))

        let apps = try await F.call(cli, "ListApps")[0].get([VariantDictionary].self)
        let listed = try #require(apps.first { (try? $0.value(forKey: "app-id", as: String.self)) == Self.notes })
        #expect(try listed.value(forKey: "shows-scenes", as: Bool.self))
        #expect(try listed.value(forKey: "scenes", as: UInt32.self) == 1)
        #expect(try listed.value(forKey: "state", as: String.self) == "foregroundActive")
        await app.quit()
        #expect(try await eventually(.seconds(30)) { try await S.property(cli, id, "State") == .string("unattached") },
                "an app that goes away leaves its session archived")
        #expect(try await S.sessions(cli).count == 1)
        await cli.close()
    }

    @Test("RequestActivation with an activity: the app chooses Editor, the new scene cascades and is active, the old one inactive; an unknown name means Default")
    func activationByActivity() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let app = try await FakeSceneApp.start(fixture, Self.notes, manifest: try F.manifest("Notes"),
                                               configurations: [Self.openNote: "Editor", "": "NoSuchConfiguration"])
        let first = try await Self.firstSession(app)
        let cli = try await fixture.connect()
        #expect(try await S.property(cli, first, "Configuration") == .string("Default"),
                "a name the manifest does not declare means its first configuration")

        let added = try await cli.subscribe(to: MatchRule(type: .signal, interface: S.interface, member: "SessionAdded"))
        let changed = try await cli.subscribe(to: MatchRule(type: .signal, interface: "org.freedesktop.DBus.Properties",
                                                            member: "PropertiesChanged", path: S.sessionPath(first)))
        let second = try await S.activate(cli, app: Self.notes, [
            "userActivity": S.activity(Self.openNote, userInfo: ["noteID": "groceries"]),
        ])
        #expect(second != first)
        var addedSignals = added.makeAsyncIterator()
        let signal = try #require(try await addedSignals.next())
        let body = try signal.body
        #expect(try body[1].get(String.self) == second && body[2].get(String.self) == Self.notes)
        #expect(body[0] == .objectPath(S.sessionPath(second)))
        var changes = changed.makeAsyncIterator()
        let change = try #require(try await changes.next())
        let changeBody = try change.body
        #expect(try changeBody[1].get(VariantDictionary.self)["State"] == .string("foregroundInactive"),
                "PropertiesChanged tells the old scene's new state")
        added.cancel()
        changed.cancel()
        // ChooseConfiguration and ConnectScene ran before RequestActivation returned.
        let choose = try #require(app.calls.first { $0.member == "ChooseConfiguration" && $0.id == second })
        let activities = choose.activities
        #expect(try activities.first?.value(forKey: "activityType", as: String.self) == Self.openNote)
        let connect = try #require(app.calls.first { $0.member == "ConnectScene" && $0.id == second })
        #expect(try connect.dictionary.value(forKey: "configurationName", as: String.self) == "Editor")
        try await app.waitForCalls { _ in app.states(of: second) == [1, 0] && app.states(of: first) == [1, 0, 1] }

        let sessions = try await S.sessions(cli, app: Self.notes)
        #expect(sessions.map { (try? $0.value(forKey: "persistentIdentifier", as: String.self)) ?? "" } == [second, first],
                "front to back")
        #expect(try S.frame(sessions[0]) == [80, 80, 960, 640], "cascaded 32 px from the front-most scene")
        #expect(try sessions[0].value(forKey: "stackIndex", as: UInt32.self) == 0)
        #expect(try sessions[1].value(forKey: "stackIndex", as: UInt32.self) == 1)
        #expect(try sessions[1].value(forKey: "state", as: Int32.self) == 1)

        // Bringing the first forward swaps the states again.
        app.clearCalls()
        #expect(try await S.activate(cli, app: "", session: first) == first)
        try await app.waitForCalls { _ in app.states(of: first) == [0] && app.states(of: second) == [1] }
        #expect(app.mostCallsAtOnce == 1, "the broker calls one app one call at a time")
        await app.quit()
        await cli.close()
    }

    @Test("placement right: the new scene takes the right half, the requesting one the left half (and is told)")
    func placement() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let app = try await FakeSceneApp.start(fixture, Self.notes, manifest: try F.manifest("Notes"))
        let first = try await Self.firstSession(app)
        let cli = try await fixture.connect()
        let second = try await S.activate(cli, app: Self.notes, ["placement": "right", "requestingScene": .string(first)])
        let third = try await S.activate(cli, app: Self.notes, ["placement": "left"])
        let frames = Dictionary(uniqueKeysWithValues: try await S.sessions(cli).map {
            (try $0.value(forKey: "persistentIdentifier", as: String.self), try S.frame($0))
        })
        #expect(frames[third] == [0, 0, 960, 1080])
        #expect(frames[second] == [960, 0, 960, 1080], "the scene beneath (the front-most) takes the other half")
        #expect(frames[first] == [0, 0, 960, 1080])
        try await app.waitForCalls { calls in
            calls.contains { $0.member == "SceneChanged" && $0.id == first && $0.dictionary["frame"] != nil }
        }
        // third covers first entirely: first is in the background; second is beside it.
        try await app.waitForCalls { _ in app.states(of: first).last == 2 && app.states(of: second).last == 1 }
        #expect(try await S.property(cli, first, "State") == .string("background"))
        await app.quit()
        await cli.close()
    }

    @Test("an app whose manifest does not support multiple scenes: a second scene is MultipleScenesNotSupported")
    func multipleScenesNotSupported() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let app = try await FakeSceneApp.start(fixture, Self.notes, manifest: try S.singleSceneNotes())
        let first = try await Self.firstSession(app)
        let cli = try await fixture.connect()
        let refused = await F.failure { _ = try await S.activate(cli, app: Self.notes) }
        #expect(refused?.name == "org.ferry.Error.MultipleScenesNotSupported")
        #expect(try await S.sessions(cli).count == 1)
        #expect(try await S.activate(cli, app: Self.notes, session: first) == first, "the existing one can be activated")
        await app.quit()
        await cli.close()
    }

    @Test("activation conditions: the scene preferring the target gets ContinueActivity; one that can is next; else a new scene")
    func activationConditions() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let app = try await FakeSceneApp.start(fixture, Self.notes, manifest: try F.manifest("Notes"))
        let list = try await Self.firstSession(app)
        let cli = try await fixture.connect()
        let groceries = try await S.activate(cli, app: Self.notes)
        try await S.update(app.connection, groceries, ["activationConditions": [
            "canActivateFor": "self == 'groceries'", "prefersToActivateFor": "self == 'groceries'",
        ].dbusValue])
        // list (default conditions: can show anything) is brought forward; groceries must still win.
        _ = try await S.activate(cli, app: "", session: list)
        app.clearCalls()

        let chosen = try await S.activate(cli, app: Self.notes, ["userActivity": S.activity(Self.openNote, target: "groceries")])
        #expect(chosen == groceries, "the scene that prefers it")
        let continued = try #require(app.calls.first { $0.member == "ContinueActivity" })
        #expect(continued.id == groceries)
        #expect(try continued.dictionary.value(forKey: "targetContentIdentifier", as: String.self) == "groceries")

        let other = try await S.activate(cli, app: Self.notes, ["userActivity": S.activity(Self.openNote, target: "ideas")])
        #expect(other == list, "none prefers ideas; list can show it")

        try await S.update(app.connection, list, ["activationConditions": ["canActivateFor": "self == 'list'"].dbusValue])
        let fresh = try await S.activate(cli, app: Self.notes, ["userActivity": S.activity(Self.openNote, target: "ideas")])
        #expect(fresh != list && fresh != groceries, "no scene can: a new one")
        #expect(try await S.sessions(cli).count == 3)
        await app.quit()
        await cli.close()
    }

    @Test("one active scene per screen across apps: when the front app quits, the scene beneath is told it is active")
    func otherAppsAreTold() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let gallery = try await FakeSceneApp.start(fixture, "org.ferry.gallery", manifest: try F.manifest("Gallery"))
        let photo = try await Self.firstSession(gallery)
        let app = try await FakeSceneApp.start(fixture, Self.notes, manifest: try F.manifest("Notes"))
        _ = try await Self.firstSession(app)
        try await gallery.waitForCalls { _ in gallery.states(of: photo) == [1, 0, 1] }
        let cli = try await fixture.connect()
        let apps = try await F.call(cli, "ListApps")[0].get([VariantDictionary].self)
        #expect(try apps.map { try $0.value(forKey: "state", as: String.self) } == ["foregroundInactive", "foregroundActive"],
                "gallery, notes (sorted by app id)")
        await app.quit()
        try await gallery.waitForCalls { _ in gallery.states(of: photo) == [1, 0, 1, 0] }
        await gallery.quit()
        await cli.close()
    }

    @Test("Paste: the scene's app runs PerformPaste; its result comes back")
    func paste() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let app = try await FakeSceneApp.start(fixture, Self.notes, manifest: try F.manifest("Notes"))
        let id = try await Self.firstSession(app)
        let cli = try await fixture.connect()
        let result = try await S.call(cli, "Paste", [.string(""), .string("general"), (["app": .string(Self.notes)] as [String: DBusValue]).dbusValue])[0]
            .get(VariantDictionary.self)
        #expect(try result.value(forKey: "accepted", as: Bool.self))
        #expect(try result.value(forKey: "message", as: String.self) == "pasted 5 characters")
        let call = try #require(app.calls.first { $0.member == "PerformPaste" })
        #expect(call.id == id && call.arguments[1] == .string("general"))
        let bad = await F.failure { _ = try await S.call(cli, "Paste", [.string(id), .string("no good"), [String: DBusValue]().dbusValue]) }
        #expect(bad?.name == "org.ferry.Error.InvalidArgument")
        await app.quit()
        #expect(try await eventually(.seconds(30)) { try await S.property(cli, id, "State") == .string("unattached") })
        let gone = await F.failure { _ = try await S.call(cli, "Paste", [.string(id), .string("general"), [String: DBusValue]().dbusValue]) }
        #expect(gone?.name == "org.ferry.Error.Unavailable")
        await cli.close()
    }
}
