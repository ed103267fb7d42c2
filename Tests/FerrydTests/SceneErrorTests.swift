import DBus
import FerryTestSupport
import Foundation
import Testing

/// Bad scene requests get named errors and leave the daemon serving; independent peers can call.
@Suite("ferryd scenes: named errors, permissions, independent peers")
struct SceneErrorTests {
    typealias F = FerrydFixture
    typealias S = SceneBus
    static let notes = SceneServiceTests.notes

    @Test("bad inputs: unknown apps and sessions, undeclared activity types, bad placement/animation/screen/frame, Update from another connection")
    func namedErrors() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let app = try await FakeSceneApp.start(fixture, Self.notes, manifest: try F.manifest("Notes"))
        let id = try await SceneServiceTests.firstSession(app)
        let cli = try await fixture.connect()
        let empty = [String: DBusValue]()

        func expectError(_ name: String, _ comment: Comment, _ body: () async throws -> Void) async {
            let failure = await F.failure(body)
            #expect(failure?.name == "org.ferry.Error.\(name)", comment)
        }
        await expectError("NotFound", "never-seen app") { _ = try await S.activate(cli, app: "org.example.nobody") }
        await expectError("NotFound", "unknown session") { _ = try await S.activate(cli, app: "", session: "no-such-session") }
        await expectError("InvalidArgument", "neither app nor session") { _ = try await S.activate(cli, app: "") }
        await expectError("InvalidArgument", "session of another app") {
            _ = try await S.activate(cli, app: "org.ferry.gallery", session: id)
        }
        await expectError("InvalidArgument", "undeclared activity type") {
            _ = try await S.activate(cli, app: Self.notes, ["userActivity": S.activity("org.example.undeclared")])
        }
        await expectError("InvalidArgument", "activity without a type") {
            _ = try await S.activate(cli, app: Self.notes, ["userActivity": (["title": "x"] as [String: DBusValue]).dbusValue])
        }
        await expectError("InvalidArgument", "placement up") { _ = try await S.activate(cli, app: Self.notes, ["placement": "up"]) }
        await expectError("InvalidArgument", "placement of the wrong type") {
            _ = try await S.activate(cli, app: Self.notes, ["placement": .uint32(1)])
        }
        await expectError("InvalidArgument", "screen 7 of 1") { _ = try await S.activate(cli, app: Self.notes, ["screen": .uint32(7)]) }
        await expectError("InvalidArgument", "relative URL") {
            _ = try await S.activate(cli, app: Self.notes, ["urls": .array(of: .string, ["notes/groceries"])])
        }
        await expectError("InvalidArgument", "unknown requesting scene") {
            _ = try await S.activate(cli, app: Self.notes, ["requestingScene": "nope"])
        }
        await expectError("InvalidArgument", "animation fade") {
            _ = try await S.call(cli, "RequestDestruction", [.string(id), (["animation": "fade"] as [String: DBusValue]).dbusValue])
        }
        await expectError("NotFound", "destroying an unknown session") {
            _ = try await S.call(cli, "RequestDestruction", [.string("nope"), empty.dbusValue])
        }
        await expectError("NotFound", "refreshing an unknown session") { _ = try await S.call(cli, "RequestRefresh", [.string("nope")]) }
        await expectError("PermissionDenied", "Update from a connection that did not register the app") {
            try await S.update(cli, id, ["title": "stolen"])
        }
        await expectError("InvalidArgument", "a 0×10 frame") {
            try await S.update(app.connection, id, ["frame": (["x": 0.0, "y": 0.0, "width": 0.0, "height": 10.0] as [String: DBusValue]).dbusValue])
        }
        await expectError("InvalidArgument", "a frame without height") {
            try await S.update(app.connection, id, ["frame": (["x": 0.0, "y": 0.0, "width": 5.0] as [String: DBusValue]).dbusValue])
        }
        await expectError("InvalidArgument", "a title that is not a string") { try await S.update(app.connection, id, ["title": .int32(3)]) }
        await expectError("InvalidArgument", "a bad predicate") {
            try await S.update(app.connection, id, ["activationConditions": (["canActivateFor": "self =="] as [String: DBusValue]).dbusValue])
        }
        let failure = await F.failure {
            try await S.update(app.connection, id, ["stateRestorationActivity": (["userInfo": "x"] as [String: DBusValue]).dbusValue])
        }
        #expect(failure?.name == "org.ferry.Error.InvalidArgument")
        #expect(failure?.message.contains("changes.stateRestorationActivity") == true, "the key path is named")
        #expect(try await S.property(cli, id, "Title") == .string(""), "nothing was applied")

        // The session's own app may update; RequestRefresh reaches it.
        try await S.update(app.connection, id, ["title": "Notes"])
        #expect(try await S.property(cli, id, "Title") == .string("Notes"))
        _ = try await S.call(cli, "RequestRefresh", [.string(id)])
        #expect(app.calls.contains { $0.member == "RefreshScene" && $0.id == id })

