import Ferry
import FerryModel

extension DemoSceneDelegate {
    /// `paste(itemProviders:)`: Notes appends the pasted text (and images, as attachments) to the
    /// Editor's note, or makes a new note in Default (and selects it); Gallery adds each pasted
    /// image as a photo (``receive(_:into:readsActivity:)``). Prints `paste`, or `paste-declined`
    /// when no item loads as an accepted type.
    /// - Returns: a one-line summary (`appended 12 bytes to groceries`, `added photo pasted.png`).
    /// - Throws: `FerryError` `.notFound` when nothing could be loaded; `.unavailable` when the
    ///   content could not be written.
    func paste(_ providers: [ItemProvider], into scene: Scene) async throws -> String {
        guard let intake = try await receive(providers, into: scene, readsActivity: false) else {
            throw declined(scene, offered: providers)
        }
        app.printer.print(DemoEvent("paste", session: scene.persistentIdentifier,
                                    headline: ("configuration", intake.configuration), intake.details))
        if app.kind == .notes { persist(scene, reporting: true) }
        return intake.summary
    }

    /// Prints `paste-declined` and makes the error the paste fails with.
    private func declined(_ scene: Scene, offered providers: [ItemProvider]) -> FerryError {
        let accepted = app.kind.pasteConfiguration.acceptableTypeIdentifiers
        let offered = providers.flatMap(\.registeredContentTypes).map(\.identifier)
        app.printer.print(DemoEvent("paste-declined", session: scene.persistentIdentifier,
                                    [("accepts", .strings(accepted)), ("offered", .strings(offered))]))
        return FerryError(.notFound, "nothing to paste as \(accepted.joined(separator: ", "))")
    }
}
