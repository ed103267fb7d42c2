import FerryTestSupport
import Foundation
import Testing

/// `ferry-demo` as a user runs it: real processes on a private bus with the real `ferryd`.
@Suite("ferry-demo scenes end to end")
struct DemoSceneTests {
    static let openNote = "org.ferry.notes.open-note"
    static let viewPhoto = "org.ferry.gallery.view-photo"

    @Test("Notes starts with one Default scene: connect event, its own state file, titled Notes at the broker")
    func firstLaunch() async throws {
        try await DemoHarness.with { h in
            let notes = try await h.startDemo()
            defer { notes.process.stop() }
            let registered = try await notes.event("registered")
            #expect(registered["notes"] == "3")
            let connect = try await notes.event("connect")
            #expect(connect["configuration"] == "Default" && connect["restored"] == nil, "\(connect)")
            _ = try await notes.event("state") { $0["state"] == "foregroundActive" && $0.session == connect.session }
            #expect(notes.events.filter { $0.name == "connect" }.count == 1)
            #expect(FileManager.default.fileExists(atPath: h.sceneFile("Notes", connect.session).path))
            #expect(try await eventually {
                let listed = try await h.sessions(of: "org.ferry.notes")
                return listed.contains("'title': <'Notes'>") && listed.contains("'configurationName': <'Default'>")
            })
            // The fixtures' notes were copied into the state directory.
            let copied = try FileManager.default.contentsOfDirectory(atPath: h.stateDirectory("Notes").appendingPathComponent("notes").path)
            #expect(copied.sorted() == ["ferry-ideas.txt", "groceries.txt", "meeting.txt"])
        }
    }

    @Test("opening a note by activity makes an Editor scene showing it; opening it again continues in that scene")
    func openByActivity() async throws {
        try await DemoHarness.with { h in
            let notes = try await h.startDemo()
            defer { notes.process.stop() }
            let first = try await notes.settled()
            let editor = try await h.open("org.ferry.notes", activityType: Self.openNote, key: "noteID", item: "groceries")
            #expect(editor != first.session)
            let connect = try await notes.event("connect") { $0.session == editor }
            #expect(connect["configuration"] == "Editor" && connect["note"] == "groceries", "\(connect)")
            #expect(try await eventually {
                let listed = try await h.sessions(of: "org.ferry.notes")
                return listed.contains("'title': <'Notes — groceries'>")
                    && listed.contains(#"{'canActivateFor': <'SELF == "groceries"'>, 'prefersToActivateFor': <'SELF == "groceries"'>}"#)
                    && listed.contains("{'canActivateFor': <'FALSEPREDICATE'>, 'prefersToActivateFor': <'FALSEPREDICATE'>}")
            }, "the Editor's title and activation conditions reach the broker")
            // Its activation conditions prefer groceries: the same activity goes back to it.
            let again = try await h.open("org.ferry.notes", activityType: Self.openNote, key: "noteID", item: "groceries")
            #expect(again == editor)
            let continued = try await notes.event("continue") { $0.session == editor }
            #expect(continued["note"] == "groceries" && continued["activityType"] == Self.openNote)
            // Another note gets a window of its own.
            let other = try await h.open("org.ferry.notes", activityType: Self.openNote, key: "noteID", item: "meeting")
            #expect(other != editor && other != first.session)
            let otherConnect = try await notes.event("connect") { $0.session == other }
            #expect(otherConnect["configuration"] == "Editor" && otherConnect["note"] == "meeting")
        }
    }

    @Test("Gallery: view-photo opens a Viewer showing that photo, titled with its name")
    func galleryViewer() async throws {
        try await DemoHarness.with { h in
            let gallery = try await h.startDemo("Gallery")
            defer { gallery.process.stop() }
            #expect(try await gallery.settled()["configuration"] == "Default")
            let viewer = try await h.open("org.ferry.gallery", activityType: Self.viewPhoto, key: "photoID", item: "lake.png")
            let connect = try await gallery.event("connect") { $0.session == viewer }
            #expect(connect["configuration"] == "Viewer" && connect["photo"] == "lake.png", "\(connect)")
            #expect(try await eventually {
                try await h.sessions(of: "org.ferry.gallery").contains("'title': <'Gallery — lake.png'>")
            })
        }
    }

    @Test("killed and started again, every scene comes back with its own note (one state file per scene)")
    func restoreAfterRestart() async throws {
        try await DemoHarness.with { h in
            var notes = try await h.startDemo()
            let list = try await notes.settled().session
            let groceries = try await h.open("org.ferry.notes", activityType: Self.openNote, key: "noteID", item: "groceries")
            let meeting = try await h.open("org.ferry.notes", activityType: Self.openNote, key: "noteID", item: "meeting")
            _ = try await notes.event("saved") { $0.session == meeting }
            // Both Editors' restoration activities reached the broker.
            #expect(try await eventually {
                let listed = try await h.sessions(of: "org.ferry.notes")
                return listed.components(separatedBy: "'activityType': <'\(Self.openNote)'>").count == 3
            })
            // SIGKILL: nothing is saved on the way out; what was saved while running must do.
            await notes.kill()
            for id in [list, groceries, meeting] {
                #expect(FileManager.default.fileExists(atPath: h.sceneFile("Notes", id).path), "\(id)")
            }
            // Without its file, the groceries Editor comes back from its restoration activity alone
            // (the seed's `userActivities.first ?? session.stateRestorationActivity`).
            try FileManager.default.removeItem(at: h.sceneFile("Notes", groceries))
            notes = try await h.startDemo()
            let restored = [list: "Default", groceries: "Editor", meeting: "Editor"]
            for (id, configuration) in restored {
                let connect = try await notes.event("connect") { $0.session == id }
                #expect(connect["configuration"] == configuration && connect["restored"] != nil, "\(connect)")
            }
            #expect(try await notes.event("connect") { $0.session == groceries }["note"] == "groceries")
            #expect(try await notes.event("connect") { $0.session == meeting }["note"] == "meeting")
            #expect(notes.events.filter { $0.name == "connect" }.count == 3, "no extra scene was made")

            // SIGTERM: saves and exits 0.
            let status = await notes.terminate()
            #expect(status == 0, "stderr: \(notes.process.standardError)")
            let exit = try await notes.event("exit")
            #expect(exit["signal"] == "SIGTERM" && exit["scenes"] == "3", "\(exit)")
        }
    }

    @Test("a broker restart keeps the running app's scenes: they reconnect without a second connect in the app")
    func brokerRestart() async throws {
        try await DemoHarness.with { h in
            let notes = try await h.startDemo()
            defer { notes.process.stop() }
            let list = try await notes.settled().session
            let editor = try await h.open("org.ferry.notes", activityType: Self.openNote, key: "noteID", item: "groceries")
            _ = try await notes.event("saved") { $0.session == editor }
            h.daemon.stop()
            _ = await h.daemon.waitForExit()
            let second = try await ServiceProcess.ferryd(on: h.bus, stateDir: h.brokerState)
            defer { second.stop() }
            #expect(await eventually {
                let listed = (try? await h.sessions(of: "org.ferry.notes")) ?? ""
                return listed.contains("'title': <'Notes — groceries'>") && listed.contains("'title': <'Notes'>")
                    && listed.contains("'state': <0>")
            }, "ferryd log: \(second.standardError)")
            #expect(notes.process.isRunning)
            #expect(notes.events.filter { $0.name == "connect" }.map(\.session).sorted() == [list, editor].sorted())
        }
    }

    @Test("a session destroyed while the app is down is discarded at its next start: state file deleted, no scene")
    func destroyWhileDown() async throws {
        try await DemoHarness.with { h in
            var notes = try await h.startDemo()
            let list = try await notes.settled().session
            let editor = try await h.open("org.ferry.notes", activityType: Self.openNote, key: "noteID", item: "groceries")
            _ = try await notes.event("saved") { $0.session == editor }
            #expect(await notes.terminate() == 0)
            #expect(FileManager.default.fileExists(atPath: h.sceneFile("Notes", editor).path))

            _ = try await h.call("/org/ferry/Scenes", "org.ferry.Scenes1.RequestDestruction", editor, "{}")
            notes = try await h.startDemo()
            defer { notes.process.stop() }
            let discard = try await notes.event("discard") { $0.session == editor }
            #expect(discard["deleted"] != nil)
            #expect(!FileManager.default.fileExists(atPath: h.sceneFile("Notes", editor).path))
            _ = try await notes.event("connect") { $0.session == list }
            #expect(!notes.events.contains { $0.name == "connect" && $0.session == editor })
            #expect(FileManager.default.fileExists(atPath: h.sceneFile("Notes", list).path), "the other scene keeps its state")
        }
    }

    @Test("destroying a connected scene disconnects it and deletes its state file")
    func destroyWhileRunning() async throws {
        try await DemoHarness.with { h in
            let notes = try await h.startDemo()
            defer { notes.process.stop() }
            _ = try await notes.settled()
            let editor = try await h.open("org.ferry.notes", activityType: Self.openNote, key: "noteID", item: "meeting")
            _ = try await notes.event("saved") { $0.session == editor }
            _ = try await h.call("/org/ferry/Scenes", "org.ferry.Scenes1.RequestDestruction", editor, "{'animation': <'commit'>}")
            _ = try await notes.event("disconnect") { $0.session == editor }
            #expect(try await notes.event("discard") { $0.session == editor }["deleted"] != nil)
            #expect(!FileManager.default.fileExists(atPath: h.sceneFile("Notes", editor).path))
        }
    }

    @Test("a text paste appends to the Editor's note; the Default scene makes a new note")
    func pasteText() async throws {
        try await DemoHarness.with { h in
            let notes = try await h.startDemo()
            defer { notes.process.stop() }
            let list = try await notes.settled().session
            let editor = try await h.open("org.ferry.notes", activityType: Self.openNote, key: "noteID", item: "groceries")
            _ = try await notes.event("connect") { $0.session == editor }
            let copy = try await ChildProcess.run(try BuiltProducts.executable("ferry"), ["copy", "--text", "oat milk"],
                                                  environment: h.bus.environment())
            #expect(copy.succeeded, "\(copy.stderr)")
            let reply = try await h.call("/org/ferry/Scenes", "org.ferry.Scenes1.Paste", editor, "general", "{}")
            #expect(reply.contains("'accepted': <true>"), "\(reply)")
            let paste = try await notes.event("paste") { $0.session == editor }
            #expect(paste["note"] == "groceries" && paste["types"] == "public.utf8-plain-text")
            let note = h.stateDirectory("Notes").appendingPathComponent("notes/groceries.txt")
            #expect(try String(contentsOf: note, encoding: .utf8).hasSuffix("oat milk\n"))

            _ = try await h.call("/org/ferry/Scenes", "org.ferry.Scenes1.Paste", list, "general", "{}")
            let made = try await notes.event("paste") { $0.session == list }
            let id = try #require(made["note"])
            let text = try String(contentsOf: h.stateDirectory("Notes").appendingPathComponent("notes/\(id).txt"), encoding: .utf8)
            #expect(text == "oat milk\n")
        }
    }

    @Test("Gallery declines a text paste (its paste configuration is public.image)")
    func galleryDeclinesText() async throws {
        try await DemoHarness.with { h in
            let gallery = try await h.startDemo("Gallery")
            defer { gallery.process.stop() }
            let scene = try await gallery.event("connect").session
            // The app says connect while the broker's call is still running; the broker moves the
            // scene to the foreground only once it is connected, and Paste needs that.
            _ = try await gallery.event("state") { $0["state"] == "foregroundActive" && $0.session == scene }
            _ = try await ChildProcess.run(try BuiltProducts.executable("ferry"), ["copy", "--text", "not an image"],
                                           environment: h.bus.environment())
            let reply = try await h.call("/org/ferry/Scenes", "org.ferry.Scenes1.Paste", scene, "general", "{}")
            #expect(reply.contains("'accepted': <false>") && reply.contains("public.image"), "\(reply)")
            #expect(!gallery.events.contains { $0.name == "paste" })
            let photos = try FileManager.default.contentsOfDirectory(atPath: h.stateDirectory("Gallery").appendingPathComponent("photos").path)
            #expect(photos.sorted() == ["beach.jpg", "lake.png"])
        }
    }
}

