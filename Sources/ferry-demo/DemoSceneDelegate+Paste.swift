import Ferry
import FerryModel
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension DemoSceneDelegate {
    /// `paste(itemProviders:)`: Notes appends the pasted text to the Editor's note, or makes a new
    /// note in Default (and selects it); Gallery adds each pasted image as a photo. Prints `paste`,
    /// or `paste-declined` when no item loads as the accepted type.
    /// - Returns: a one-line summary (`appended 12 bytes to groceries`, `added photo pasted.png`).
    /// - Throws: `FerryError` `.notFound` when nothing could be loaded; `.unavailable` when the
    ///   content could not be written.
    func paste(_ providers: [ItemProvider], into scene: Scene) async throws -> String {
        let id = scene.persistentIdentifier
        switch app.kind {
        case .notes:
            var texts: [String] = []
            var types: [String] = []
            for provider in providers where provider.canLoadObject(ofClass: String.self) {
                do {
                    let loaded = try await provider.loadData(for: .plainText)
                    texts.append(try String.object(itemProviderData: loaded.data, contentType: loaded.contentType))
                    types.append(loaded.contentType.identifier)
                } catch {
                    app.report("cannot load a pasted item: \(error)", session: id)
                }
            }
            guard !texts.isEmpty else { throw declined(scene, offered: providers) }
            let text = texts.joined(separator: "\n")
            let (configuration, current) = shown.withLock { ($0.configuration, $0.item) }
            let note: String
            let summary: String
            do {
                if configuration == app.kind.detailConfiguration, let current {
                    let length = try app.library.append(text, toNote: current)
                    note = current
                    summary = "appended \(text.utf8.count) bytes to \(current) (now \(length) bytes)"
                } else {
                    let body = text.hasSuffix("\n") ? text : text + "\n"
                    note = try app.library.add(Data(body.utf8), suggestedName: providers.first?.suggestedName, fileExtension: nil)
                    shown.withLock { $0.item = note }
                    summary = "new note \(note)"
                }
            } catch {
                app.report(error.message, session: id)
                throw FerryError(.unavailable, error.message)
            }
            app.printer.print(DemoEvent("paste", session: id, headline: ("configuration", configuration),
                                        [("note", .string(note)), ("types", .strings(types)), ("bytes", .int(text.utf8.count))]))
            persist(scene, reporting: true)
            return summary
        case .gallery:
            var added: [String] = []
            var types: [String] = []
            var bytes = 0
            for provider in providers where provider.canLoadObject(ofClass: ImageItem.self) {
                do {
                    let image = try await provider.loadObject(ofClass: ImageItem.self)
                    let photo = try app.library.add(image.data, suggestedName: provider.suggestedName,
                                                    fileExtension: image.contentType.preferredFilenameExtension)
                    added.append(photo)
                    types.append(image.contentType.identifier)
                    bytes += image.data.count
                } catch let failure as DemoFailure {
                    app.report(failure.message, session: id)
                } catch {
                    app.report("cannot load a pasted item: \(error)", session: id)
                }
            }
            guard !added.isEmpty else { throw declined(scene, offered: providers) }
            let configuration = shown.withLock { $0.configuration }
            app.printer.print(DemoEvent("paste", session: id, headline: ("configuration", configuration),
                                        [("photos", .strings(added)), ("types", .strings(types)), ("bytes", .int(bytes))]))
            return "added \(added.count == 1 ? "photo" : "photos") \(added.joined(separator: ", "))"
        }
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
