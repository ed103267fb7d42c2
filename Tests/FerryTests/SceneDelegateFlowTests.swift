import DBus
import Ferry
import FerryModel
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// The broker's `org.ferry.Client1` scene calls, made by a fake broker on a real private bus,
/// reach the app's delegates in the seeds' order, and the library stores each scene's state.
@Suite("Ferry: scene delegate flow through org.ferry.Client1")
struct SceneDelegateFlowTests {
    static func viewActivity(_ item: String) throws -> UserActivity {
        var activity = try UserActivity(activityType: "org.ferry.test.view")
        activity.userInfo["item"] = .string(item)
        return activity
    }

    /// The item of the restoration activity in an Update, nil when it has none.
    static func restoredItem(_ changes: [String: DBusValue]) -> String? {
        guard let value = changes["stateRestorationActivity"] else { return nil }
        return (try? UserActivity(wireDictionary: FakeBroker.wire(value)))?.userInfo["item"]?.stringValue
    }

    @Test("configurationForConnecting → willConnectTo → state changes, in order; the state is saved after each")
    func connectionOrder() async throws {
        try await SceneFixture.with { f in
            let session = try f.broker.newSession()
            let id = session.persistentIdentifier
            let chosen = try await f.broker.connect(session, options: SceneConnectionOptions(userActivities: [Self.viewActivity("lake")]))
            #expect(chosen == "Viewer")
            try await f.broker.change(id, through: [.foregroundInactive, .foregroundActive])
            #expect(f.events.of(id) == [
                "configure \(id) org.ferry.test.view",
                "connect \(id) Viewer item=lake",
                "state \(id) unattached->foregroundInactive",
                "state \(id) foregroundInactive->foregroundActive",
            ])
            let scene = try #require(f.application.connectedScenes.first)
            #expect(f.application.connectedScenes.count == 1)
            #expect(scene.persistentIdentifier == id)
            #expect(scene.activationState == .foregroundActive)
            #expect(scene.session.configurationName == "Viewer")
            // Saved after willConnectTo and after each of the two changes, in order, after each reply.
            try await f.broker.eventually { f.broker.updates(of: id).count >= 3 }
            let updates = f.broker.updates(of: id)
            #expect(updates.count == 3)
            #expect(updates.allSatisfy { Self.restoredItem($0) == "lake" })
        }
    }

    @Test("flushing on the way out saves every scene at once and gives up on a broker that does not answer, with a Timeout")
    func flushDoesNotHang() async throws {
        try await SceneFixture.with { f in
            for _ in 0..<3 { _ = try await f.broker.connect(try f.broker.newSession()) }
            f.broker.state.withLock { $0.holdUpdates = true }
            let started = ContinuousClock.now
            // The caller learns that the scenes' state did not reach the broker.
            do {
                try await f.client.flush(sceneSaveLimit: .seconds(1))
                Issue.record("the flush did not say the scenes' state was not saved")
            } catch {
                #expect((error as? FerryError)?.code == .timeout, "\(error)")
            }
            let elapsed = ContinuousClock.now - started
            #expect(elapsed < .seconds(3), "three unanswered saves took \(elapsed), not one limit of 1 s")
            #expect(elapsed >= .milliseconds(900), "it waited for the broker first: \(elapsed)")
            f.broker.state.withLock { $0.holdUpdates = false }
        }
    }

    @Test("no activity: the manifest's default configuration; a restored session connects from its restoration activity")
    func defaultAndRestoration() async throws {
        try await SceneFixture.with { f in
            let plain = try f.broker.newSession()
            #expect(try await f.broker.connect(plain) == "Default")
            #expect(f.events.of(plain.persistentIdentifier).last == "connect \(plain.persistentIdentifier) Default item=-")

            let archived = try f.broker.newSession(restoration: Self.viewActivity("forest"))
            #expect(try await f.broker.connect(archived) == "Viewer")
            #expect(f.events.of(archived.persistentIdentifier).last == "connect \(archived.persistentIdentifier) Viewer item=forest")
            #expect(f.application.connectedScenes.map(\.persistentIdentifier)
                    == [plain.persistentIdentifier, archived.persistentIdentifier].sorted())
        }
    }

    @Test("a broker restart: the client registers again with scenes=true; ConnectScene for a shown scene is a reconnection")
    func reconnection() async throws {
        try await ClientFixture.with(withBroker: false) { fixture in
            let first = try await FakeBroker.start(on: fixture.bus)
            let client = try await fixture.client()
            let events = SceneEvents()
            let application = try await Application.register(client: client, manifest: sceneTestManifest(),
                                                             delegate: RecordingAppDelegate(events: events))
            let session = try first.newSession()
            let id = session.persistentIdentifier
            try await first.connect(session, options: SceneConnectionOptions(userActivities: [Self.viewActivity("lake")]))
            try await first.change(id, through: [.foregroundInactive, .foregroundActive])
            let scene = try #require(application.scene(for: id))
            try await scene.setTitle("Lake")
            try await scene.setUserInfo(["item": .string("lake")])
            try await scene.setActivationConditions(SceneActivationConditions(prefersToActivateFor: "self == 'lake'"))
            #expect(first.updates(of: id).contains { $0["title"] == .string("Lake") })

            // The broker goes away and another, which kept the session, takes its name.
            await first.connection.close()
            let second = try await FakeBroker.start(on: fixture.bus, knowing: [session])
            try await second.eventually { !second.registrations.isEmpty }
            #expect(second.registrations.count == 1)
            #expect(second.registrations.first?["scenes"]?.unwrappingVariants == .boolean(true))

            // It reconnects the archived session: no second willConnectTo; the app's values go back.
            var archived = session
            archived.title = "Lake"
            try await second.connect(archived)
            try await second.eventually { second.updates(of: id).contains { $0["title"] != nil } }
            let resent = try #require(second.updates(of: id).first { $0["title"] != nil })
            #expect(resent["title"]?.unwrappingVariants == .string("Lake"))
            #expect(FakeBroker.wire(try #require(resent["userInfo"]))["item"] == .string("lake"))
            let conditions = try SceneActivationConditions(wireDictionary: FakeBroker.wire(try #require(resent["activationConditions"])))
            #expect(conditions.prefersToActivate(for: "lake"))
            #expect(Self.restoredItem(resent) == "lake")
            #expect(events.of(id).filter { $0.hasPrefix("connect") || $0.hasPrefix("configure") }.count == 2)
            #expect(application.connectedScenes.count == 1)
            #expect(application.scene(for: id) === scene)

            await client.close()
            await second.connection.close()
        }
    }

    @Test("a broker that restarted without a shown scene's session: the scene disconnects after the re-registration; a scene connected meanwhile stays")
    func brokerLostTheSession() async throws {
        try await ClientFixture.with(withBroker: false) { fixture in
            let first = try await FakeBroker.start(on: fixture.bus)
            let client = try await fixture.client()
            let events = SceneEvents()
            let application = try await Application.register(client: client, manifest: sceneTestManifest(),
                                                             delegate: RecordingAppDelegate(events: events))
            let kept = try first.newSession()
            let lost = try first.newSession()
            try await first.connect(kept)
            try await first.connect(lost)
            await first.connection.close()
            // The new broker connects a new scene (its first window) after taking the list it
            // answers the app with: that scene is not in the list, yet it is not lost.
            let fresh = try first.newSession()
            let second = try await FakeBroker.start(on: fixture.bus, knowing: [kept], connectDuringList: fresh)
            try await second.eventually { events.all.contains("disconnect \(lost.persistentIdentifier)") }
            #expect(application.connectedScenes.map(\.persistentIdentifier)
                    == [kept.persistentIdentifier, fresh.persistentIdentifier].sorted())
            #expect(!events.all.contains("disconnect \(kept.persistentIdentifier)"))
            #expect(!events.all.contains("disconnect \(fresh.persistentIdentifier)"))
            await client.close()
            await second.connection.close()
        }
    }

    @Test("a reconnection whose options carry an activity (queued while the broker did not know the app): scene(_:continue:), then the re-send")
    func reconnectionWithQueuedActivity() async throws {
        try await SceneFixture.with { f in
            let session = try f.broker.newSession()
            let id = session.persistentIdentifier
            try await f.broker.connect(session, options: SceneConnectionOptions(userActivities: [Self.viewActivity("lake")]))
            try await f.broker.eventually { f.broker.updates(of: id).count == 1 }
            // The session connects again (as after a broker restart), with an activity for it.
            try await f.broker.connect(session, options: SceneConnectionOptions(userActivities: [Self.viewActivity("dunes")]))
            #expect(f.events.of(id).filter { $0.hasPrefix("connect") }.count == 1)
            #expect(f.events.of(id).last == "continue \(id) item=dunes")
            try await f.broker.eventually { f.broker.updates(of: id).count == 2 }
            let resent = try #require(f.broker.updates(of: id).last)
            #expect(resent["title"] != nil)
            #expect(Self.restoredItem(resent) == "dunes")
        }
    }

    @Test("the re-send after a reconnection carries the title set while the delegate was asked for its activity")
    func resendSendsTheLatestTitle() async throws {
        try await ClientFixture.with(withBroker: false) { fixture in
            let broker = try await FakeBroker.start(on: fixture.bus)
            let client = try await fixture.client()
            _ = try await Application.register(client: client, manifest: sceneTestManifest(), delegate: RetitlingAppDelegate())
            let session = try broker.newSession()
            let id = session.persistentIdentifier
            func titles() -> [String] {
                broker.updates(of: id).compactMap { changes in
                    if case .string(let title)? = changes["title"]?.unwrappingVariants { return title }
                    return nil
                }
            }
            try await broker.connect(session)
            try await broker.eventually { titles() == ["Title 1"] && broker.updates(of: id).count == 2 }
            try await broker.connect(session)  // a reconnection: the re-send
            try await broker.eventually { titles().count == 3 }
            #expect(titles() == ["Title 1", "Title 2", "Title 2"])
            await client.close()
            await broker.connection.close()
        }
    }

    @Test("ContinueActivity reaches scene(_:continue:) and the new state is saved; RefreshScene reaches sceneDidRefresh")
    func continueAndRefresh() async throws {
        try await SceneFixture.with { f in
            let session = try f.broker.newSession()
            let id = session.persistentIdentifier
            try await f.broker.connect(session, options: SceneConnectionOptions(userActivities: [Self.viewActivity("lake")]))
            try await f.broker.eventually { f.broker.updates(of: id).count == 1 }
            try await f.broker.callClient("ContinueActivity", [.string(id), FakeBroker.dbus(try Self.viewActivity("dunes").wireDictionary())])
            try await f.broker.callClient("RefreshScene", [.string(id)])
            #expect(f.events.of(id).suffix(2) == ["continue \(id) item=dunes", "refresh \(id)"])
            try await f.broker.eventually { f.broker.updates(of: id).count == 2 }
            #expect(Self.restoredItem(try #require(f.broker.updates(of: id).last)) == "dunes")
        }
    }

    @Test("DisconnectScene: sceneDidDisconnect, the scene leaves connectedScenes; DiscardSceneSessions: didDiscardSceneSessions")
    func disconnectAndDiscard() async throws {
        try await SceneFixture.with { f in
            let a = try f.broker.newSession()
            let b = try f.broker.newSession()
            try await f.broker.connect(a)
            try await f.broker.connect(b)
            let sceneA = try #require(f.application.scene(for: a.persistentIdentifier))
            try await f.broker.change(a.persistentIdentifier, through: [.foregroundInactive])
            try await f.broker.callClient("DisconnectScene", [.string(a.persistentIdentifier),
                                                              ["reason": DBusValue.string("destroyed")].dbusValue])
            #expect(f.events.all.last == "disconnect \(a.persistentIdentifier)")
            #expect(sceneA.activationState == .unattached)
            #expect(f.application.connectedScenes.map(\.persistentIdentifier) == [b.persistentIdentifier])

            // A discard while a scene is still shown disconnects it first; archived ids are passed on.
            try await f.broker.callClient("DiscardSceneSessions", [.array(of: .string, [.string(a.persistentIdentifier),
                                                                                         .string(b.persistentIdentifier)])])
            #expect(f.events.all.suffix(2) == ["disconnect \(b.persistentIdentifier)",
                                               "discard \(a.persistentIdentifier),\(b.persistentIdentifier)"])
            #expect(f.application.connectedScenes.isEmpty)
        }
    }

    @Test("calls from a connection that does not own org.ferry.Broker are PermissionDenied and change nothing")
    func strangerRefused() async throws {
        try await SceneFixture.with { f in
            let stranger = try await Connection(address: f.bus.address)
            let session = try f.broker.newSession()
            let wire = FakeBroker.dbus(try session.wireDictionary())
            for (member, body) in [("ConnectScene", [wire, [String: DBusValue]().dbusValue]),
                                   ("ChooseConfiguration", [wire, [String: DBusValue]().dbusValue]),
                                   ("DiscardSceneSessions", [DBusValue.array(of: .string, [.string("x")])])] as [(MemberName, [DBusValue])] {
                await #expect {
                    _ = try await stranger.call(destination: f.client.connection.uniqueName, path: FerryClient.clientPath,
                                                interface: "org.ferry.Client1", member: member, body: body, timeout: .seconds(10))
                } throws: { ($0 as? DBusError)?.name.rawValue == "org.ferry.Error.PermissionDenied" }
            }
            #expect(f.events.all.isEmpty)
            #expect(f.application.connectedScenes.isEmpty)
            await stranger.close()
        }
    }

    @Test("malformed arguments are InvalidArgument naming the key; an unknown scene is NotFound")
    func badArguments() async throws {
        try await SceneFixture.with { f in
            func expectError(_ name: String, mentioning text: String, _ member: MemberName, _ body: [DBusValue]) async {
                await #expect {
                    try await f.broker.callClient(member, body)
                } throws: { error in
                    guard let error = error as? DBusError else { return false }
                    return error.name.rawValue == name && error.message.contains(text)
                }
            }
            var wire = try f.broker.newSession().wireDictionary()
            wire["bundleIdentifier"] = nil
            await expectError("org.ferry.Error.InvalidArgument", mentioning: "bundleIdentifier", "ConnectScene",
                              [FakeBroker.dbus(wire), [String: DBusValue]().dbusValue])
            let session = try f.broker.newSession()
            try await f.broker.connect(session)
            await expectError("org.ferry.Error.InvalidArgument", mentioning: "state", "SceneChanged",
                              [.string(session.persistentIdentifier), ["state": DBusValue.int32(7)].dbusValue])
            await expectError("org.ferry.Error.InvalidArgument", mentioning: "userActivities[0]", "ConnectScene",
                              [FakeBroker.dbus(try session.wireDictionary()),
                               ["userActivities": DBusValue.array(of: "a{sv}", [["activityType": DBusValue.string("no spaces!")].dbusValue])].dbusValue])
            await expectError("org.ferry.Error.NotFound", mentioning: "nope", "RefreshScene", [.string("nope")])
            await expectError("org.ferry.Error.NotFound", mentioning: "nope", "SceneChanged",
                              [.string("nope"), ["state": DBusValue.int32(0)].dbusValue])
            #expect(f.events.of(session.persistentIdentifier).filter { $0.hasPrefix("state") }.isEmpty)
        }
    }
}

/// An app whose scenes retitle themselves each time they are asked for their restoration activity.
final class RetitlingAppDelegate: ApplicationDelegate {
    func application(_ application: Application, sceneDelegateFor session: SceneSession) -> any SceneDelegate {
        RetitlingSceneDelegate()
    }
}

final class RetitlingSceneDelegate: SceneDelegate {
    let asked = Mutex(0)

    func stateRestorationActivity(for scene: Scene) async -> UserActivity? {
        let count = asked.withLock { count in
            count += 1
            return count
        }
        try? await scene.setTitle("Title \(count)")
        return nil
    }
}
