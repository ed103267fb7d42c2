import FerryModel
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// A demo app's content, shared by all its scenes: the notes (`<state>/notes/<id>.txt`) or the
/// photos (`<state>/photos/<id>`, the id being the file name, with their renditions beside them:
/// ``renditions(of:)``), copied from the app folder's `Content/` on first run. Writes are
/// serialized; each one replaces or appends to one file.
final class ContentLibrary: Sendable {
    let kind: DemoKind
    /// `<state dir>/notes` or `<state dir>/photos`.
    let directory: URL
    /// Serializes writes to the library (and its attachments).
    let lock = Mutex(())

    /// Opens the library in `stateDirectory`, copying the app's `Content/` items (and Gallery's
    /// `Content/Renditions/`) there when the library folder does not exist yet (the first run).
    /// - Throws: `DemoFailure` when the folders cannot be made or the content cannot be copied.
    init(kind: DemoKind, stateDirectory: URL, appFolder: URL) throws(DemoFailure) {
        self.kind = kind
        directory = stateDirectory.appendingPathComponent(kind.contentFolder, isDirectory: true)
        let files = FileManager.default
        guard !files.fileExists(atPath: directory.path) else { return }
        // Copy into a temporary folder first and rename it: a run killed half-way copies again.
        let staging = stateDirectory.appendingPathComponent(".\(kind.contentFolder)-\(getpid())", isDirectory: true)
        let renditionsStaging = stateDirectory.appendingPathComponent(".renditions-\(getpid())", isDirectory: true)
        do {
            try? files.removeItem(at: staging)
            try files.createDirectory(at: staging, withIntermediateDirectories: true)
            let source = appFolder.appendingPathComponent("Content", isDirectory: true)
            let names = (try? files.contentsOfDirectory(atPath: source.path)) ?? []
            var copied: [String] = []
            for name in names.sorted() {
                guard let id = Self.id(forFileNamed: name, kind: kind) else { continue }
                try files.copyItem(at: source.appendingPathComponent(name), to: staging.appendingPathComponent(Self.fileName(id, kind)))
                copied.append(id)
            }
            if kind == .gallery {
                // The renditions go in place first: the photos folder is what says the copy is done.
                try? files.removeItem(at: renditionsStaging)
                try Self.stageRenditions(from: source, photos: copied, into: renditionsStaging)
                try? files.removeItem(at: renditionsDirectory)
                try files.moveItem(at: renditionsStaging, to: renditionsDirectory)
            }
            try files.moveItem(at: staging, to: directory)
        } catch {
            try? files.removeItem(at: staging)
            try? files.removeItem(at: renditionsStaging)
            throw DemoFailure(.failure, "cannot set up \(directory.path): \(error)")
        }
    }

    /// Whether `id` can name an item: 1–128 bytes of ASCII letters, digits, `.`, `-`, `_`, not
    /// starting with `.` (so it is always a plain file name inside the library).
    static func isValidID(_ id: String) -> Bool {
        let bytes = Array(id.utf8)
        return !bytes.isEmpty && bytes.count <= 128 && bytes[0] != UInt8(ascii: ".") && bytes.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2E || c == 0x2D || c == 0x5F
        }
    }

    /// The item id of a `Content/` file: a note's file stem (`groceries.txt` → `groceries`), a
    /// photo's file name; nil for files the app does not show.
    static func id(forFileNamed name: String, kind: DemoKind) -> String? {
        switch kind {
        case .notes:
            guard name.hasSuffix(".txt") else { return nil }
            let stem = String(name.dropLast(4))
            return isValidID(stem) ? stem : nil
        case .gallery:
            return isValidID(name) && imageType(ofFileNamed: name) != nil ? name : nil
        }
    }

    static func fileName(_ id: String, _ kind: DemoKind) -> String {
        kind == .notes ? "\(id).txt" : id
    }

    /// The file holding item `id`.
    func url(of id: String) -> URL {
        directory.appendingPathComponent(Self.fileName(id, kind))
    }

    /// The item ids, sorted.
    var ids: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.compactMap { Self.id(forFileNamed: $0, kind: kind) }.sorted()
    }

    /// Whether item `id` exists.
    func contains(_ id: String) -> Bool {
        Self.isValidID(id) && FileManager.default.fileExists(atPath: url(of: id).path)
    }

    /// A note's text, nil when there is no such note or it is not UTF-8.
    func text(of id: String) -> String? {
        guard contains(id), let data = try? Data(contentsOf: url(of: id)) else { return nil }
        return String(validating: data, as: UTF8.self)
    }

    /// Appends `text` to note `id` (on a line of its own), creating the note when needed.
    /// - Returns: the note's new length in bytes.
    /// - Throws: `DemoFailure` for an id that is not a plain item name (``isValidID(_:)``) or
    ///   when the note cannot be written.
    func append(_ text: String, toNote id: String) throws(DemoFailure) -> Int {
        guard Self.isValidID(id) else { throw DemoFailure(.failure, "'\(id)' cannot name a note") }
        return try lock.withLock { _ throws(DemoFailure) in
            var body = (try? Data(contentsOf: url(of: id))) ?? Data()
            if let last = body.last, last != UInt8(ascii: "\n") { body.append(UInt8(ascii: "\n")) }
            body.append(contentsOf: Array(text.utf8))
            if !text.hasSuffix("\n") { body.append(UInt8(ascii: "\n")) }
            try write(body, to: id)
            return body.count
        }
    }

    /// Adds a new item holding `data`, named after `suggestedName` (made safe) or `pasted-N`, with
    /// `fileExtension` for photos; never replaces an existing item.
    /// - Returns: the new item's id.
    func add(_ data: Data, suggestedName: String?, fileExtension: String?) throws(DemoFailure) -> String {
        try lock.withLock { _ throws(DemoFailure) in
            let base = suggestedName.map(Self.safeName).flatMap { $0.isEmpty ? nil : $0 } ?? "pasted"
            let suffix = kind == .gallery ? "." + (fileExtension.map(Self.safeName).flatMap { $0.isEmpty ? nil : $0 } ?? "img") : ""
            var candidate = base + suffix
            var n = 1
            while !Self.isValidID(candidate) || FileManager.default.fileExists(atPath: url(of: candidate).path) {
                n += 1
                candidate = "\(base)-\(n)\(suffix)"
                if n > 10_000 { throw DemoFailure(.failure, "no free name for a new item in \(directory.path)") }
            }
            // A pasted or dropped photo has no renditions: none left by an earlier photo of its name.
            if kind == .gallery { try? FileManager.default.removeItem(at: renditionFolder(of: candidate)) }
            try write(data, to: candidate)
            return candidate
        }
    }

    /// `name` with every character outside `[A-Za-z0-9_-]` made `-`, without leading dots, at
    /// most 64 characters.
    static func safeName(_ name: String) -> String {
        let mapped = name.unicodeScalars.map { c -> Character in
            c.isASCII && (c.properties.isAlphabetic || ("0"..."9").contains(c) || c == "_" || c == "-") ? Character(c) : "-"
        }
        return String(String(mapped).prefix(64))
    }

    /// Writes `data` as item `id`, atomically (a temporary file renamed over it).
    func write(_ data: Data, to id: String) throws(DemoFailure) {
        do {
            try data.write(to: url(of: id), options: .atomic)
        } catch {
            throw DemoFailure(.failure, "cannot write \(url(of: id).path): \(error)")
        }
    }
}
