import DBus
import Ferry
import FerryModel
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// The client library against the real ferryd scene service on a private bus.
@Suite("Ferry: Application with the real ferryd")
struct ApplicationEndToEndTests {
    @Test("first scene, a Viewer by activity, paste into it, app restart restores both as they were, destruction discards")
    func lifecycle() async throws {
        try await ClientFixture.with { fixture in
            let observer = try await fixture.connection()
            func sessions() async throws -> [VariantDictionary] {
                let reply = try await observer.call(destination: "org.ferry.Broker", path: "/org/ferry/Scenes",
                                                    interface: "org.ferry.Scenes1", member: "ListSessions",
                                                    body: [VariantDictionary().dbusValue], timeout: .seconds(10))
                return try reply[0].get([VariantDictionary].self)
            }
            func until(_ what: String, _ condition: () async throws -> Bool) async throws {
                if !(try await eventually(.seconds(30), every: .milliseconds(10), condition)) {
                    Issue.record("timed out waiting for \(what)")
                }
            }
            let accepting = PasteConfiguration(acceptableTypes: [.plainText])

            // First run: the app gets its first scene, then asks for a Viewer.
            let client = try await fixture.client()
            let events = SceneEvents()
            let app = try await Application.register(client: client, manifest: sceneTestManifest(),
                                                     delegate: RecordingAppDelegate(events: events, pasteConfiguration: accepting))
            try await until("the first scene") { app.connectedScenes.first?.activationState == .foregroundActive }
            let first = try #require(app.connectedScenes.first).persistentIdentifier
            #expect(events.of(first).prefix(2) == ["configure \(first) -", "connect \(first) Default item=-"])

            var activity = try UserActivity(activityType: "org.ferry.test.view")
            activity.userInfo["item"] = .string("lake")
            let viewer = try await app.requestSceneSessionActivation(nil, userActivity: activity)
            #expect(app.scene(for: viewer)?.session.configurationName == "Viewer")
            #expect(events.of(viewer).contains("connect \(viewer) Viewer item=lake"))
            try await until("the Viewer in front") { app.scene(for: viewer)?.activationState == .foregroundActive }
            #expect(app.scene(for: first)?.activationState == .foregroundInactive)

            // A paste action in the Viewer: its configuration accepts text; it reads as a user action.
            let writer = try await fixture.client()
            try await writer.general.setString("hello")
            let pasted = try await observer.call(destination: "org.ferry.Broker", path: "/org/ferry/Scenes",
                                                 interface: "org.ferry.Scenes1", member: "Paste",
                                                 body: [.string(viewer), .string("general"), VariantDictionary().dbusValue],
                                                 timeout: .seconds(30))[0].get(VariantDictionary.self)
            #expect(pasted["accepted"]?.unwrappingVariants == .boolean(true))
            #expect(pasted["message"]?.unwrappingVariants == .string("pasted 1 text(s)"))
            #expect(events.all.contains("paste \(viewer) hello"))

            // The library saved the Viewer's restoration activity; the app quits.
            try await until("the saved restoration activity") {
                try await sessions().contains { session in
                    guard (try? session.value(forKey: "persistentIdentifier", as: String.self)) == viewer,
                          let activity = session["stateRestorationActivity"]?.unwrappingVariants,
                          let entries = try? VariantDictionary(dbusValue: activity) else { return false }
                    return entries["userInfo"] != nil
                }
            }
            await client.close()
            try await until("the app's scenes unattached") {
                try await sessions().allSatisfy { $0["state"]?.unwrappingVariants == .int32(-1) }
            }

            // Second run: both sessions come back as they were, without a new one.
            let again = try await fixture.client()
            let restored = SceneEvents()
            var relaunched: Application?
            try await until("the registration to be free again") {
                do {
                    relaunched = try await Application.register(client: again, manifest: sceneTestManifest(),
                                                                delegate: RecordingAppDelegate(events: restored))
                    return true
                } catch let error as FerryError where error.code == .permissionDenied {
                    return false
                }
            }
            let app2 = try #require(relaunched)
            try await until("both scenes restored") { app2.connectedScenes.count == 2 }
            #expect(restored.all.contains("connect \(viewer) Viewer item=lake"))
            #expect(restored.all.contains("connect \(first) Default item=-"))
            #expect(Set(app2.connectedScenes.map(\.persistentIdentifier)) == [first, viewer])

            // Destroying the first scene disconnects it, then discards it.
            try await app2.requestSceneSessionDestruction(try #require(app2.scene(for: first)).session)
            try await until("the discard") { restored.all.last == "discard \(first)" }
            #expect(restored.of(first).suffix(2) == ["disconnect \(first)", "discard \(first)"])
            #expect(try await app2.openSessions.map(\.persistentIdentifier) == [viewer])

            await again.close()
            await writer.close()
            await observer.close()
        }
    }
    @Test("ferryd killed and restarted: the scene reconnects without a second willConnectTo; a title set meanwhile reaches it")
    func brokerRestart() async throws {
        let bus = try PrivateBus()
        let stateDir = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-scene-restart-\(UUID().uuidString)")
        defer {
            bus.stop()
            try? FileManager.default.removeItem(at: stateDir)
        }
        func until(_ what: String, _ condition: () async throws -> Bool) async throws {
            if !(await eventually(.seconds(30), every: .milliseconds(10), { (try? await condition()) == true })) {
                Issue.record("timed out waiting for \(what)")
            }
        }
        let first = try await ServiceProcess.ferryd(on: bus, stateDir: stateDir)
        let client = try await FerryClient.connect(address: bus.address)
        let events = SceneEvents()
        let app = try await Application.register(client: client, manifest: sceneTestManifest(),
                                                 delegate: RecordingAppDelegate(events: events))
        try await until("the first scene") { app.connectedScenes.first?.activationState == .foregroundActive }
        let scene = try #require(app.connectedScenes.first)
        let id = scene.persistentIdentifier

        first.send(SIGKILL)
        _ = await first.waitForExit()
        // Set while no broker runs: kept by the library, sent to the next broker.
        await #expect(throws: FerryError.self) { try await scene.setTitle("Set while down") }
        let second = try await ServiceProcess.ferryd(on: bus, stateDir: stateDir)
        defer { second.stop() }
        let observer = try await Connection(address: bus.address)
        func listed() async throws -> [VariantDictionary] {
            try await observer.call(destination: "org.ferry.Broker", path: "/org/ferry/Scenes", interface: "org.ferry.Scenes1",
                                    member: "ListSessions", body: [VariantDictionary().dbusValue],
                                    timeout: .seconds(10))[0].get([VariantDictionary].self)
        }
        try await until("the title on the new broker") {
            try await listed().first?["title"]?.unwrappingVariants == .string("Set while down")
        }
        let sessions = try await listed()
        #expect(sessions.count == 1)
        #expect(try sessions.first?.value(forKey: "persistentIdentifier", as: String.self) == id)
        try await until("the scene active again") { try await listed().first?["state"]?.unwrappingVariants == .int32(0) }
        // The broker lists the state before its SceneChanged calls reach the app: wait for the
        // app's own steps (two at the first connection, two at the reconnection).
        try await until("the app told of the steps again") { events.of(id).filter { $0.hasPrefix("state") }.count >= 4 }
        #expect(events.all.filter { $0.hasPrefix("connect") || $0.hasPrefix("configure") }
                == ["configure \(id) -", "connect \(id) Default item=-"])
        #expect(app.connectedScenes.count == 1)
        #expect(app.scene(for: id) === scene)
        #expect(scene.activationState == .foregroundActive)

        await client.close()
        await observer.close()
    }
}
