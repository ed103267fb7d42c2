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

    @Test("a photo's drag item: its bytes in its own format, loaded only when read, then the view-photo activity")
    func photoItem() async throws {
        let (gallery, state) = try app("Gallery")
        defer { try? FileManager.default.removeItem(at: state) }
        let provider = try #require(gallery.dragProvider(for: "beach.jpg"))
        #expect(provider.registeredContentTypes == [.jpeg, .userActivity])
        #expect(provider.suggestedName == "beach")
        let first = try #require(provider.representations.first)
        #expect(!first.isFile && first.estimatedSize == 852, "a loader with its size: the library promises it")
        let image = try await provider.loadObject(ofClass: ImageItem.self)
        #expect(image.data == (try Data(contentsOf: apps.appendingPathComponent("Gallery/Content/beach.jpg"))))
        #expect(try await provider.loadUserActivity().userInfo["photoID"] == .string("beach.jpg"))
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
        #expect(try library.copyAttachments(from: "groceries", to: "meeting").count == 4)
        #expect(try library.copyAttachments(from: "groceries", to: "meeting").isEmpty, "names the target has are kept")
        #expect(try library.delete("groceries"))
        #expect(!library.contains("groceries") && library.attachments(of: "groceries").isEmpty)
        #expect(!FileManager.default.fileExists(atPath: library.attachmentFolder(of: "groceries").path))
        #expect(try !library.delete("groceries"))
        #expect(library.attachments(of: "meeting").count == 4, "the copy's attachments stay")
        #expect(try !library.delete("../Info"))
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
