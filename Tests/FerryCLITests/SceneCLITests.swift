import FerryTestSupport
import Foundation
import Testing

/// A scene app on the raw bus for the scene CLI tests: `Fixtures/cli/scene-app.py` (python3-dbus)
/// registers an Info.plist with scenes and answers the broker's `org.ferry.Client1` scene calls,
/// printing one line per call (`connect ID CONFIGURATION INFO`, `refresh ID`, …).
enum SceneApp {
    static let script = TestPaths.fixtures.appendingPathComponent("cli/scene-app.py")
    static let notes = TestPaths.fixtures.appendingPathComponent("Apps/Notes/Info.plist")
    static let gallery = TestPaths.fixtures.appendingPathComponent("Apps/Gallery/Info.plist")

    /// Starts the app for `manifest` on `broker`'s bus and waits until it registered.
    static func start(_ broker: CLIBroker, manifest: URL, _ extra: [String] = []) async throws -> ServiceProcess {
        try await ServiceProcess("/usr/bin/python3", [script.path, "--bus", broker.bus.address, "--manifest", manifest.path] + extra,
                                 environment: broker.environment)
    }

    /// The Notes manifest under another bundle id, with UIApplicationSupportsMultipleScenes false.
    static func singleSceneManifest(in folder: URL) throws -> URL {
        var text = try String(contentsOf: notes, encoding: .utf8)
        text = text.replacingOccurrences(of: "<string>org.ferry.notes</string>", with: "<string>org.ferry.single</string>")
        text = text.replacingOccurrences(of: "<key>UIApplicationSupportsMultipleScenes</key>\n\t\t<true/>",
                                         with: "<key>UIApplicationSupportsMultipleScenes</key>\n\t\t<false/>")
        #expect(text.contains("<false/>"))
        let url = folder.appendingPathComponent("Single.plist")
        try Data(text.utf8).write(to: url)
        return url
    }
}

extension CLIBroker {
    /// `ferry ARGUMENTS --json`'s standard output as a JSON object; fails the test on a bad status.
    func json(_ arguments: String..., sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: Any] {
        let result = try await ferry(arguments + ["--json"])
        #expect(result.status == 0, "\(arguments): \(result.summary)", sourceLocation: sourceLocation)
        let object = try JSONSerialization.jsonObject(with: result.standardOutput)
        return try #require(object as? [String: Any], "\(arguments): \(result.stdout)", sourceLocation: sourceLocation)
    }

    /// The sessions `ferry scenes --json` lists, front to back per app.
    func scenes(app: String? = nil) async throws -> [[String: Any]] {
        let report = if let app { try await json("scenes", "--app", app) } else { try await json("scenes") }
        return try #require(report["scenes"] as? [[String: Any]])
    }
}

extension Dictionary where Key == String, Value == Any {
    /// `frame` as `[x, y, width, height]`.
    var frame: [Double]? {
        guard let frame = self["frame"] as? [String: Any] else { return nil }
        return ["x", "y", "width", "height"].compactMap { (frame[$0] as? NSNumber)?.doubleValue }
    }

    /// The value under `key` as a string.
    func string(_ key: String) -> String? { self[key] as? String }
}

@Suite("ferry apps, scenes, scene, paste --into against a real ferryd and a scene app")
struct SceneCLITests {
    @Test("apps and scenes list a registered app and its first scene, as a table and as JSON")
    func listing() async throws {
        try await CLIBroker.with { broker in
            let notes = try await SceneApp.start(broker, manifest: SceneApp.notes)
            defer { notes.stop() }
            // Registering with scenes and no session opens the app's first scene.
            #expect(try await eventually { try await broker.scenes().count == 1 })

            let apps = try await broker.ferry("apps")
            #expect(apps.status == 0, "\(apps.summary)")
            let lines = apps.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
            #expect(lines.first == ["APP", "NAME", "STATE", "SCENES", "PID"])
            #expect(lines.dropFirst().first == ["org.ferry.notes", "Notes", "foregroundActive", "1", String(notes.pid)])

            let report = try await broker.json("apps")
            let app = try #require((report["apps"] as? [[String: Any]])?.first)
            #expect(app.string("appID") == "org.ferry.notes" && app.string("name") == "Notes")
            #expect(app.string("state") == "foregroundActive")
            #expect(app["scenes"] as? Int == 1 && app["pid"] as? Int == Int(notes.pid))
            #expect(app["showsScenes"] as? Bool == true && app["supportsMultipleScenes"] as? Bool == true)

            let scene = try #require(try await broker.scenes().first)
            let id = try #require(scene.string("persistentIdentifier"))
            #expect(scene.string("app") == "org.ferry.notes")
            #expect(scene.string("configuration") == "Default")
            #expect(scene.string("state") == "foregroundActive")
            #expect(scene.frame == [48, 48, 960, 640])
            #expect(scene["screen"] as? Int == 0 && scene["stackIndex"] as? Int == 0)
            #expect(notes.standardOutput.contains("connect \(id) Default"))

            let table = try await broker.ferry("scenes")
            #expect(table.status == 0)
            let rows = table.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
            #expect(rows.first == ["APP", "SESSION", "CONFIGURATION", "STATE", "TITLE", "FRAME"])
            #expect(rows.dropFirst().first == ["org.ferry.notes", id, "Default", "foregroundActive", "-", "48,48", "960x640"])
            #expect(try await broker.scenes(app: "org.ferry.notes").count == 1)
        }
    }

