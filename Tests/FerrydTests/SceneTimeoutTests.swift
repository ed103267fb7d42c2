import DBus
import FerryBroker
import FerryTestSupport
import Foundation
import Testing

/// Slow and dying apps: the documented timeouts hold and nothing wedges; a foreground scene lets
/// its app paste.
@Suite("ferryd scenes: slow and dying apps, the foreground paste rule")
struct SceneTimeoutTests {
    typealias F = FerrydFixture
    typealias S = SceneBus
    static let notes = SceneServiceTests.notes

    @Test("ChooseConfiguration unanswered for its timeout: the manifest's first configuration is used and the scene connects")
    func slowChoice() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        // ferryd's 5 s, shortened: the broker must wait all of it and then go on.
        let daemon = try await fixture.start(["--scene-choose-timeout", "2"])
        defer { daemon.stop() }
        let started = ContinuousClock.now
        let app = try await FakeSceneApp.start(fixture, Self.notes, manifest: try F.manifest("Notes"),
                                               configurations: ["": "Editor"],
                                               behaviour: .init(chooseDelay: .seconds(5)))
        // Meanwhile another app is served at once, and so are requests.
        let gallery = try await FakeSceneApp.start(fixture, "org.ferry.gallery", manifest: try F.manifest("Gallery"))
        _ = try await SceneServiceTests.firstSession(gallery)
        let cli = try await fixture.connect()
        #expect(try await S.sessions(cli).count == 2)

        let calls = try await app.waitForCalls { $0.contains { $0.member == "SceneChanged" } }
        let id = try #require(calls.first { $0.member == "ConnectScene" }).id
        let elapsed = ContinuousClock.now - started
        #expect(elapsed >= .milliseconds(1900), "\(elapsed)")
        let galleryChose = try #require(gallery.calls.first { $0.member == "ChooseConfiguration" }).at
        let notesConnected = try #require(calls.first { $0.member == "ConnectScene" }).at
        #expect(galleryChose < notesConnected, "the slow app held up only its own scenes")
        let members = calls.map(\.member)
        #expect(members.firstIndex(of: "ConnectScene")! < members.firstIndex(of: "(late answer)") ?? members.count,
                "the broker went on without the answer")
        #expect(try await S.property(cli, id, "Configuration") == .string("Default"), "the late Editor answer is ignored")
        await gallery.quit()
        await app.quit()
        await cli.close()
    }

    @Test("an app dying inside ConnectScene: RequestActivation fails Unavailable at once, the new session is gone, the broker serves on")
    func dyingApp() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let app = try await FakeSceneApp.start(fixture, Self.notes, manifest: try F.manifest("Notes"),
                                               behaviour: .init(dieInConnect: 2))
        let first = try await SceneServiceTests.firstSession(app)
        let cli = try await fixture.connect()
        let started = ContinuousClock.now
        let failure = await F.failure { _ = try await S.activate(cli, app: Self.notes) }
        #expect(failure?.name == "org.ferry.Error.Unavailable", "\(String(describing: failure))")
        #expect(ContinuousClock.now - started < .seconds(5))
        let sessions = try await S.sessions(cli)
        #expect(sessions.count == 1 && (try? sessions[0].value(forKey: "persistentIdentifier", as: String.self)) == first)
        #expect(try await eventually(.seconds(30)) { try await S.property(cli, first, "State") == .string("unattached") })
        // The app comes back: its session reconnects.
        let again = try await FakeSceneApp.start(fixture, Self.notes, manifest: try F.manifest("Notes"))
        try await again.waitForCalls { $0.contains { $0.member == "ConnectScene" && $0.id == first } }
        await again.quit()
        await cli.close()
    }

    @Test("DiscardSceneSessions unanswered for its timeout: the discard is kept and delivered again at the app's next registration")
    func unansweredDiscard() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        // ferryd's 10 s for scene calls, shortened.
        let daemon = try await fixture.start(["--scene-call-timeout", "3"])
        defer { daemon.stop() }
        let app = try await FakeSceneApp.start(fixture, Self.notes, manifest: try F.manifest("Notes"),
                                               behaviour: .init(discardDelay: .seconds(6)))
        let first = try await SceneServiceTests.firstSession(app)
        let cli = try await fixture.connect()
        let second = try await S.activate(cli, app: Self.notes)
        // The broker waits out its 3 s for the answer (the call's own timeout is 20 s).
        _ = try await S.call(cli, "RequestDestruction", [.string(second), [String: DBusValue]().dbusValue])
        #expect(app.calls.contains { $0.member == "DiscardSceneSessions" })
        await app.quit()
        #expect(try await eventually(.seconds(30)) { try await S.property(cli, first, "State") == .string("unattached") })

        let again = try await FakeSceneApp.start(fixture, Self.notes, manifest: try F.manifest("Notes"))
        try await again.waitForCalls { $0.contains { $0.member == "ConnectScene" && $0.id == first } }
        let discard = try #require(again.calls.first, "the app was never told")
        try #require(discard.member == "DiscardSceneSessions", "\(again.calls)")
        #expect(try discard.arguments[0].get([String].self) == [second])
        await again.quit()
        await cli.close()
    }

    @Test("paste policy: an app with a foreground scene is asked about without a user action (iOS 16); one without scenes may not paste")
    func foregroundScenePastes() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let policy = fixture.stateDir.deletingLastPathComponent().appendingPathComponent("policy-\(UUID().uuidString)")
        let daemon = try await fixture.start(["--policy", policy.path])
        defer { daemon.stop() }
        let cli = try await fixture.connect()
        try await F.setItems(cli, [F.item([F.representation("public.utf8-plain-text", "hello")])])
        let app = try await FakeSceneApp.start(fixture, Self.notes, manifest: try F.manifest("Notes"))
        _ = try await SceneServiceTests.firstSession(app)
        let read = Task { try await F.read(app.connection, 0, "public.text") }
        var pending: [VariantDictionary] = []
        _ = try await eventually {
            pending = try await F.call(cli, "PendingPasteConsents")[0].get([VariantDictionary].self)
            return !pending.isEmpty
        }
        #expect(try pending.first?.value(forKey: "reader-app", as: String.self) == Self.notes, "its scene is in the foreground: asked")
        let id = try #require(try pending.first?.value(forKey: "id", as: UInt64.self))
        _ = try await F.call(cli, "AnswerPasteConsent", [.uint64(id), .string("allow"), .variantDictionary([:])])
        #expect(try await read.value.size == 5, "allowed by the user")
        let gallery = try await fixture.connect()
        try await F.register(gallery, "org.ferry.gallery", manifest: try F.manifest("Gallery"))
        let denied = await F.failure { _ = try await F.read(gallery, 0, "public.text") }
        #expect(denied?.name == "org.ferry.Error.PermissionDenied")
        await gallery.close()
        await app.quit()
        await cli.close()
    }

    @Test("the scene timeouts: 5 s for ChooseConfiguration and 10 s for the other calls unless ferryd is told otherwise; nonsense refused")
    func timeoutOptions() async throws {
        let defaults = SceneService.Timeouts()
        #expect(defaults.choose == .seconds(5) && defaults.call == .seconds(10) && defaults.paste == .seconds(30))
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        for flag in ["--scene-choose-timeout", "--scene-call-timeout"] {
            let bad = try await fixture.run([flag, "0"])
            #expect(bad.status == 64 && bad.stderr.contains(flag), "\(bad)")
        }
    }
}

