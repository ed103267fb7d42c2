import Ferry
import FerryModel
import FerryTestSupport
import Foundation
import Testing

/// `FerryClient`'s apps, scenes and remote activities: what a tool that is no app (the `ferry`
/// CLI) asks the real ferryd about another app's scenes, on a private bus.
@Suite("Ferry: a client's view of apps and scenes, with the real ferryd")
struct ClientScenesTests {
    /// An app with scenes registered through its own client, its first scene in front.
    private static func launchApp(_ fixture: ClientFixture, events: SceneEvents, multipleScenes: Bool = true,
                                  pasteConfiguration: PasteConfiguration? = nil) async throws -> Application {
        let client = try await fixture.client()
        let app = try await Application.register(client: client, manifest: sceneTestManifest(multipleScenes: multipleScenes),
                                                 delegate: RecordingAppDelegate(events: events, pasteConfiguration: pasteConfiguration))
        let shown = await eventually(.seconds(30), every: .milliseconds(10)) {
            app.connectedScenes.first?.activationState == .foregroundActive
        }
        try #require(shown, "the app's first scene never came to the front")
        return app
    }

    @Test("registeredApps, sceneSessions and desktopLayout show the app, its scene and the screens ferryd was given, external display included")
    func listing() async throws {
        try await ClientFixture.with(ferrydArguments: ["--screen", "1280x720", "--screen", "1920x1080", "--external-display", "800x600",
                                                      "--edge-zone", "10"]) { fixture in
            let tool = try await fixture.client()
            #expect(try await tool.registeredApps().isEmpty)
            #expect(try await tool.sceneSessions().isEmpty)

            let app = try await Self.launchApp(fixture, events: SceneEvents())
            let first = try #require(app.connectedScenes.first).persistentIdentifier
            let apps = try await tool.registeredApps()
            #expect(apps.count == 1)
            let listed = try #require(apps.first)
            #expect(listed.appID == FakeBroker.appID)
            #expect(listed.name == "Scene Test")
            #expect(listed.showsScenes && listed.supportsMultipleScenes)
            #expect(listed.activationState == .foregroundActive)
            #expect(listed.connectedScenes == 1)
            #expect(listed.processID == Int64(ProcessInfo.processInfo.processIdentifier))

            let sessions = try await tool.sceneSessions()
            #expect(sessions.map(\.session.persistentIdentifier) == [first])
            let scene = try #require(sessions.first)
            #expect(scene.session.bundleIdentifier == FakeBroker.appID)
            #expect(scene.session.configurationName == "Default")
            #expect(scene.session.activationState == .foregroundActive)
            #expect(scene.screen == 0 && scene.stackIndex == 0)
            #expect(scene.session.frame.map { $0.size.width > 0 && $0.size.height > 0 } == true, "the broker placed it")
            #expect(try await tool.sceneSessions(app: FakeBroker.appID).map(\.session.persistentIdentifier) == [first])
            #expect(try await tool.sceneSessions(app: "org.ferry.nobody").isEmpty)

            let layout = try await tool.desktopLayout()
            #expect(layout.edgeZone == 10)
            #expect(layout.screens.map(\.index) == [0, 1, 2])
            #expect(layout.screens.prefix(2).map(\.frame) == [Rect(x: 0, y: 0, width: 1280, height: 720),
                                                               Rect(x: 1280, y: 0, width: 1920, height: 1080)])
            #expect(layout.screens.map(\.isExternal) == [false, false, true])
            #expect(layout.screens.last?.frame.size == Size(width: 800, height: 600))
            await app.client.close()
            await tool.close()
        }
    }

    @Test("a tool opens another app's scene for an activity, refreshes it, pastes into it and closes it")
    func requests() async throws {
        try await ClientFixture.with { fixture in
            let events = SceneEvents()
            let app = try await Self.launchApp(fixture, events: events,
                                               pasteConfiguration: PasteConfiguration(acceptableTypes: [.plainText]))
            let first = try #require(app.connectedScenes.first).persistentIdentifier
            let tool = try await fixture.client()

            var activity = try UserActivity(activityType: "org.ferry.test.view")
            activity.userInfo["item"] = .string("lake")
            let viewer = try await tool.requestSceneSessionActivation(app: FakeBroker.appID, session: nil, userActivity: activity,
                                                                      options: SceneActivationRequestOptions(placement: .right))
            #expect(viewer != first)
            #expect(app.scene(for: viewer)?.session.configurationName == "Viewer")
            #expect(events.of(viewer).contains("connect \(viewer) Viewer item=lake"))
            let placed = try #require(try await tool.sceneSessions().first { $0.session.persistentIdentifier == viewer })
            #expect(placed.session.frame?.origin.x == 960, "the right half of the 1920-wide screen")

            // An existing session is brought forward by its id alone.
            #expect(try await tool.requestSceneSessionActivation(app: "", session: first, userActivity: nil) == first)
            let inFront = await eventually(.seconds(30), every: .milliseconds(10)) {
                app.scene(for: first)?.activationState == .foregroundActive
            }
            #expect(inFront)

            try await tool.requestSceneSessionRefresh(viewer)
            #expect(await eventually(.seconds(30), every: .milliseconds(10)) { events.all.contains("refresh \(viewer)") })

            // Paste actions: accepted text; a declined image, with the reason and the configuration.
            _ = try await tool.general.setString("hello")
            let accepted = try await tool.paste(intoScene: viewer)
            #expect(accepted.accepted && accepted.message == "pasted 1 text(s)" && accepted.reason.isEmpty)
            #expect(accepted.types.count == 1 && accepted.types.allSatisfy { $0.contains("text") }, "\(accepted.types)")
            #expect(events.all.contains("paste \(viewer) hello"))
            let front = try await tool.paste(intoFrontSceneOf: FakeBroker.appID)
            #expect(front.accepted)
            #expect(events.all.contains("paste \(first) hello"), "the front scene is the one brought forward")
            let pictures = try await tool.pasteboard(named: "pictures")
            _ = try await pictures.setData(pngLikeBytes(64), forType: .png)
            let declined = try await tool.paste(intoScene: viewer, from: "pictures")
            #expect(!declined.accepted && declined.types.isEmpty)
            #expect(declined.configuration == [ContentType.plainText.identifier])
            #expect(declined.reason.contains("public.png"), "\(declined.reason)")

            try await tool.requestSceneSessionDestruction(viewer, options: SceneDestructionRequestOptions(animation: .commit))
            #expect(await eventually(.seconds(30), every: .milliseconds(10)) {
                events.all.contains("disconnect \(viewer)") && events.all.contains("discard \(viewer)")
            })
            #expect(try await tool.sceneSessions().map(\.session.persistentIdentifier) == [first])
            await app.client.close()
            await tool.close()
        }
    }

    @Test("the broker's refusals arrive as typed errors: NotFound, MultipleScenesNotSupported, Unavailable")
    func refusals() async throws {
        try await ClientFixture.with { fixture in
            let tool = try await fixture.client()
            let unknownApp = await #expect(throws: FerryError.self) {
                try await tool.requestSceneSessionActivation(app: "org.ferry.nobody", session: nil, userActivity: nil)
            }
            #expect(unknownApp?.code == .notFound, "\(String(describing: unknownApp))")
            let unknownSession = await #expect(throws: FerryError.self) { try await tool.requestSceneSessionRefresh("not-a-session") }
            #expect(unknownSession?.code == .notFound)
            let gone = await #expect(throws: FerryError.self) { try await tool.requestSceneSessionDestruction("not-a-session") }
            #expect(gone?.code == .notFound)
            let noScene = await #expect(throws: FerryError.self) { try await tool.paste(intoScene: "not-a-session") }
            #expect(noScene?.code == .notFound)

            let app = try await Self.launchApp(fixture, events: SceneEvents(), multipleScenes: false)
            let second = await #expect(throws: FerryError.self) {
                try await tool.requestSceneSessionActivation(app: FakeBroker.appID, session: nil, userActivity: nil)
            }
            #expect(second?.code == .multipleScenesNotSupported, "\(String(describing: second))")
            #expect(try await tool.sceneSessions().count == 1, "no second session was made")

            // Continuity is off: nothing is offered, and nothing can be continued.
            #expect(try await tool.remoteActivities().isEmpty)
            #expect(try await tool.remoteActivities(all: true).isEmpty)
            let handoff = await #expect(throws: FerryError.self) { try await tool.continueRemoteActivity("laptop/1") }
            #expect(handoff?.code == .unavailable, "\(String(describing: handoff))")
            await app.client.close()
            await tool.close()
        }
    }
}