    @Test("scene open by activity, activate and refresh by prefix, close with an animation, open with placement")
    func lifecycle() async throws {
        try await CLIBroker.with { broker in
            let notes = try await SceneApp.start(broker, manifest: SceneApp.notes, ["--editor-activity", "org.ferry.notes.open-note"])
            defer { notes.stop() }
            #expect(try await eventually { try await broker.scenes().count == 1 })
            let first = try #require(try await broker.scenes().first?.string("persistentIdentifier"))

            let opened = try await broker.ferry("scene", "open", "org.ferry.notes", "--activity", "org.ferry.notes.open-note",
                                                "--info", "noteID=groceries", "--info", "line=3")
            #expect(opened.status == 0, "\(opened.summary)")
            let words = opened.stdout.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            let editor = try #require(words.first)
            #expect(opened.stdout == "\(editor)  connected (Editor, foregroundActive)\n")
            #expect(notes.standardOutput.contains("choose \(editor) org.ferry.notes.open-note Editor"))
            // --info: integers stay integers, strings strings.
            #expect(notes.standardOutput.contains("connect \(editor) Editor line=Int64:3,noteID=String:groceries"))

            var scenes = try await broker.scenes()
            #expect(scenes.map { $0.string("persistentIdentifier") } == [editor, first])
            #expect(scenes.map { $0.string("state") } == ["foregroundActive", "foregroundInactive"])
            #expect(scenes[0].frame == [80, 80, 960, 640])

            // A prefix of 8 characters names the first scene; activating it brings it forward.
            let activate = try await broker.ferry("scene", "activate", String(first.prefix(8)).lowercased())
            #expect(activate.status == 0 && activate.stdout.isEmpty, "\(activate.summary)")
            scenes = try await broker.scenes()
            #expect(scenes.map { $0.string("persistentIdentifier") } == [first, editor])
            #expect(scenes.map { $0.string("state") } == ["foregroundActive", "foregroundInactive"])

            let refresh = try await broker.ferry("scene", "refresh", String(editor.prefix(6)))
            #expect(refresh.status == 0, "\(refresh.summary)")
            #expect(await eventually { notes.standardOutput.contains("refresh \(editor)") })

            let short = try await broker.ferry("scene", "refresh", String(editor.prefix(3)))
            #expect(short.status == 64)
            #expect(short.stderr.contains("at least 4 characters"), "\(short.stderr)")
            let unknown = try await broker.ferry("scene", "close", "zzzz-no-such")
            #expect(unknown.status == 2)
            #expect(unknown.stderr == "ferry: no scene session 'zzzz-no-such' (ferry scenes lists them)\n")

            let close = try await broker.ferry("scene", "close", editor, "--animation", "commit")
            #expect(close.status == 0, "\(close.summary)")
            #expect(await eventually { notes.standardOutput.contains("discard \(editor)") })
            #expect(notes.standardOutput.contains("disconnect \(editor) destroyed commit"))
            #expect(try await broker.scenes().map { $0.string("persistentIdentifier") } == [first])

            // Placement: the new scene takes the left half, the one beneath the right half.
            let left = try await broker.ferry("scene", "open", "org.ferry.notes", "--placement", "left", "--json")
            #expect(left.status == 0, "\(left.summary)")
            let leftReport = try #require(try JSONSerialization.jsonObject(with: left.standardOutput) as? [String: Any])
            #expect(leftReport["new"] as? Bool == true && leftReport["connected"] as? Bool == true)
            #expect(leftReport.string("configuration") == "Default" && leftReport.string("state") == "foregroundActive")
            scenes = try await broker.scenes()
            #expect(scenes.map { $0.string("persistentIdentifier") } == [leftReport.string("persistentIdentifier"), first])
            #expect(scenes.map(\.frame) == [[0, 0, 960, 1080], [960, 0, 960, 1080]])

            // --requesting names the scene beneath by prefix: it takes the other half.
            let leftID = try #require(leftReport.string("persistentIdentifier"))
            let requested = try await broker.ferry("scene", "open", "org.ferry.notes", "--requesting", String(leftID.prefix(5)),
                                                   "--placement", "right", "--url", "https://example.com/a")
            #expect(requested.status == 0, "\(requested.summary)")
            scenes = try await broker.scenes()
            #expect(scenes.map { $0.string("persistentIdentifier") }.dropFirst() == [leftID, first])
            #expect(scenes.map(\.frame) == [[960, 0, 960, 1080], [0, 0, 960, 1080], [960, 0, 960, 1080]])
        }
    }