        // An app registered without scenes is Unavailable; the daemon still serves.
        let plain = try await fixture.connect()
        try await F.register(plain, "org.ferry.gallery", manifest: try F.manifest("Gallery"))
        await expectError("Unavailable", "registered without scenes") { _ = try await S.activate(cli, app: "org.ferry.gallery") }
        #expect(daemon.isRunning)
        await plain.close()
        await app.quit()
        await cli.close()
    }

    @Test("a known app that is not running gets an archived session, connected at its next registration with the activity")
    func archivedRequest() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let app = try await FakeSceneApp.start(fixture, Self.notes, manifest: try F.manifest("Notes"),
                                               configurations: [SceneServiceTests.openNote: "Editor"])
        _ = try await SceneServiceTests.firstSession(app)
        await app.quit()
        let cli = try await fixture.connect()
        #expect(try await eventually(.seconds(30)) { try await S.sessions(cli).allSatisfy { (try? $0.value(forKey: "state", as: Int32.self)) == -1 } })
        let id = try await S.activate(cli, app: Self.notes, ["userActivity": S.activity(SceneServiceTests.openNote)])
        #expect(try await S.property(cli, id, "State") == .string("unattached"))
        #expect(try await S.property(cli, id, "Configuration") == .string(""))

        let again = try await FakeSceneApp.start(fixture, Self.notes, manifest: try F.manifest("Notes"),
                                                 configurations: [SceneServiceTests.openNote: "Editor"])
        try await again.waitForCalls { $0.contains { $0.member == "ConnectScene" && $0.id == id } }
        let choose = try #require(again.calls.first { $0.member == "ChooseConfiguration" && $0.id == id })
        #expect(try choose.activities.first?.value(forKey: "activityType", as: String.self) == SceneServiceTests.openNote)
        #expect(try await S.property(cli, id, "Configuration") == .string("Editor"))
        #expect(try await eventually(.seconds(30)) { try await S.property(cli, id, "State") == .string("foregroundActive") })
        await again.quit()
        await cli.close()
    }

    @Test("busctl (an independent peer) lists the sessions and reads a session's State property")
    func busctlListSessions() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let app = try await FakeSceneApp.start(fixture, Self.notes, manifest: try F.manifest("Notes"))
        let id = try await SceneServiceTests.firstSession(app)
        let list = try await ChildProcess.run("busctl", [
            "--address=\(fixture.bus.address)", "--json=short", "call", "org.ferry.Broker", "/org/ferry/Scenes",
            "org.ferry.Scenes1", "ListSessions", "a{sv}", "0",
        ], timeout: .seconds(20))
        #expect(list.succeeded, "\(list.stderr)")
        #expect(list.stdout.contains(id) && list.stdout.contains("\"Default\"") && list.stdout.contains("stackIndex"))
        let state = try await ChildProcess.run("busctl", [
            "--address=\(fixture.bus.address)", "get-property", "org.ferry.Broker", S.sessionPath(id).rawValue,
            "org.ferry.SceneSession1", "State",
        ], timeout: .seconds(20))
        #expect(state.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "s \"foregroundActive\"", "\(state.stderr)")
        let bad = try await ChildProcess.run("busctl", [
            "--address=\(fixture.bus.address)", "call", "org.ferry.Broker", "/org/ferry/Scenes",
            "org.ferry.Scenes1", "RequestActivation", "ssa{sv}", "org.ferry.notes", "", "1", "placement", "s", "diagonal",
        ], timeout: .seconds(20))
        #expect(!bad.succeeded && bad.stderr.contains("placement"), "\(bad.stderr)")
        await app.quit()
    }
}

/// A session of another role than the application window (seed: roles), asked for by name.
@Suite("ferryd scenes: roles")
struct SceneRoleTests {
    typealias F = FerrydFixture
    typealias S = SceneBus
    static let notes = SceneServiceTests.notes
    static let externalDisplay = "UIWindowSceneSessionRoleExternalDisplayNonInteractive"

    /// Notes' manifest with one more configuration, "Presenter", for the external-display role.
    static func notesWithPresenter() throws -> [UInt8] {
        let text = String(decoding: try F.manifest("Notes"), as: UTF8.self)
        let anchor = "<key>UISceneConfigurations</key>\n\t\t<dict>\n"
        let edited = text.replacingOccurrences(of: anchor, with: anchor + """
            \t\t\t<key>\(externalDisplay)</key>
            \t\t\t<array><dict><key>UISceneConfigurationName</key><string>Presenter</string></dict></array>

            """)
        precondition(edited != text, "the Notes fixture changed shape")
        return Array(edited.utf8)
    }

    @Test("role external display: the session has that role and the role's configuration; a role without configurations is refused")
    func externalDisplay() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start(["--external-display", "1280x720"])
        defer { daemon.stop() }
        let app = try await FakeSceneApp.start(fixture, Self.notes, manifest: try Self.notesWithPresenter())
        _ = try await SceneServiceTests.firstSession(app)
        let cli = try await fixture.connect()
        let id = try await S.activate(cli, app: Self.notes, ["role": .string(Self.externalDisplay)])
        #expect(try await S.property(cli, id, "Role") == .string(Self.externalDisplay))
        #expect(try await S.property(cli, id, "Configuration") == .string("Presenter"),
                "the app named no configuration: the role's first one")

        let gallery = try await FakeSceneApp.start(fixture, "org.ferry.gallery", manifest: try F.manifest("Gallery"))
        _ = try await SceneServiceTests.firstSession(gallery)
        let failure = await F.failure { _ = try await S.activate(cli, app: "org.ferry.gallery", ["role": .string(Self.externalDisplay)]) }
        #expect(failure?.name == "org.ferry.Error.InvalidArgument", "\(String(describing: failure))")
        #expect(failure?.message.hasPrefix("options.role:") == true, "\(String(describing: failure))")
        await gallery.quit()
        await app.quit()
        await cli.close()
    }
}
