import FerryModel
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Notes' attachments and the library operations drags need: an image dropped (or pasted) into a
/// note is kept as `<state dir>/attachments/<note id>/<file name>` and the note gets the line
/// `[image: <file name>]`; deleting a note deletes its attachments; `item N` of a drag names the
/// Nth item of the library.
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

    /// Copies the attachments of note `source` to note `note` under the same names (a name the
    /// target has already keeps the target's file), so a copied note's `[image: …]` lines still
    /// name files.
    /// - Returns: the names copied.
    @discardableResult
    func copyAttachments(from source: String, to note: String) throws(DemoFailure) -> [String] {
        guard source != note, Self.isValidID(note) else { return [] }
        let names = attachments(of: source)
        guard !names.isEmpty else { return [] }
        let folder = attachmentFolder(of: note)
        return try lock.withLock { _ throws(DemoFailure) -> [String] in
            var copied: [String] = []
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                for name in names where !FileManager.default.fileExists(atPath: folder.appendingPathComponent(name).path) {
                    try FileManager.default.copyItem(at: attachmentFolder(of: source).appendingPathComponent(name),
                                                     to: folder.appendingPathComponent(name))
                    copied.append(name)
                }
            } catch {
                throw DemoFailure(.failure, "cannot copy the attachments of \(source) to \(note): \(error)")
            }
            return copied
        }
    }

    /// Deletes item `id`: a note with its attachments, or a photo.
    /// - Returns: whether it existed.
    /// - Throws: `DemoFailure` when it exists but cannot be removed.
    @discardableResult
    func delete(_ id: String) throws(DemoFailure) -> Bool {
        guard contains(id) else { return false }
        return try lock.withLock { _ throws(DemoFailure) -> Bool in
            do {
                try FileManager.default.removeItem(at: url(of: id))
                if kind == .notes, FileManager.default.fileExists(atPath: attachmentFolder(of: id).path) {
                    try FileManager.default.removeItem(at: attachmentFolder(of: id))
                }
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