    @Test("an app with one scene refuses a second (status 1); an unknown app is status 2; a stopped app's scene waits")
    func refusalsAndWaiting() async throws {
        try await CLIBroker.with { broker in
            let single = try await SceneApp.start(broker, manifest: try SceneApp.singleSceneManifest(in: broker.folder))
            #expect(try await eventually { try await broker.scenes(app: "org.ferry.single").count == 1 })
            let only = try #require(try await broker.scenes().first?.string("persistentIdentifier"))
            let second = try await broker.ferry("scene", "open", "org.ferry.single")
            #expect(second.status == 1, "\(second.summary)")
            #expect(second.stderr == "ferry: org.ferry.single supports only one scene and already has it: 'ferry scene activate \(only)' brings it forward\n")
            #expect(try await broker.scenes().count == 1)

            let never = try await broker.ferry("scene", "open", "org.example.never")
            #expect(never.status == 2, "\(never.summary)")

            // The app goes away: its scene stays, archived; a new one waits for its next registration.
            single.stop()
            #expect(try await eventually {
                (try await broker.json("apps")["apps"] as? [Any])?.isEmpty == true
            })
            let notes = try await SceneApp.start(broker, manifest: SceneApp.notes)
            #expect(try await eventually { try await broker.scenes(app: "org.ferry.notes").count == 1 })
            notes.stop()
            #expect(try await eventually { try await broker.scenes(app: "org.ferry.notes").first?.string("state") == "unattached" })
            let waiting = try await broker.ferry("scene", "open", "org.ferry.notes")
            #expect(waiting.status == 0, "\(waiting.summary)")
            #expect(waiting.stdout.hasSuffix("  waiting: org.ferry.notes is not running; the scene connects when it next registers\n"),
                    "\(waiting.stdout)")
            #expect(try await broker.scenes(app: "org.ferry.notes").map { $0.string("state") } == ["unattached", "unattached"])
        }
    }

    @Test("paste --into: a scene that accepts prints what it read; one that declines exits 1 with the reason")
    func pasteInto() async throws {
        try await CLIBroker.with { broker in
            let notes = try await SceneApp.start(broker, manifest: SceneApp.notes, ["--accept-paste"])
            defer { notes.stop() }
            let gallery = try await SceneApp.start(broker, manifest: SceneApp.gallery)
            defer { gallery.stop() }
            #expect(try await eventually { try await broker.scenes().count == 2 })
            #expect(try await broker.ferry("copy", "--text", "milk").succeeded)
            let notesScene = try #require(try await broker.scenes(app: "org.ferry.notes").first?.string("persistentIdentifier"))
            let galleryScene = try #require(try await broker.scenes(app: "org.ferry.gallery").first?.string("persistentIdentifier"))

            let accepted = try await broker.ferry("paste", "--into", "org.ferry.notes")
            #expect(accepted.status == 0, "\(accepted.summary)")
            #expect(accepted.stdout == "accepted: public.plain-text — pasted into \(notesScene.prefix(8))\n")
            #expect(notes.standardOutput.contains("paste \(notesScene) general"))

            let declined = try await broker.ferry("paste", "--into", "org.ferry.gallery/\(galleryScene.prefix(5))")
            #expect(declined.status == 1, "\(declined.summary)")
            #expect(declined.stderr == "ferry: declined: this scene accepts only public.image\n")
            #expect(declined.stdout.isEmpty)

            let nowhere = try await broker.ferry("paste", "--into", "org.ferry.notes/zzzzzz")
            #expect(nowhere.status == 2, "\(nowhere.summary)")
            let badBoard = try await broker.ferry("paste", "--into", "org.ferry.notes", "--pasteboard", "no spaces")
            #expect(badBoard.status == 64)
        }
    }
}
