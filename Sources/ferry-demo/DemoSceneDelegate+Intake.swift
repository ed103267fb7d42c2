import Ferry
import FerryModel
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a paste or a drop brought into a scene.
struct Intake: Sendable {
    /// The scene's configuration when it received.
    var configuration: String
    /// Notes: the note that got the text and attachments (the Editor's, or a new one in Default).
    var note: String?
    /// Gallery: the photos added.
    var photos: [String] = []
    /// Notes: the attachments saved (dropped or pasted images) and copied (a local note's).
    var attachments: [String] = []
    /// The types read, in order.
    var types: [String] = []
    /// The bytes read.
    var bytes = 0
    /// A drop of a note of this app: the note its activity named.
    var sourceNote: String?
    /// The dropped note is the one the Editor shows: nothing changed (and a move must not delete it).
    var inPlace = false
    /// One line for the paste's or drop's result.
    var summary = ""

    /// `note=… attachments=… types=… bytes=…` (Notes) or `photos=… types=… bytes=…` (Gallery).
    var details: [(key: String, value: DemoEvent.Value)] {
        var details: [(key: String, value: DemoEvent.Value)] = []
        if let note { details.append(("note", .string(note))) }
        if !photos.isEmpty { details.append(("photos", .strings(photos))) }
        if !attachments.isEmpty { details.append(("attachments", .strings(attachments))) }
        if let sourceNote { details.append(("from", .string(sourceNote))) }
        details.append(("types", .strings(types)))
        details.append(("bytes", .int(bytes)))
        if inPlace { details.append(("unchanged", .flag)) }
        return details
    }
}

extension DemoSceneDelegate {
    /// Reads the items a paste or a drop brings and changes the app's content:
    /// - Notes: texts and images (an image becomes an attachment of the note, and the note gets
    ///   its `[image: name]` line). In an Editor they are appended to its note; in Default they make
    ///   a new note (named after the first item's suggested name, else `pasted`), which is selected.
    ///   With `readsActivity` (a drop from this app), an item's open-note activity names the
    ///   dragged note: its attachments are copied too, and a note dropped onto the Editor showing
    ///   it changes nothing.
    /// - Gallery: each image becomes a photo.
    /// - Returns: what was received, nil when no item could be loaded as an accepted type.
    /// - Throws: `FerryError` `.unavailable` when the content could not be written.
    func receive(_ providers: [ItemProvider], into scene: Scene, readsActivity: Bool) async throws -> Intake? {
        let id = scene.persistentIdentifier
        let (configuration, current) = shown.withLock { ($0.configuration, $0.item) }
        var intake = Intake(configuration: configuration)
        var texts: [String] = []
        var images: [(image: ImageItem, name: String?)] = []
        for provider in providers {
            do {
                if readsActivity, intake.sourceNote == nil, app.kind == .notes, provider.canLoadObject(ofClass: UserActivity.self) {
                    let activity = try await provider.loadObject(ofClass: UserActivity.self)
                    intake.sourceNote = app.kind.item(in: activity).flatMap { app.library.contains($0) ? $0 : nil }
                }
                if provider.canLoadObject(ofClass: ImageItem.self) {
                    let image = try await provider.loadObject(ofClass: ImageItem.self)
                    images.append((image, provider.suggestedName))
                    intake.types.append(image.contentType.identifier)
                    intake.bytes += image.data.count
                } else if app.kind == .notes, provider.canLoadObject(ofClass: String.self) {
                    let loaded = try await provider.loadData(for: .plainText)
                    texts.append(try String.object(itemProviderData: loaded.data, contentType: loaded.contentType))
                    intake.types.append(loaded.contentType.identifier)
                    intake.bytes += loaded.data.count
                }
            } catch {
                app.report("cannot load an item: \(error)", session: id)
            }
        }
        guard !texts.isEmpty || !images.isEmpty else { return nil }
        do {
            switch app.kind {
            case .notes:
                try receiveInNote(&intake, texts: texts, images: images, current: current, suggestedName: providers.first?.suggestedName)
                if intake.note != current { shown.withLock { $0.item = intake.note } }
            case .gallery:
                for (image, name) in images {
                    intake.photos.append(try app.library.add(image.data, suggestedName: name,
                                                             fileExtension: image.contentType.preferredFilenameExtension))
                }
                intake.summary = "added \(intake.photos.count == 1 ? "photo" : "photos") \(intake.photos.joined(separator: ", "))"
            }
        } catch {
            app.report(error.message, session: id)
            throw FerryError(.unavailable, error.message)
        }
        return intake
    }

    /// Notes: appends texts and attachment lines to the Editor's note, or makes a new note in Default.
    private func receiveInNote(_ intake: inout Intake, texts: [String], images: [(image: ImageItem, name: String?)],
                               current: String?, suggestedName: String?) throws(DemoFailure) {
        let library = app.library
        if intake.configuration == app.kind.detailConfiguration, let current {
            intake.note = current
            if intake.sourceNote == current {
                intake.inPlace = true
                intake.summary = "\(current) is already here"
                return
            }
            // The dragged note's attachments first: its lines name them as the target has them.
            var copy = ContentLibrary.AttachmentCopy()
            if let source = intake.sourceNote { copy = try library.copyAttachments(from: source, to: current) }
            let parts = texts.map { ContentLibrary.NotePart.text(ContentLibrary.renamingAttachmentLines(in: $0, copy.renamed)) }
                + images.map { ContentLibrary.NotePart.image($0.image, suggestedName: $0.name) }
            let appended = try library.append(parts, toNote: current)
            intake.attachments = appended.attachments + copy.copied
            intake.summary = "appended \(appended.bytes) bytes to \(current) (now \(appended.length) bytes)"
                + (intake.attachments.isEmpty ? "" : ", attached \(intake.attachments.joined(separator: ", "))")
        } else {
            let body = texts.isEmpty ? "" : texts.joined(separator: "\n") + (texts.last?.hasSuffix("\n") == true ? "" : "\n")
            let note = try library.add(Data(body.utf8), suggestedName: suggestedName, fileExtension: nil)
            intake.note = note
            var copy = ContentLibrary.AttachmentCopy()
            if let source = intake.sourceNote {
                copy = try library.copyAttachments(from: source, to: note)
                if !copy.renamed.isEmpty { try library.write(Data(ContentLibrary.renamingAttachmentLines(in: body, copy.renamed).utf8), to: note) }
            }
            if !images.isEmpty {
                intake.attachments = try library.append(images.map { .image($0.image, suggestedName: $0.name) }, toNote: note).attachments
            }
            intake.attachments += copy.copied
            intake.summary = "new note \(note)"
                + (intake.attachments.isEmpty ? "" : " with \(intake.attachments.joined(separator: ", "))")
        }
    }
}