/// A request for a session whose scene is connecting at that moment (a restore held up by a
/// slow app) is not lost: the activity reaches the scene once it has connected.
@Suite("ferryd scenes: a request during a restore")
struct SceneRestoreRaceTests {
    typealias F = FerrydFixture
    typealias S = SceneBus
    static let notes = SceneServiceTests.notes

    @Test("an activity for a session that is connecting arrives as ContinueActivity after ConnectScene")
    func activityDuringRestore() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let first = try await FakeSceneApp.start(fixture, Self.notes, manifest: try F.manifest("Notes"))
        let id = try await SceneServiceTests.firstSession(first)
        await first.quit()
        let cli = try await fixture.connect()
        #expect(try await eventually(.seconds(30)) {
            try await S.sessions(cli).allSatisfy { (try? $0.value(forKey: "state", as: Int32.self)) == -1 }
        }, "archived once the app is gone")

        // The app comes back slowly: its restore waits 2 s in ChooseConfiguration.
        let again = try await FakeSceneApp.start(fixture, Self.notes, manifest: try F.manifest("Notes"),
                                                 behaviour: .init(chooseDelay: .seconds(2)))
        _ = try await again.waitForCalls { $0.contains { $0.member == "ChooseConfiguration" } }
        let note = S.activity("org.ferry.notes.open-note", userInfo: ["noteID": .string("groceries")])
        #expect(try await S.activate(cli, app: Self.notes, session: id, ["userActivity": note]) == id)

        let calls = try await again.waitForCalls { $0.contains { $0.member == "ContinueActivity" } }
        let members = calls.map(\.member)
        let connected = try #require(members.firstIndex(of: "ConnectScene"))
        let continued = try #require(members.firstIndex(of: "ContinueActivity"))
        #expect(connected < continued, "\(members)")
        #expect(calls[continued].id == id)
        await again.quit()
        await cli.close()
    }
}

/// A new scene that fails to connect leaves the desktop as it was.
@Suite("ferryd scenes: a failed new scene")
struct SceneFailedPlacementTests {
    typealias F = FerrydFixture
    typealias S = SceneBus

    @Test("the scene beneath a failed half-screen placement gets its frame back")
    func placementUndone() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let app = try await FakeSceneApp.start(fixture, SceneServiceTests.notes, manifest: try F.manifest("Notes"),
                                               behaviour: .init(dieInConnect: 2))
        let first = try await SceneServiceTests.firstSession(app)
        let cli = try await fixture.connect()
        let before = try S.frame(try #require(try await S.session(cli, first)))
        let failure = await F.failure { _ = try await S.activate(cli, app: SceneServiceTests.notes, ["placement": "right"]) }
        #expect(failure != nil, "the app died while connecting the new scene")
        #expect(try S.frame(try #require(try await S.session(cli, first))) == before,
                "the scene beneath is back where it was, not in the left half")
        await cli.close()
    }
}
