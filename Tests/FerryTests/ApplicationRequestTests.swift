import DBus
import Ferry
import FerryModel
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// The UIApplication-style requests go to `org.ferry.Scenes1`; the broker's calls back into the
/// app while a request waits are served (the new scene connects before the request returns).
@Suite("Ferry: Application requests over org.ferry.Scenes1")
struct ApplicationRequestTests {
    @Test("requestSceneSessionActivation(nil, activity): the scene connects (Viewer) before it returns; the options travel")
    func activation() async throws {
        try await SceneFixture.with { f in
            var activity = try UserActivity(activityType: "org.ferry.test.view")
            activity.userInfo["item"] = .string("lake")
            let id = try await f.application.requestSceneSessionActivation(
                nil, userActivity: activity,
                options: SceneActivationRequestOptions(requestingScene: "req-1", placement: .right,
                                                       urls: [URL(string: "file:///tmp/lake.png")!], screen: 1))
            let scene = try #require(f.application.scene(for: id))
            #expect(scene.session.configurationName == "Viewer")
            #expect(scene.activationState == .foregroundActive)
            #expect(f.events.of(id).contains("connect \(id) Viewer item=lake"))
            let request = try #require(f.broker.state.withLock { $0.requests.first })
            #expect(request.body[0] == .string(FakeBroker.appID))
            #expect(request.body[1] == .string(""))
            let options = try request.body[2].get([String: DBusValue].self).mapValues(\.unwrappingVariants)
            #expect(options["placement"] == .string("right"))
            #expect(options["requestingScene"] == .string("req-1"))
            #expect(options["screen"] == .uint32(1))
            #expect(options["urls"] == .array(of: .string, [.string("file:///tmp/lake.png")]))
            let sent = try UserActivity(wireDictionary: FakeBroker.wire(try #require(options["userActivity"])))
            #expect(sent.activityType == "org.ferry.test.view")
            #expect(sent.userInfo["item"] == .string("lake"))

            // An existing session is brought forward by its id.
            #expect(try await f.application.requestSceneSessionActivation(scene.session, userActivity: nil) == id)
            #expect(f.broker.state.withLock { $0.requests.last?.body[1] } == .string(id))
        }
    }

    @Test("a broker error keeps its name: MultipleScenesNotSupported, NotFound; a bad activity fails before the bus")
    func errors() async throws {
        try await SceneFixture.with { f in
            var second = try f.broker.newSession()
            second.persistentIdentifier = "second"
            let error = await #expect(throws: FerryError.self) {
                try await f.application.requestSceneSessionActivation(second, userActivity: nil)
            }
            #expect(error?.dbusErrorName == "org.ferry.Error.MultipleScenesNotSupported")
            #expect(error?.message == "one scene only")
            var missing = second
            missing.persistentIdentifier = "not-a-session"
            let notFound = await #expect(throws: FerryError.self) {
                try await f.application.requestSceneSessionActivation(missing, userActivity: nil)
            }
            #expect(notFound?.code == .notFound)

            var bad = try UserActivity(activityType: "org.ferry.test.view")
            bad.requiredUserInfoKeys = ["item"]
            let invalid = await #expect(throws: FerryError.self) {
                try await f.application.requestSceneSessionActivation(nil, userActivity: bad)
            }
            #expect(invalid?.code == .invalidArgument)
            #expect(invalid?.message.contains("requiredUserInfoKeys") == true)
            #expect(f.broker.state.withLock { $0.requests.count } == 2)
        }
    }

    @Test("refresh reaches sceneDidRefresh; destruction disconnects then discards; openSessions lists the app's sessions")
    func refreshDestroyList() async throws {
        try await SceneFixture.with { f in
            let a = try f.broker.newSession()
            let b = try f.broker.newSession(title: "B")
            try await f.broker.connect(a)
            try await f.broker.connect(b)
            let listed = try await f.application.openSessions
            #expect(listed.map(\.persistentIdentifier) == [a.persistentIdentifier, b.persistentIdentifier].sorted())
            #expect(listed.first { $0.persistentIdentifier == b.persistentIdentifier }?.title == "B")

            try await f.application.requestSceneSessionRefresh(a)
            #expect(f.events.all.last == "refresh \(a.persistentIdentifier)")

            try await f.application.requestSceneSessionDestruction(a, options: SceneDestructionRequestOptions(animation: .commit))
            #expect(f.events.all.suffix(2) == ["disconnect \(a.persistentIdentifier)", "discard \(a.persistentIdentifier)"])
            let request = try #require(f.broker.state.withLock { $0.requests.last })
            #expect(request.member == "RequestDestruction")
            #expect(try request.body[1].get([String: DBusValue].self)["animation"]?.unwrappingVariants == .string("commit"))
            #expect(f.application.connectedScenes.map(\.persistentIdentifier) == [b.persistentIdentifier])
            #expect(try await f.application.openSessions.map(\.persistentIdentifier) == [b.persistentIdentifier])
        }
    }

    @Test("Scene setters send SceneSession1.Update; a frame under 1×1 is InvalidArgument without a call; saveState sends the delegate's activity")
    func sceneUpdates() async throws {
        try await SceneFixture.with { f in
            let session = try f.broker.newSession()
            let id = session.persistentIdentifier
            try await f.broker.connect(session)
            let scene = try #require(f.application.scene(for: id))
            try await f.broker.eventually { f.broker.updates(of: id).count == 1 }
            try await scene.setTitle("Hello")
            try await scene.setFrame(Rect(x: 10, y: 20, width: 300, height: 200))
            let tooSmall = await #expect(throws: FerryError.self) {
                try await scene.setFrame(Rect(x: 0, y: 0, width: 0.5, height: 10))
            }
            #expect(tooSmall?.code == .invalidArgument)
            try await f.broker.callClient("ContinueActivity", [.string(id), FakeBroker.dbus(try SceneDelegateFlowTests.viewActivity("sea").wireDictionary())])
            try await f.broker.eventually { f.broker.updates(of: id).count == 4 }
            await f.application.saveState()
            let updates = f.broker.updates(of: id)
            #expect(updates.count == 5)
            #expect(updates[1]["title"]?.unwrappingVariants == .string("Hello"))
            #expect(FakeBroker.wire(try #require(updates[2]["frame"]))["width"] == .double(300))
            #expect(SceneDelegateFlowTests.restoredItem(updates[4]) == "sea")
            #expect(scene.title == "Hello")
            #expect(scene.session.frame == Rect(x: 10, y: 20, width: 300, height: 200))
        }
    }
}
