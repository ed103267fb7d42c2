#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Ferry
import FerryModel
import Synchronization

/// The drag source side of the demo apps (Apple's `UIDragInteractionDelegate`): Notes drags a
/// note, Gallery a photo; after a move the source deletes its original.
extension DemoSceneDelegate {
    /// The item a drag request names: `item` N ≥ 1 is the Nth item of the library (sorted by
    /// id); 0 (the default) is the scene's own — the note or photo an Editor or Viewer shows, the
    /// first of the list or grid in Default. nil when there is none.
    func draggedItem(for request: DragRequest) -> String? {
        if request.item != 0 { return app.library.item(number: request.item) }
        let (configuration, item) = shown.withLock { ($0.configuration, $0.item) }
        if configuration == app.kind.detailConfiguration { return item.flatMap { app.library.contains($0) ? $0 : nil } }
        return app.library.ids.first
    }

    func scene(_ scene: Scene, itemsForBeginning request: DragRequest) async -> DragItems {
        let id = scene.persistentIdentifier
        guard let item = draggedItem(for: request), let provider = app.dragProvider(for: item) else {
            app.printer.print(DemoEvent("drag-refused", session: id, [("drag", .string(request.id)), ("item", .int(request.item))]))
            return .none
        }
        app.drags.began(request.id, item: item)
        // Only Notes moves (a note dragged to another of its scenes); the user asks for it.
        let allowsMove = app.kind == .notes && request.wantsMove
        var details: [(key: String, value: DemoEvent.Value)] = [("drag", .string(request.id)), (app.kind.eventKey, .string(item)),
                                                                 ("types", .strings(provider.registeredContentTypes.map(\.identifier)))]
        if allowsMove { details.append(("move", .flag)) }
        app.printer.print(DemoEvent("drag-began", session: id, details))
        return DragItems([provider], allowsMoveOperation: allowsMove, previews: [dragPreview(of: item, provider: provider)])
    }

    /// What a drag of `item` shows under the pointer (Apple's `UIDragItem.previewProvider`): its
    /// name (the note's id, the photo's file name without extension) and, for a Gallery PNG that
    /// is small enough to be a preview, the photo itself. Nil when neither makes a preview.
    func dragPreview(of item: String, provider: ItemProvider) -> DragPreview? {
        var image: Data?
        if app.kind == .gallery, ContentLibrary.imageType(ofFileNamed: item) == .png,
           let bytes = try? Data(contentsOf: app.library.url(of: item)), (try? DragPreview.validateImage(bytes)) != nil {
            image = bytes
        }
        return try? DragPreview(title: provider.suggestedName ?? item, image: image)
    }

    func scene(_ scene: Scene, dragSessionDidMove id: String, to location: Point, operation: DropOperation) async {
        guard app.verbose else { return }
        app.printer.print(DemoEvent("drag-moved", session: scene.persistentIdentifier, headline: ("operation", operation.name),
                                    [("drag", .string(id)), ("at", .string(Self.format(location)))]))
    }

    /// Prints `drag-ended`; after a move (not an edge drop, not a drop that kept the note where it
    /// was) deletes the dragged note, and a Default scene that had it selected selects nothing.
    func scene(_ scene: Scene, dragSessionDidEnd end: DragEnd) async {
        let id = scene.persistentIdentifier
        let (item, keptInPlace) = app.drags.ended(end.id)
        var details: [(key: String, value: DemoEvent.Value)] = [("drag", .string(end.id))]
        if let item { details.append((app.kind.eventKey, .string(item))) }
        if let target = end.target { details.append(("target", .string(target))) }
        if let newSession = end.newSession { details.append(("newSession", .string(newSession))) }
        var deleted: String?
        if end.operation == .move, let item, !keptInPlace, end.newSession == nil {
            do {
                if try app.library.delete(item) { deleted = item }
            } catch {
                app.report(error.message, session: id)
            }
        }
        if deleted != nil { details.append(("deleted", .flag)) }
        app.printer.print(DemoEvent("drag-ended", session: id, headline: ("operation", end.operation.name), details))
        guard let deleted else { return }
        for other in scene.application?.connectedScenes ?? [] {
            guard let demo = other.delegate as? DemoSceneDelegate else { continue }
            let changed = demo.shown.withLock { shown in
                guard shown.configuration == DemoKind.defaultConfiguration, shown.item == deleted else { return false }
                shown.item = nil
                return true
            }
            if changed {
                await demo.present(other)
                demo.persist(other, reporting: true)
            }
        }
    }

    /// `12,340.5`: a point for event lines.
    static func format(_ point: Point) -> String {
        "\(format(point.x)),\(format(point.y))"
    }

    private static func format(_ number: Double) -> String {
        number.rounded() == number && abs(number) < 1e15 ? String(Int(number)) : String(number)
    }
}
