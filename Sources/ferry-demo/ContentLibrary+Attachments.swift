import FerryModel
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Notes' attachments and the library operations drags need: an image dropped, pasted or shared
/// into a note is kept as `<state dir>/attachments/<note id>/<file name>` and the note gets the
/// line `[image: <file name>]` (``append(_:toNote:)``); deleting a note deletes its attachments;
/// `item N` of a drag names the Nth item of the library.
extension ContentLibrary {
    /// `<state dir>/attachments`, one folder per note that has any.
    var attachmentsDirectory: URL {
        directory.deletingLastPathComponent().appendingPathComponent("attachments", isDirectory: true)
    }

    /// The folder holding a note's attachments.
    func attachmentFolder(of note: String) -> URL {
        attachmentsDirectory.appendingPathComponent(note, isDirectory: true)
    }

    /// The line a note holds for an attachment: `[image: lake.png]`.
    static func attachmentLine(_ name: String) -> String {
        "[image: \(name)]"
    }

    /// The file names of a note's attachments, sorted (empty for a bad id or none).
    func attachments(of note: String) -> [String] {
        guard Self.isValidID(note) else { return [] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: attachmentFolder(of: note).path)) ?? []
        return names.filter(Self.isValidID).sorted()
    }

    /// Saves encoded image bytes as an attachment of `note`, named after `suggestedName` (made safe;
    /// `image` without one) with the type's extension, never replacing another attachment. The
    /// note's text is not changed: the caller appends ``attachmentLine(_:)``.
    /// - Returns: the attachment's file name.
    /// - Throws: `DemoFailure` for an id that cannot name a note, or when the file cannot be written.
    func saveAttachment(_ data: Data, type: ContentType, suggestedName: String?, toNote note: String) throws(DemoFailure) -> String {
        guard kind == .notes, Self.isValidID(note) else { throw DemoFailure(.failure, "'\(note)' cannot name a note") }
        let folder = attachmentFolder(of: note)
        let base = suggestedName.map(Self.safeName).flatMap { $0.isEmpty ? nil : $0 } ?? "image"
        let ext = type.preferredFilenameExtension.map(Self.safeName).flatMap { $0.isEmpty ? nil : $0 } ?? "img"
        return try lock.withLock { _ throws(DemoFailure) -> String in
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                var name = "\(base).\(ext)"
                var n = 1
                while !Self.isValidID(name) || FileManager.default.fileExists(atPath: folder.appendingPathComponent(name).path) {
                    n += 1
                    name = "\(base)-\(n).\(ext)"
                    if n > 10_000 { throw DemoFailure(.failure, "no free name for an attachment in \(folder.path)") }
                }
                try data.write(to: folder.appendingPathComponent(name), options: .atomic)
                return name
            } catch let failure as DemoFailure {
                throw failure
            } catch {
                throw DemoFailure(.failure, "cannot save an attachment of \(note) in \(folder.path): \(error)")
            }
        }
    }

    /// A piece of what a paste, a drop or a share adds to a note: a text, or an image that
    /// becomes an attachment of the note.
    enum NotePart: Sendable {
        /// Text, appended as it is.
        case text(String)
        /// Encoded image bytes, saved with ``saveAttachment(_:type:suggestedName:toNote:)`` and
        /// named in the note by their ``attachmentLine(_:)``.
        case image(ImageItem, suggestedName: String?)
    }

    /// What ``append(_:toNote:)`` did.
    struct NoteAppend: Sendable, Equatable {
        /// The attachments saved, in order.
        var attachments: [String] = []
        /// The bytes appended to the note's text (before its final newline).
        var bytes = 0
        /// The note's length afterwards.
        var length = 0
    }

    /// Appends `parts` to note `note` (made when needed), in order, joined by newlines, on a
    /// line of their own: a text as it is, an image saved as an attachment of the note and
    /// written as its `[image: name]` line — what a paste or a drop into an Editor and Notes'
    /// "Append to Note" do. The note's text is written once, after the attachments.
    /// - Throws: `DemoFailure` for an id that cannot name a note, or when a file cannot be written.
    func append(_ parts: [NotePart], toNote note: String) throws(DemoFailure) -> NoteAppend {
        var result = NoteAppend()
        var lines: [String] = []
        for part in parts {
            switch part {
            case .text(let text):
                lines.append(text)
            case .image(let image, let suggestedName):
                let saved = try saveAttachment(image.data, type: image.contentType, suggestedName: suggestedName, toNote: note)
                result.attachments.append(saved)
                lines.append(Self.attachmentLine(saved))
            }
        }
        let text = lines.joined(separator: "\n")
        result.bytes = text.utf8.count
        result.length = try append(text, toNote: note)
        return result
    }

    /// What ``copyAttachments(from:to:)`` did.
    struct AttachmentCopy: Sendable, Equatable {
        /// The files written in the target note's folder, by their names there.
        var copied: [String] = []
        /// Source name → the target's name of the same file, where they differ (`lake.png` →
        /// `lake-2.png`: the target had another `lake.png`).
        var renamed: [String: String] = [:]
    }

    /// Copies the attachments of note `source` to note `note`, so a copied note's `[image: …]`
    /// lines still name its pictures: under the same name; when the target has another file of
    /// that name, under a free one (`lake-2.png`), the copied text's lines then renamed with
    /// ``renamingAttachmentLines(in:_:)``. A file the target already has with the same bytes
    /// (the same note copied before) is not copied again.
    /// - Returns: the names copied and renamed.
    @discardableResult
    func copyAttachments(from source: String, to note: String) throws(DemoFailure) -> AttachmentCopy {
        guard source != note, Self.isValidID(note) else { return AttachmentCopy() }
        let names = attachments(of: source)
        guard !names.isEmpty else { return AttachmentCopy() }
        let folder = attachmentFolder(of: note)
        return try lock.withLock { _ throws(DemoFailure) -> AttachmentCopy in
            var result = AttachmentCopy()
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                for name in names {
                    let file = attachmentFolder(of: source).appendingPathComponent(name)
                    let bytes = try Data(contentsOf: file)
                    let (base, ext) = Self.splitExtension(name)
                    var candidate = name
                    var n = 1
                    while true {
                        let target = folder.appendingPathComponent(candidate)
                        if Self.isValidID(candidate), !FileManager.default.fileExists(atPath: target.path) {
                            try FileManager.default.copyItem(at: file, to: target)
                            result.copied.append(candidate)
                            break
                        }
                        if Self.isValidID(candidate), (try? Data(contentsOf: target)) == bytes { break }
                        n += 1
                        candidate = ext.map { "\(base)-\(n).\($0)" } ?? "\(base)-\(n)"
                        if n > 10_000 { throw DemoFailure(.failure, "no free name for \(name) in \(folder.path)") }
                    }
                    if candidate != name { result.renamed[name] = candidate }
                }
            } catch let failure as DemoFailure {
                throw failure
            } catch {
                throw DemoFailure(.failure, "cannot copy the attachments of \(source) to \(note): \(error)")
            }
            return result
        }
    }

    /// `text` with each line that is exactly `[image: <old>]` made `[image: <new>]` for the
    /// attachments ``copyAttachments(from:to:)`` renamed.
    static func renamingAttachmentLines(in text: String, _ renamed: [String: String]) -> String {
        guard !renamed.isEmpty else { return text }
        var lines: [String: String] = [:]
        for (old, new) in renamed { lines[attachmentLine(old)] = attachmentLine(new) }
        return text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { lines[String($0)] ?? String($0) }
            .joined(separator: "\n")
    }

    /// `lake.png` → (`lake`, `png`); a name without a dot has no extension.
    private static func splitExtension(_ name: String) -> (base: String, ext: String?) {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return (name, nil) }
        return (String(name[..<dot]), String(name[name.index(after: dot)...]))
    }

    /// Deletes item `id`: a note with its attachments, or a photo with its renditions.
    /// - Returns: whether it existed.
    /// - Throws: `DemoFailure` when it exists but cannot be removed.
    @discardableResult
    func delete(_ id: String) throws(DemoFailure) -> Bool {
        guard contains(id) else { return false }
        return try lock.withLock { _ throws(DemoFailure) -> Bool in
            do {
                try FileManager.default.removeItem(at: url(of: id))
                let extras = kind == .notes ? attachmentFolder(of: id) : renditionFolder(of: id)
                if FileManager.default.fileExists(atPath: extras.path) { try FileManager.default.removeItem(at: extras) }
                return true
            } catch {
                throw DemoFailure(.failure, "cannot delete \(id) from \(directory.path): \(error)")
            }
        }
    }

    /// The item a drag's `item` number names: N ≥ 1 is the Nth item of ``ids`` (sorted); nil
    /// for 0, a negative number or one past the end.
    func item(number: Int) -> String? {
        let all = ids
        guard number >= 1, number <= all.count else { return nil }
        return all[number - 1]
    }
}
