import FerryModel
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// What the demo apps' share activities do to the library, without a bus: Gallery's "Add to
/// Album" keeps a shared image as a photo (the existing one when the library already has those
/// bytes), Notes' "Append to Note" appends shared text (and images, as attachments) to the
/// front-most Editor's note or to the note `Shared`; a shared photo's caption.
extension ContentLibrary {
    /// The note Notes appends shared text to when no Editor shows an existing note.
    static let sharedNote = "Shared"

    /// A Notes Editor that could take shared text.
    struct EditorCandidate: Sendable, Equatable {
        /// The scene's persistent identifier.
        var session: String
        /// The note it shows (nil: none).
        var note: String?
        /// When it last came to the front: larger is more recent (``DemoApp/nextFrontRank()``).
        var frontRank: Int
    }

    /// Where shared text goes: the note of the front-most Editor (the largest ``EditorCandidate/frontRank``)
    /// among those showing a note that exists, else ``sharedNote`` (no scene).
    func appendTarget(editors: [EditorCandidate]) -> (note: String, session: String?) {
        let front = editors.filter { $0.note.map(contains) ?? false }.max { $0.frontRank < $1.frontRank }
        guard let front, let note = front.note else { return (Self.sharedNote, nil) }
        return (note, front.session)
    }

    /// What ``appendShared(_:editors:)`` did.
    struct SharedAppend: Sendable, Equatable {
        /// The note that got the text.
        var note: String
        /// The Editor showing it, nil for the `Shared` note without an Editor.
        var session: String?
        /// The bytes appended to the note's text (the texts and `[image: …]` lines joined by newlines).
        var bytes: Int
        /// The note's length afterwards.
        var length: Int
        /// Whether the note was made for this text.
        var created: Bool
        /// The attachments saved for shared images, in order.
        var attachments: [String] = []
    }

    /// Appends shared items to the note ``appendTarget(editors:)`` picks (the `Shared` note is
    /// made when needed), as a drop into an Editor does (``append(_:toNote:)``): texts and
    /// `[image: name]` lines joined by newlines, on a line of their own, each image saved as an
    /// attachment of the note.
    /// - Throws: `DemoFailure` when there is neither text nor an image, or when the note or an
    ///   attachment cannot be written.
    func appendShared(_ parts: [NotePart], editors: [EditorCandidate]) throws(DemoFailure) -> SharedAppend {
        guard kind == .notes else { throw DemoFailure(.failure, "only Notes appends text to notes") }
        let hasContent = parts.contains { part in
            if case .text(let text) = part { !text.isEmpty } else { true }
        }
        guard hasContent else { throw DemoFailure(.failure, "no text to append") }
        let (note, session) = appendTarget(editors: editors)
        let created = !contains(note)
        let appended = try append(parts, toNote: note)
        return SharedAppend(note: note, session: session, bytes: appended.bytes, length: appended.length, created: created,
                            attachments: appended.attachments)
    }

    /// The caption a shared photo carries as its plain-text representation, so that text
    /// activities (Notes' "Append to Note") take it: one line naming the photo — its id, which
    /// is also the share's title (`lake.png`). Nil when there is no such photo.
    func caption(of photo: String) -> String? {
        guard kind == .gallery, contains(photo) else { return nil }
        return photo
    }

    /// The photo whose file holds exactly `data`, nil when none does (Gallery; renditions are
    /// not photos of their own).
    func photo(withBytes data: Data) -> String? {
        guard kind == .gallery else { return nil }
        for id in ids {
            let url = url(of: id)
            guard Self.fileSize(url) == data.count else { continue }
            if (try? Data(contentsOf: url)) == data { return id }
        }
        return nil
    }

    /// The size of the file at `url` in bytes, nil when it cannot be read. stat(2), not
    /// FileManager's attributes: without Foundation loaded their size is a `UInt`, not an `Int`.
    static func fileSize(_ url: URL) -> Int? {
        var info = stat()
        guard stat(url.path, &info) == 0 else { return nil }
        return Int(info.st_size)
    }

    /// Keeps a shared image as a photo: the existing photo with the same bytes, else a new one
    /// named after `suggestedName` (``add(_:suggestedName:fileExtension:)``, `pasted` without one)
    /// with the type's extension.
    /// - Returns: the photo's id and whether it is new.
    /// - Throws: `DemoFailure` when the photo cannot be written.
    func addSharedPhoto(_ data: Data, type: ContentType, suggestedName: String?) throws(DemoFailure) -> (photo: String, new: Bool) {
        guard kind == .gallery else { throw DemoFailure(.failure, "only Gallery keeps photos") }
        if let existing = photo(withBytes: data) { return (existing, false) }
        return (try add(data, suggestedName: suggestedName, fileExtension: type.preferredFilenameExtension), true)
    }
}
