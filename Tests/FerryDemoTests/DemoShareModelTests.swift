@testable import ferry_demo
import FerryModel
import FerryTestSupport
import Foundation
import Testing

@Suite("ferry-demo share model: Gallery's albums, Notes' append target (no bus)")
struct DemoShareModelTests {
    let apps = TestPaths.fixtures.appendingPathComponent("Apps")

    func scratch() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-demo-share-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test("an album keeps photo ids in the order added, each once, in <state>/albums/<name>.txt")
    func albums() throws {
        let state = try scratch()
        defer { try? FileManager.default.removeItem(at: state) }
        let albums = GalleryAlbums(stateDirectory: state)
        #expect(albums.photos(in: GalleryAlbums.shared).isEmpty && albums.names.isEmpty)
        #expect(try albums.add("lake.png", to: "Shared") == .init(count: 1, added: true))
        #expect(try albums.add("beach.jpg", to: "Shared") == .init(count: 2, added: true))
        #expect(try albums.add("lake.png", to: "Shared") == .init(count: 2, added: false), "a photo is in an album once")
        #expect(albums.photos(in: "Shared") == ["lake.png", "beach.jpg"])
        let file = state.appendingPathComponent("albums/Shared.txt")
        #expect(try String(contentsOf: file, encoding: .utf8) == "lake.png\nbeach.jpg\n")
        // Another instance (the next run) reads the same album.
        #expect(GalleryAlbums(stateDirectory: state).photos(in: "Shared") == ["lake.png", "beach.jpg"])
        #expect(albums.names == ["Shared"])
        // Names that are paths never reach the file system.
        for bad in ["../escaped", "/tmp/x", ".hidden", ""] {
            #expect(throws: DemoFailure.self, "\(bad)") { try albums.add("lake.png", to: bad) }
            #expect(throws: DemoFailure.self, "\(bad)") { try albums.add(bad, to: "Shared") }
        }
        #expect(!FileManager.default.fileExists(atPath: state.appendingPathComponent("escaped.txt").path))
        // A hand-edited album with junk lines lists only what can name a photo.
        try Data("lake.png\n../../etc/passwd\n\nlake.png\nsun.gif\n".utf8).write(to: file)
        #expect(albums.photos(in: "Shared") == ["lake.png", "sun.gif"])
    }

    @Test("a shared image with the bytes of a library photo is that photo; other bytes make a new photo")
    func sharedPhotos() throws {
        let state = try scratch()
        defer { try? FileManager.default.removeItem(at: state) }
        let folder = apps.appendingPathComponent("Gallery")
        let library = try ContentLibrary(kind: .gallery, stateDirectory: state, appFolder: folder)
        let lake = try Data(contentsOf: folder.appendingPathComponent("Content/lake.png"))
        #expect(library.photo(withBytes: lake) == "lake.png")
        #expect(ContentLibrary.fileSize(library.url(of: "lake.png")) == lake.count)
        #expect(ContentLibrary.fileSize(state.appendingPathComponent("nothing")) == nil)
        #expect(try library.addSharedPhoto(lake, type: .png, suggestedName: "whatever") == ("lake.png", false))
        // A rendition is not a photo of its own: its bytes make a new photo.
        let jpeg = try Data(contentsOf: folder.appendingPathComponent("Content/Renditions/lake.png/lake.jpg"))
        let added = try library.addSharedPhoto(jpeg, type: .jpeg, suggestedName: "lake")
        #expect(added == ("lake.jpeg", true))
        #expect(library.ids == ["beach.jpg", "lake.jpeg", "lake.png"])
        #expect(try library.addSharedPhoto(jpeg, type: .jpeg, suggestedName: "other") == ("lake.jpeg", false), "the second time it is there")
        let other = Data([0x89, 0x50, 0x4E, 0x47, 1, 2, 3])
        #expect(try library.addSharedPhoto(other, type: .png, suggestedName: nil) == ("pasted.png", true))
        #expect(try library.addSharedPhoto(other + [4], type: .png, suggestedName: "../../x") == ("------x.png", true))
    }

    @Test("shared text goes to the front-most Editor showing an existing note, else to the note Shared")
    func appendTarget() throws {
        let state = try scratch()
        defer { try? FileManager.default.removeItem(at: state) }
        let library = try ContentLibrary(kind: .notes, stateDirectory: state, appFolder: apps.appendingPathComponent("Notes"))
        typealias Editor = ContentLibrary.EditorCandidate
        #expect(library.appendTarget(editors: []) == ("Shared", nil))
        let editors = [Editor(session: "A", note: "groceries", frontRank: 3), Editor(session: "B", note: "meeting", frontRank: 7),
                       Editor(session: "C", note: nil, frontRank: 9), Editor(session: "D", note: "gone", frontRank: 12)]
        // D is in front but its note no longer exists; C shows nothing: B's note.
        #expect(library.appendTarget(editors: editors) == ("meeting", "B"))
        #expect(library.appendTarget(editors: [editors[0]]) == ("groceries", "A"))
        #expect(library.appendTarget(editors: [editors[2], editors[3]]) == ("Shared", nil))

        let meeting = try #require(library.text(of: "meeting"))
        let appended = try library.appendShared([.text("oat milk"), .text("rye bread")], editors: editors)
        #expect(appended == .init(note: "meeting", session: "B", bytes: 18, length: appended.length, created: false))
        let expected = meeting + (meeting.hasSuffix("\n") ? "" : "\n") + "oat milk\nrye bread\n"
        #expect(library.text(of: "meeting") == expected && appended.length == expected.utf8.count)

        let shared = try library.appendShared([.text("first")], editors: [])
        #expect(shared == .init(note: "Shared", session: nil, bytes: 5, length: 6, created: true))
        #expect(try library.appendShared([.text("second\n")], editors: []) == .init(note: "Shared", session: nil, bytes: 7, length: 13, created: false))
        #expect(library.text(of: "Shared") == "first\nsecond\n")
        #expect(library.ids.contains("Shared"))
        #expect(throws: DemoFailure.self) { try library.appendShared([], editors: []) }
        #expect(throws: DemoFailure.self) { try library.appendShared([.text("")], editors: []) }
    }

