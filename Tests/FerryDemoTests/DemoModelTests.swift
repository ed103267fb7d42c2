@testable import ferry_demo
import FerryModel
import FerryTestSupport
import Foundation
import Testing

@Suite("ferry-demo content, configurations and per-scene state (no bus)")
struct DemoModelTests {
    let apps = TestPaths.fixtures.appendingPathComponent("Apps")

    func scratch() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-demo-unit-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test("Notes picks Editor for open-note and Default otherwise; Gallery picks Viewer for view-photo")
    func configurationByActivity() throws {
        let notes = try DemoFolder(path: apps.appendingPathComponent("Notes").path)
        let gallery = try DemoFolder(path: apps.appendingPathComponent("Gallery").path)
        #expect(notes.kind == .notes && gallery.kind == .gallery)
        #expect(notes.kind.configurationName(forActivityType: "org.ferry.notes.open-note") == "Editor")
        #expect(notes.kind.configurationName(forActivityType: "org.ferry.gallery.view-photo") == "Default")
        #expect(notes.kind.configurationName(forActivityType: nil) == "Default")
        #expect(gallery.kind.configurationName(forActivityType: "org.ferry.gallery.view-photo") == "Viewer")
        #expect(notes.kind.title(appName: notes.appName, item: "groceries") == "Notes — groceries")
        #expect(gallery.kind.title(appName: gallery.appName, item: nil) == "Gallery")
        let activity = notes.kind.activity(for: "groceries", appName: "Notes")
        #expect(activity.userInfo["noteID"] == .string("groceries") && activity.targetContentIdentifier == "groceries")
        #expect(notes.kind.item(in: activity) == "groceries")
        var hostile = try UserActivity(activityType: "org.ferry.notes.open-note")
        hostile.userInfo = ["noteID": "../../etc/passwd"]
        #expect(notes.kind.item(in: hostile) == nil)
        #expect(notes.kind.pasteConfiguration.acceptableTypeIdentifiers == ["public.plain-text", "public.image"])
        #expect(gallery.kind.pasteConfiguration.accepts([ContentType.png]))
    }

    @Test("notes are copied from Content on first run only; appends and new notes stay in the state directory")
    func notesLibrary() throws {
        let state = try scratch()
        defer { try? FileManager.default.removeItem(at: state) }
        let folder = apps.appendingPathComponent("Notes")
        let library = try ContentLibrary(kind: .notes, stateDirectory: state, appFolder: folder)
        #expect(library.ids == ["ferry-ideas", "groceries", "meeting"])
        let original = try #require(library.text(of: "groceries"))
        _ = try library.append("oat milk", toNote: "groceries")
        #expect(library.text(of: "groceries") == original + (original.hasSuffix("\n") ? "" : "\n") + "oat milk\n")
        let made = try library.add(Data("hello".utf8), suggestedName: "my note/../x", fileExtension: nil)
        #expect(made == "my-note----x")
        #expect(try library.add(Data("again".utf8), suggestedName: "my note/../x", fileExtension: nil) == "my-note----x-2")
        #expect(try library.add(Data("x".utf8), suggestedName: nil, fileExtension: nil) == "pasted")
        // A second start keeps what changed instead of copying the fixtures again.
        let again = try ContentLibrary(kind: .notes, stateDirectory: state, appFolder: folder)
        #expect(again.text(of: "groceries")?.hasSuffix("oat milk\n") == true)
        #expect(again.ids.count == 6)
        #expect(!again.contains("../Info") && !again.contains(".hidden"))
        // A note id that is a path never reaches the file system, even past the callers' checks.
        for bad in ["../escaped", "/tmp/escaped", ".hidden", ""] {
            #expect(throws: DemoFailure.self, "\(bad)") { try library.append("x", toNote: bad) }
        }
        #expect(!FileManager.default.fileExists(atPath: state.appendingPathComponent("escaped.txt").path))
    }

    @Test("gallery photos keep their file names; a pasted image gets its type's extension")
    func galleryLibrary() throws {
        let state = try scratch()
        defer { try? FileManager.default.removeItem(at: state) }
        let library = try ContentLibrary(kind: .gallery, stateDirectory: state, appFolder: apps.appendingPathComponent("Gallery"))
        #expect(library.ids == ["beach.jpg", "lake.png"])
        let id = try library.add(Data([0x89, 0x50]), suggestedName: "sunset", fileExtension: ContentType.png.preferredFilenameExtension)
        #expect(id == "sunset.png" && library.contains("sunset.png"))
    }

    @Test("each scene has its own state file, written atomically, gone after a discard and never written back")
    func sceneStateFiles() throws {
        let state = try scratch()
        defer { try? FileManager.default.removeItem(at: state) }
        let store = try SceneStateStore(stateDirectory: state)
        let a = SceneState(persistentIdentifier: "A-1", configuration: "Editor", item: "groceries")
        let b = SceneState(persistentIdentifier: "B-2", configuration: "Editor", item: "meeting")
        #expect(try store.save(a))
        #expect(try store.save(b))
        #expect(try !store.save(a), "an unchanged state is not written again")
        #expect(FileManager.default.fileExists(atPath: state.appendingPathComponent("scenes/A-1.plist").path))
        #expect(FileManager.default.fileExists(atPath: state.appendingPathComponent("scenes/B-2.plist").path))
        // A fresh store (a restarted app) reads each scene's own note back.
        let reopened = try SceneStateStore(stateDirectory: state)
        #expect(reopened.state(of: "A-1") == a && reopened.state(of: "B-2") == b)
        #expect(reopened.savedIdentifiers == ["A-1", "B-2"])
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: state.appendingPathComponent("scenes").path)
        #expect(leftovers.sorted() == ["A-1.plist", "B-2.plist"], "no temporary files remain")
        #expect(reopened.discard("A-1"))
        #expect(!reopened.discard("A-1"))
        #expect(try !reopened.save(a), "a discarded scene is not saved again")
        #expect(reopened.state(of: "A-1") == nil && reopened.state(of: "B-2") == b)
        // Identifiers that are not safe file names are escaped, never used as paths.
        #expect(SceneStateStore.fileName(for: "../x") == "__2e_2e_2fx.plist")
        #expect(SceneStateStore.fileName(for: "_a") == "__5fa.plist")
    }

    @Test("a folder without a valid Info.plist is a usage error naming the file and the bad key")
    func brokenFolders() throws {
        #expect(throws: DemoFailure.self) { try DemoFolder(path: apps.appendingPathComponent("Broken").path) }
        let folder = try scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cases = [
            "missing-bundle-identifier.plist": "CFBundleIdentifier",
            "scene-configurations-wrong-type.plist": "UIApplicationSceneManifest.UISceneConfigurations",
            "configuration-name-not-string.plist": "UIWindowSceneSessionRoleApplication[1].UISceneConfigurationName",
            "truncated.plist": "not a valid Info.plist",
            "not-a-plist.plist": "not a valid Info.plist",
        ]
        for (name, expected) in cases {
            let target = folder.appendingPathComponent("Info.plist")
            try? FileManager.default.removeItem(at: target)
            try FileManager.default.copyItem(at: apps.appendingPathComponent("Broken/\(name)"), to: target)
            do {
                _ = try DemoFolder(path: folder.path)
                Issue.record("\(name) was accepted")
            } catch {
                #expect(error.status == .usage, "\(name)")
                #expect(error.message.contains(expected), "\(name): \(error.message)")
            }
        }
    }
}
