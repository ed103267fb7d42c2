@testable import ferry_demo
import FerryModel
import FerryTestSupport
import Foundation
import Testing

@Suite("ferry-demo drag items and note attachments (no bus)")
struct DemoDragModelTests {
    let apps = TestPaths.fixtures.appendingPathComponent("Apps")

    func app(_ name: String) throws -> (DemoApp, URL) {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-demo-drag-\(UUID().uuidString.prefix(8))")
        let folder = try DemoFolder(path: apps.appendingPathComponent(name).path)
        let printer = EventPrinter(app: folder.manifest.bundleIdentifier, json: true, output: -1)
        return (try DemoApp(folder: folder, stateDirectory: state, printer: printer), state)
    }

    @Test("a note's drag item: its UTF-8 text, then the open-note activity naming it; item N is the Nth note")
    func noteItem() async throws {
        let (notes, state) = try app("Notes")
        defer { try? FileManager.default.removeItem(at: state) }
        #expect(notes.library.item(number: 2) == "groceries")
        #expect(notes.library.item(number: 0) == nil && notes.library.item(number: 4) == nil && notes.library.item(number: -1) == nil)
        let provider = try #require(notes.dragProvider(for: "groceries"))
        #expect(provider.registeredContentTypes == [.utf8PlainText, .userActivity])
        #expect(provider.suggestedName == "groceries")
        let text = try await provider.loadObject(ofClass: String.self)
        #expect(text == notes.library.text(of: "groceries"))
        let activity = try await provider.loadUserActivity()
        #expect(activity.activityType == "org.ferry.notes.open-note" && activity.userInfo["noteID"] == .string("groceries"))
        #expect(activity.targetContentIdentifier == "groceries")
        #expect(notes.dragProvider(for: "no-such-note") == nil && notes.dragProvider(for: "../etc/passwd") == nil)
    }

    @Test("a photo's drag item: the original, then its rendition in the other format, each loaded only when read, then the view-photo activity")
    func photoItem() async throws {
        let (gallery, state) = try app("Gallery")
        defer { try? FileManager.default.removeItem(at: state) }
        let content = apps.appendingPathComponent("Gallery/Content")
        let beach = try #require(gallery.dragProvider(for: "beach.jpg"))
        #expect(beach.registeredContentTypes == [.jpeg, .png, .userActivity])
        #expect(beach.suggestedName == "beach")
        #expect(beach.representations.prefix(2).map { $0.isFile } == [false, false], "loaders: the library promises large ones")
        #expect(beach.representations.prefix(2).map(\.estimatedSize) == [852, 1831])
        // A reader of public.image gets the original; one asking for PNG gets the rendition.
        let image = try await beach.loadObject(ofClass: ImageItem.self)
        let original = try Data(contentsOf: content.appendingPathComponent("beach.jpg"))
        #expect(image.contentType == .jpeg && image.data == original)
        let png = try await beach.loadData(for: .png)
        #expect(png.data == (try Data(contentsOf: content.appendingPathComponent("Renditions/beach.jpg/beach.png"))))
        #expect(try await beach.loadUserActivity().userInfo["photoID"] == .string("beach.jpg"))
        let lake = try #require(gallery.dragProvider(for: "lake.png"))
        #expect(lake.registeredContentTypes == [.png, .jpeg, .userActivity])
        #expect(try await lake.loadData(for: .jpeg).data == (try Data(contentsOf: content.appendingPathComponent("Renditions/lake.png/lake.jpg"))))
        #expect(try await lake.loadObject(ofClass: ImageItem.self).contentType == .png)
    }

    @Test("renditions: copied with the photos on the first run, never listed as photos; one per other type; a new photo has none; deleted with the photo")
    func renditions() throws {
        let (gallery, state) = try app("Gallery")
        defer { try? FileManager.default.removeItem(at: state) }
        let library = gallery.library
        #expect(library.ids == ["beach.jpg", "lake.png"], "the Renditions folder is not a photo")
        #expect(try FileManager.default.contentsOfDirectory(atPath: library.directory.path).sorted() == ["beach.jpg", "lake.png"])
        #expect(library.renditions(of: "lake.png").map(\.name) == ["lake.jpg"])
        #expect(library.renditions(of: "lake.png").map(\.type) == [.jpeg])
        #expect(library.renditions(of: "beach.jpg").map(\.type) == [.png])
        let folder = library.renditionFolder(of: "lake.png")
        #expect(folder.path.hasPrefix(state.path) && library.renditions(of: "lake.png")[0].url == folder.appendingPathComponent("lake.jpg"))
        // Only image files of a type other than the photo's own, one per type (by name), count.
        for name in ["lake-copy.png", "lake-2.jpeg", "notes.txt", ".hidden.gif", "lake.webp"] {
            try Data([1, 2, 3]).write(to: folder.appendingPathComponent(name))
        }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("sub.gif"), withIntermediateDirectories: true)
        #expect(library.renditions(of: "lake.png").map(\.name) == ["lake-2.jpeg", "lake.webp"])
        #expect(library.renditions(of: "no-such.png").isEmpty && library.renditions(of: "../lake.png").isEmpty)

        // A photo added later (a paste, a drop) has none, even where a folder of its name was left.
        try FileManager.default.createDirectory(at: library.renditionFolder(of: "sea.png"), withIntermediateDirectories: true)
        try Data([1]).write(to: library.renditionFolder(of: "sea.png").appendingPathComponent("sea.jpg"))
        #expect(try library.add(Data([0x89, 0x50]), suggestedName: "sea", fileExtension: "png") == "sea.png")
        #expect(library.renditions(of: "sea.png").isEmpty)
        #expect(gallery.dragProvider(for: "sea.png")?.registeredContentTypes == [.png, .userActivity])

