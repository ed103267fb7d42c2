import Ferry
import FerryModel
import FerryTestSupport
import Foundation
import Testing

/// What the share tests need on top of the drag harness: a sharer client, items the test
/// process shares itself, and the Editor or Viewer of one note or photo.
extension DemoHarness {
    static let openNote = "org.ferry.notes.open-note"
    static let viewPhoto = "org.ferry.gallery.view-photo"
    static let addToAlbum: ActivityType = "org.ferry.gallery.add-to-album"
    static let appendToNote: ActivityType = "org.ferry.notes.append"

    /// Runs `body` with a client on this bus (the sharer, as `ferry share` is), closing it afterwards.
    func withShareClient<T>(_ body: (FerryClient) async throws -> T) async throws -> T {
        try await withDragClient(body)
    }

    /// Opens (or brings back) Notes' Editor of `note` and waits until it has settled.
    func openEditor(_ notes: DemoProcess, _ note: String) async throws -> String {
        let editor = try await open("org.ferry.notes", activityType: Self.openNote, key: "noteID", item: note)
        _ = try await notes.event("saved") { $0.session == editor && $0["note"] == note }
        return editor
    }

    /// Opens Gallery's Viewer of `photo` and waits until it has settled.
    func openViewer(_ gallery: DemoProcess, _ photo: String) async throws -> String {
        let viewer = try await open("org.ferry.gallery", activityType: Self.viewPhoto, key: "photoID", item: photo)
        _ = try await gallery.event("saved") { $0.session == viewer && $0["photo"] == photo }
        return viewer
    }

    /// The text of Gallery's album `name` (`<state>/albums/<name>.txt`), nil when it does not exist.
    func album(_ name: String = "Shared") -> String? {
        try? String(contentsOf: stateDirectory("Gallery").appendingPathComponent("albums/\(name).txt"), encoding: .utf8)
    }

    /// A plain-text item, as a tool shares `--text`.
    static func textItem(_ text: String) -> ItemProvider {
        var provider = ItemProvider()
        provider.registerDataRepresentation(for: .utf8PlainText, data: Data(text.utf8))
        return provider
    }

    /// An image item of `type` with `data` and a suggested name.
    static func imageItem(_ data: Data, type: ContentType, name: String) -> ItemProvider {
        var provider = ItemProvider()
        provider.registerDataRepresentation(for: type, data: data)
        provider.suggestedName = name
        return provider
    }
}
