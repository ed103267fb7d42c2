import Ferry
import FerryModel
import Synchronization

/// The drop target side of the demo apps (Apple's `UIDropInteractionDelegate`): a scene takes
/// what its paste configuration accepts (Notes text and images, Gallery images); a note dragged
/// between two Notes scenes with move is moved.
extension DemoSceneDelegate {
    /// What the scene proposes for a drag over it: cancel over the scene the drag came from (a
    /// note is not dropped onto itself), forbidden for types the paste configuration does not
    /// accept, move for a drag between Notes scenes that allows it, else copy.
    func proposal(for session: DropSession, in scene: Scene) -> DropProposal {
        if session.isLocal, session.sourceSession == scene.persistentIdentifier { return .cancel }
        guard session.canLoad(app.kind.pasteConfiguration) else { return .forbidden }
        return app.kind == .notes && session.isLocal && session.allowsMoveOperation ? .move : .copy
    }

    /// Prints `drop-entered` the first time a scene answers a drag (with the proposal and the
    /// first item's preview title, when `preview` gives one), then `drop-updated` whenever the
    /// proposal changes (every time with `--verbose`).
    private func note(_ proposal: DropProposal, for session: DropSession, in scene: Scene, preview: String? = nil) {
        let id = scene.persistentIdentifier
        let before = app.drags.propose(proposal.operation, drag: session.id, scene: id)
        var details: [(key: String, value: DemoEvent.Value)] = [("drag", .string(session.id)),
                                                                 ("at", .string(Self.format(session.location)))]
        if before == nil {
            details.append(("types", .strings(session.types.map(\.identifier))))
            details.append(("items", .int(session.numberOfItems)))
            if session.isLocal { details.append(("local", .flag)) }
            if let source = session.sourceSession { details.append(("from", .string(source))) }
            if let preview { details.append(("preview", .string(preview))) }
            app.printer.print(DemoEvent("drop-entered", session: id, headline: ("operation", proposal.operation.name), details))
        } else if before != proposal.operation || app.verbose {
            app.printer.print(DemoEvent("drop-updated", session: id, headline: ("operation", proposal.operation.name), details))
        }
    }

    func scene(_ scene: Scene, canHandle session: DropSession) -> Bool {
        let proposal = proposal(for: session, in: scene)
        // The library answers a scene that cannot handle the drag without asking further: say so here.
        if proposal.operation == .forbidden { note(proposal, for: session, in: scene) }
        return proposal.operation != .forbidden
    }

    /// Prints `drop-entered` with what the drag shows: the preview is the one thing of the items
    /// a target sees before the drop.
    func scene(_ scene: Scene, dropSessionDidEnter session: DropSession) async {
        let preview = (try? await session.previews())?.lazy.compactMap { $0?.title }.first
        note(proposal(for: session, in: scene), for: session, in: scene, preview: preview)
    }

    func scene(_ scene: Scene, dropSessionDidUpdate session: DropSession) async -> DropProposal {
        let proposal = proposal(for: session, in: scene)
        note(proposal, for: session, in: scene)
        return proposal
    }

    func scene(_ scene: Scene, dropSessionDidExit session: DropSession) async {
        app.drags.forget(drag: session.id, scene: scene.persistentIdentifier)
        app.printer.print(DemoEvent("drop-exited", session: scene.persistentIdentifier, [("drag", .string(session.id))]))
    }

    /// Reads the items (``receive(_:into:readsActivity:)``) and prints `drop-performed`; a local
    /// drop that kept the note where it was tells the source not to delete it.
    /// - Throws: `FerryError` `.notFound` when no item could be loaded (the drag then ends as
    ///   cancel), `.unavailable` when the content could not be written.
    func scene(_ scene: Scene, performDrop session: DropSession, operation: DropOperation,
               itemProviders: [ItemProvider]) async throws -> String {
        let id = scene.persistentIdentifier
        guard let intake = try await receive(itemProviders, into: scene, readsActivity: session.isLocal) else {
            let offered = itemProviders.flatMap(\.registeredContentTypes).map(\.identifier)
            app.printer.print(DemoEvent("drop-failed", session: id, [("drag", .string(session.id)), ("offered", .strings(offered))]))
            throw FerryError(.notFound, "nothing to drop as \(app.kind.pasteConfiguration.acceptableTypeIdentifiers.joined(separator: ", "))")
        }
        if intake.inPlace, session.isLocal { app.drags.keepInPlace(session.id) }
        app.printer.print(DemoEvent("drop-performed", session: id, headline: ("configuration", intake.configuration),
                                    [("drag", .string(session.id)), ("operation", .string(operation.name))] + intake.details))
        if app.kind == .notes {
            await present(scene)
            persist(scene, reporting: true)
        }
        return intake.summary
    }

    func scene(_ scene: Scene, dropSessionDidEnd session: DropSession, operation: DropOperation) async {
        app.drags.forget(drag: session.id, scene: scene.persistentIdentifier)
        app.printer.print(DemoEvent("drop-ended", session: scene.persistentIdentifier, headline: ("operation", operation.name),
                                    [("drag", .string(session.id))]))
    }
}
