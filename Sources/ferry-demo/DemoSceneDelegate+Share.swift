import Ferry
import FerryModel
import Synchronization

/// What a demo scene shares (Apple's `activityItemsConfiguration`) and hears when a share of it
/// ends (the completion handler).
extension DemoSceneDelegate {
    /// The item a share of the scene offers: the note or photo an Editor or Viewer shows, the one
    /// selected in Default; nil when there is none or it no longer exists.
    func sharedItem() -> String? {
        let item = shown.withLock { $0.item }
        return item.flatMap { app.library.contains($0) ? $0 : nil }
    }

    /// One item (``DemoApp/shareProvider(for:)``): Notes the note's text and its open-note
    /// activity, Gallery the photo, its renditions, its caption as plain text and its view-photo
    /// activity; the set's title and the item's metadata title are the item's id (`groceries`,
    /// `lake.png`); share and copy. Prints `share-provided` (`items=0` when the scene has
    /// nothing to share).
    func activityItemsConfiguration(for scene: Scene) -> ActivityItemsConfiguration? {
        let id = scene.persistentIdentifier
        let configuration = shown.withLock { $0.configuration }
        guard let item = sharedItem(), let provider = app.shareProvider(for: item) else {
            app.printer.print(DemoEvent("share-provided", session: id, headline: ("configuration", configuration), [("items", .int(0))]))
            return nil
        }
        var items = ActivityItemsConfiguration(itemProviders: [provider])
        items.title = item
        items.perItemMetadata = [0: ActivityItemsConfiguration.ItemMetadata(title: item)]
        app.printer.print(DemoEvent("share-provided", session: id, headline: ("configuration", configuration),
                                    [(app.kind.eventKey, .string(item)), ("items", .int(1)),
                                     ("types", .strings(provider.registeredContentTypes.map(\.identifier)))]))
        return items
    }

    /// Prints `share-completed`: the share, the activity performed (none when dismissed),
    /// `completed`, what it returned (`key:value` pairs joined by `;`, one entry per item), its
    /// message and error.
    func scene(_ scene: Scene, shareDidComplete completion: ShareCompletion, share: String) async {
        var details: [(key: String, value: DemoEvent.Value)] = [("share", .string(share))]
        if let type = completion.activityType { details.append(("activityType", .string(type.rawValue))) }
        if completion.completed { details.append(("completed", .flag)) }
        if !completion.returnedItems.isEmpty { details.append(("returned", .strings(completion.returnedItems.map(Self.describe)))) }
        if let message = completion.message { details.append(("message", .string(message))) }
        if let name = completion.errorName { details.append(("errorName", .string(name))) }
        if let error = completion.error, error != completion.message { details.append(("error", .string(error))) }
        app.printer.print(DemoEvent("share-completed", session: scene.persistentIdentifier, details))
    }

    /// `album:Shared;photo:lake.png`: a returned item for an event line, keys sorted.
    static func describe(_ item: [String: String]) -> String {
        item.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ";")
    }
}