@Suite("ferry-demo arguments and app folders")
struct DemoArgumentTests {
    func demo(_ arguments: [String]) async throws -> ChildProcessResult {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent/ferry-demo-test"
        return try await ChildProcess.run(try BuiltProducts.executable("ferry-demo"), arguments, environment: environment,
                                          timeout: .seconds(20))
    }

    @Test("a folder without a valid Info.plist exits 64 with one clear line, before touching the bus")
    func badFolders() async throws {
        let broken = TestPaths.fixtures.appendingPathComponent("Apps/Broken")
        let none = try await demo([broken.path])
        #expect(none.status == 64 && none.stderr == "ferry-demo: error: \(broken.path) has no Info.plist: not an app folder\n",
                "\(none.stderr)")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-demo-broken-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.copyItem(at: broken.appendingPathComponent("configuration-name-not-string.plist"),
                                         to: folder.appendingPathComponent("Info.plist"))
        let bad = try await demo([folder.path])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("UIWindowSceneSessionRoleApplication[1].UISceneConfigurationName: expected a string"), "\(bad.stderr)")
        #expect(bad.stderr.split(separator: "\n").count == 1)
        let missing = try await demo(["/nonexistent/app"])
        #expect(missing.status == 64 && missing.stderr.contains("no such folder"))
    }

    @Test("missing or empty arguments are usage errors (64); no bus is 69")
    func usage() async throws {
        #expect(try await demo([]).status == 64)
        #expect(try await demo(["Fixtures/Apps/Notes", "--bus", ""]).status == 64)
        #expect(try await demo(["Fixtures/Apps/Notes", "--frobnicate"]).status == 64)
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-demo-nobus-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: state) }
        let noBus = try await demo([TestPaths.fixtures.appendingPathComponent("Apps/Notes").path, "--state-dir", state.path])
        #expect(noBus.status == 69, "\(noBus.stderr)")
        #expect(noBus.stderr.hasPrefix("ferry-demo: error: "))
    }
}
