import Ferry
import FerryModel
import Synchronization

/// Notes' "Append to Note" (`org.ferry.notes.append`, a share accepting `public.plain-text`): the
/// shared texts, joined by newlines, are appended to the note of Notes' front-most Editor scene
/// (the one that connected or came to the front last among those showing a note), or to the note
/// `Shared`, made for it when needed (``ContentLibrary/appendShared(_:editors:)``); an item that
/// is also an image (a photo with its caption) adds its picture after its text, as an attachment
/// of the note — as a dropped image does. Prints `activity-began` and `activity-performed` (or
/// `activity-failed`).
final class AppendToNoteActivity: ApplicationActivity {
    /// The activity's type.
    static let type: ActivityType = "org.ferry.notes.append"

    let app: DemoApp
    /// The app whose Editor scenes are candidates (weak: the application keeps its activities).
    weak let application: Application?

    init(app: DemoApp, application: Application) {
        self.app = app
        self.application = application
    }

    var activity: ActivityDescription {
        ActivityDescription(type: Self.type, title: "Append to Note", category: .share, acceptableTypes: [.plainText])
    }

    /// Notes' connected Editor scenes with what they show and when they came to the front.
    var editors: [ContentLibrary.EditorCandidate] {
        (application?.connectedScenes ?? []).compactMap { scene in
            guard let demo = scene.delegate as? DemoSceneDelegate else { return nil }
            let shown = demo.shown.withLock { $0 }
            guard shown.connected, shown.configuration == app.kind.detailConfiguration else { return nil }
            return ContentLibrary.EditorCandidate(session: scene.persistentIdentifier, note: shown.item, frontRank: shown.frontRank)
        }
    }

    /// Reads each item's text and, when the item is also an image (Gallery's shown photo with
    /// its caption), the image — the first representation conforming to `public.image`, as a
    /// drop reads it. Returns one `["note": id, "attachment": name]` per image attached, or
    /// `["note": id]` when there is none; the message says how much went where.
    func perform(with items: ActivityItems) async throws -> ActivityResult {
        do {
            try await app.activityBegan(Self.type, items)
            var parts: [ContentLibrary.NotePart] = []
            var types: [String] = []
            for provider in items.itemProviders {
                let loaded = try await provider.loadData(for: .plainText)
                parts.append(.text(try String.object(itemProviderData: loaded.data, contentType: loaded.contentType)))
                types.append(loaded.contentType.identifier)
                if provider.canLoadObject(ofClass: ImageItem.self) {
                    let image = try await provider.loadObject(ofClass: ImageItem.self)
                    parts.append(.image(image, suggestedName: provider.suggestedName))
                    types.append(image.contentType.identifier)
                }
            }
            let appended = try app.library.appendShared(parts, editors: editors)
            var details: [(key: String, value: DemoEvent.Value)] = [("note", .string(appended.note))]
            if let scene = appended.session { details.append(("scene", .string(scene))) }
            details += [("types", .strings(types)), ("bytes", .int(appended.bytes))]
            if !appended.attachments.isEmpty { details.append(("attachments", .strings(appended.attachments))) }
            if appended.created { details.append(("created", .flag)) }
            app.activityPerformed(Self.type, items, details)
            let attached = appended.attachments.isEmpty ? "" : ", attached \(appended.attachments.joined(separator: ", "))"
            let returned = appended.attachments.isEmpty ? [["note": appended.note]]
                                                        : appended.attachments.map { ["note": appended.note, "attachment": $0] }
            return ActivityResult(message: "Appended \(appended.bytes) bytes to \(appended.note) (now \(appended.length) bytes)\(attached)",
                                  returnedItems: returned)
        } catch {
            throw app.activityFailed(Self.type, items, error)
        }
    }
}