        #expect(try library.delete("lake.png"))
        #expect(!FileManager.default.fileExists(atPath: folder.path) && library.ids == ["beach.jpg", "sea.png"])

        // A later run keeps the library as it is: the renditions are not copied again.
        let again = try ContentLibrary(kind: .gallery, stateDirectory: state, appFolder: apps.appendingPathComponent("Gallery"))
        #expect(again.renditions(of: "lake.png").isEmpty && again.renditions(of: "beach.jpg").map(\.name) == ["beach.png"])

        // Notes has none.
        let (notes, notesState) = try app("Notes")
        defer { try? FileManager.default.removeItem(at: notesState) }
        #expect(notes.library.renditions(of: "groceries").isEmpty)
        #expect(!FileManager.default.fileExists(atPath: notes.library.renditionsDirectory.path))
    }

    @Test("attachments: saved under the note with the type's extension, never replacing one; copied with a note; deleted with it")
    func attachments() throws {
        let (notes, state) = try app("Notes")
        defer { try? FileManager.default.removeItem(at: state) }
        let library = notes.library
        let png = Data([0x89, 0x50, 0x4E, 0x47])
        #expect(try library.saveAttachment(png, type: .png, suggestedName: "lake", toNote: "groceries") == "lake.png")
        #expect(try library.saveAttachment(png, type: .png, suggestedName: "lake", toNote: "groceries") == "lake-2.png")
        #expect(try library.saveAttachment(png, type: .jpeg, suggestedName: "../../x y", toNote: "groceries") == "------x-y.jpeg")
        #expect(try library.saveAttachment(png, type: .png, suggestedName: nil, toNote: "groceries") == "image.png")
        #expect(throws: DemoFailure.self) { try library.saveAttachment(png, type: .png, suggestedName: nil, toNote: "../x") }
        #expect(library.attachments(of: "groceries") == ["------x-y.jpeg", "image.png", "lake-2.png", "lake.png"])
        #expect(ContentLibrary.attachmentLine("lake.png") == "[image: lake.png]")
        #expect(try library.copyAttachments(from: "groceries", to: "meeting").copied.count == 4)
        #expect(try library.copyAttachments(from: "groceries", to: "meeting") == .init(), "files the target has are not copied again")
        #expect(try library.delete("groceries"))
        #expect(!library.contains("groceries") && library.attachments(of: "groceries").isEmpty)
        #expect(!FileManager.default.fileExists(atPath: library.attachmentFolder(of: "groceries").path))
        #expect(try !library.delete("groceries"))
        #expect(library.attachments(of: "meeting").count == 4, "the copy's attachments stay")
        #expect(try !library.delete("../Info"))
    }

    @Test("a copied note's attachment whose name the target uses for another picture gets a free name, and its line follows; the move keeps it")
    func attachmentNameClash() throws {
        let (notes, state) = try app("Notes")
        defer { try? FileManager.default.removeItem(at: state) }
        let library = notes.library
        _ = try library.saveAttachment(Data([1]), type: .png, suggestedName: "lake", toNote: "groceries")
        _ = try library.saveAttachment(Data([3]), type: .png, suggestedName: "sea", toNote: "groceries")
        _ = try library.saveAttachment(Data([2]), type: .png, suggestedName: "lake", toNote: "meeting")
        _ = try library.saveAttachment(Data([3]), type: .png, suggestedName: "sea", toNote: "meeting")
        let copy = try library.copyAttachments(from: "groceries", to: "meeting")
        #expect(copy.copied == ["lake-2.png"] && copy.renamed == ["lake.png": "lake-2.png"], "sea.png is the same picture: kept as it is")
        let meeting = library.attachmentFolder(of: "meeting")
        #expect(try Data(contentsOf: meeting.appendingPathComponent("lake.png")) == Data([2]), "the target's own picture stays")
        #expect(ContentLibrary.renamingAttachmentLines(in: "milk\n[image: lake.png]\n[image: sea.png]\n", copy.renamed)
                == "milk\n[image: lake-2.png]\n[image: sea.png]\n")
        #expect(ContentLibrary.renamingAttachmentLines(in: "see [image: lake.png]", copy.renamed) == "see [image: lake.png]", "whole lines only")
        // The same note copied again finds its pictures there: nothing new, the same renaming.
        #expect(try library.copyAttachments(from: "groceries", to: "meeting") == .init(copied: [], renamed: ["lake.png": "lake-2.png"]))
        // A move then deletes the original: the copy still has its picture.
        #expect(try library.delete("groceries"))
        #expect(try Data(contentsOf: meeting.appendingPathComponent("lake-2.png")) == Data([1]))
    }

    @Test("the drag book: the dragged item and a kept-in-place drop are reported once; proposals note changes")
    func dragBook() {
        let book = DragBook()
        book.began("7", item: "groceries")
        book.keepInPlace("7")
        #expect(book.ended("7") == ("groceries", true))
        #expect(book.ended("7") == (nil, false))
        #expect(book.propose(.copy, drag: "8", scene: "S") == nil)
        #expect(book.propose(.move, drag: "8", scene: "S") == .copy)
        book.forget(drag: "8", scene: "S")
        #expect(book.propose(.copy, drag: "8", scene: "S") == nil)
        // Scenes that refused a drag are never told it ended: old drags are forgotten.
        for drag in 9..<(9 + DragBook.keptDrags) { _ = book.propose(.forbidden, drag: String(drag), scene: "T") }
        #expect(book.propose(.copy, drag: "8", scene: "S") == nil, "drag 8, the oldest, was forgotten")
        #expect(book.propose(.copy, drag: String(8 + DragBook.keptDrags), scene: "T") == .forbidden)
    }
}