    @Test("a shared photo carries its caption as plain text (a drag does not); the caption and picture appended to a note make an attachment")
    func captionedPhoto() async throws {
        let state = try scratch()
        defer { try? FileManager.default.removeItem(at: state) }
        let printer = EventPrinter(app: "x", json: true, output: -1)
        let gallery = try DemoApp(folder: try DemoFolder(path: apps.appendingPathComponent("Gallery").path),
                                  stateDirectory: state.appendingPathComponent("Gallery"), printer: printer)
        #expect(gallery.library.caption(of: "lake.png") == "lake.png")
        #expect(gallery.library.caption(of: "gone.png") == nil)
        let shared = try #require(gallery.shareProvider(for: "lake.png"))
        #expect(shared.registeredContentTypes == [.png, .jpeg, .utf8PlainText, .userActivity])
        #expect(shared.hasRepresentationConforming(to: .plainText) && shared.suggestedName == "lake")
        #expect(try await shared.loadObject(ofClass: String.self) == "lake.png")
        #expect(try #require(gallery.dragProvider(for: "lake.png")).registeredContentTypes == [.png, .jpeg, .userActivity],
                "the drag item stays a picture")
        #expect(gallery.shareProvider(for: "gone.png") == nil)
        // Notes' append, as its activity reads the item: the caption's line, then the picture's.
        let notes = try DemoApp(folder: try DemoFolder(path: apps.appendingPathComponent("Notes").path),
                                stateDirectory: state.appendingPathComponent("Notes"), printer: printer)
        let image = try await shared.loadObject(ofClass: ImageItem.self)
        let before = try #require(notes.library.text(of: "groceries"))
        let editors = [ContentLibrary.EditorCandidate(session: "A", note: "groceries", frontRank: 1)]
        let appended = try notes.library.appendShared([.text("lake.png"), .image(image, suggestedName: "lake")], editors: editors)
        #expect(appended.note == "groceries" && appended.session == "A" && appended.attachments == ["lake.png"] && !appended.created)
        let after = before + (before.hasSuffix("\n") ? "" : "\n") + "lake.png\n[image: lake.png]\n"
        #expect(notes.library.text(of: "groceries") == after && appended.length == after.utf8.count)
        #expect(appended.bytes == "lake.png\n[image: lake.png]".utf8.count)
        let original = try Data(contentsOf: apps.appendingPathComponent("Gallery/Content/lake.png"))
        #expect(try Data(contentsOf: notes.library.attachmentFolder(of: "groceries").appendingPathComponent("lake.png")) == original)
        // Again: another attachment, never over the first.
        let again = try notes.library.appendShared([.text("lake.png"), .image(image, suggestedName: "lake")], editors: editors)
        #expect(again.attachments == ["lake-2.png"] && notes.library.attachments(of: "groceries") == ["lake-2.png", "lake.png"])
        // An image alone is content too; nothing at all is not.
        let alone = try notes.library.appendShared([.image(image, suggestedName: nil)], editors: [])
        #expect(alone.note == "Shared" && alone.created && alone.attachments == ["image.png"])
        #expect(notes.library.text(of: "Shared") == "[image: image.png]\n")
    }

    @Test("scenes take increasing front ranks; --perform-delay is a hidden option of 0 to 600 seconds")
    func frontRanksAndDelay() async throws {
        let state = try scratch()
        defer { try? FileManager.default.removeItem(at: state) }
        let folder = try DemoFolder(path: apps.appendingPathComponent("Notes").path)
        let app = try DemoApp(folder: folder, stateDirectory: state, printer: EventPrinter(app: "x", json: true, output: -1))
        let first = app.nextFrontRank()
        #expect(app.nextFrontRank() > first)
        #expect(app.performDelay == nil)

        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent/ferry-demo-test"
        func demo(_ arguments: [String]) async throws -> ChildProcessResult {
            try await ChildProcess.run(try BuiltProducts.executable("ferry-demo"), arguments, environment: environment,
                                       timeout: .seconds(20))
        }
        let path = apps.appendingPathComponent("Notes").path
        for bad in ["-1", "601", "soon"] {
            let result = try await demo([path, "--perform-delay", bad, "--state-dir", state.path])
            #expect(result.status == 64, "\(bad): \(result.stderr)")
        }
        // A good delay gets past the arguments (and stops at the missing bus).
        #expect(try await demo([path, "--perform-delay", "2.5", "--state-dir", state.path]).status == 69)
        let help = try await demo(["--help"])
        #expect(help.status == 0 && help.stdout.contains("Add to Album") && !help.stdout.contains("perform-delay"), "hidden from --help")
    }
}
