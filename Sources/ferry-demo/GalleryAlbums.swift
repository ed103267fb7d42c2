import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Gallery's albums: `<state dir>/albums/<album>.txt`, the album's photo ids one a line in the
/// order they were added, each at most once. An album holds ids, not pictures: its photos are
/// the library's (`<state dir>/photos/`). Gallery's "Add to Album" activity adds to ``shared``.
final class GalleryAlbums: Sendable {
    /// `<state dir>/albums`.
    let directory: URL
    /// Serializes reading-then-writing an album file.
    private let lock = Mutex(())

    /// The album that "Add to Album" fills.
    static let shared = "Shared"

    /// The albums of a state directory (the folder is made on the first write).
    init(stateDirectory: URL) {
        directory = stateDirectory.appendingPathComponent("albums", isDirectory: true)
    }

    /// The file of an album.
    func url(of album: String) -> URL {
        directory.appendingPathComponent("\(album).txt")
    }

    /// An album's photo ids, in the order added; empty for a bad name, an album that does not
    /// exist or lines that cannot name a photo.
    func photos(in album: String) -> [String] {
        guard ContentLibrary.isValidID(album), let data = try? Data(contentsOf: url(of: album)),
              let text = String(validating: data, as: UTF8.self) else { return [] }
        var seen: Set<String> = []
        return text.split(separator: "\n").map(String.init).filter { ContentLibrary.isValidID($0) && seen.insert($0).inserted }
    }

    /// The album names, sorted.
    var names: [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return files.filter { $0.hasSuffix(".txt") }.map { String($0.dropLast(4)) }.filter(ContentLibrary.isValidID).sorted()
    }

    /// What ``add(_:to:)`` did.
    struct Addition: Sendable, Equatable {
        /// The album's photo count after the call.
        var count: Int
        /// Whether the photo was added (false: the album had it already).
        var added: Bool
    }

    /// Adds photo `photo` at the end of `album` (made when needed) unless it is there already;
    /// the file is replaced atomically.
    /// - Throws: `DemoFailure` for an album name or photo id that is not a plain item name
    ///   (``ContentLibrary/isValidID(_:)``), or when the file cannot be written.
    func add(_ photo: String, to album: String) throws(DemoFailure) -> Addition {
        guard ContentLibrary.isValidID(album) else { throw DemoFailure(.failure, "'\(album)' cannot name an album") }
        guard ContentLibrary.isValidID(photo) else { throw DemoFailure(.failure, "'\(photo)' cannot name a photo") }
        return try lock.withLock { _ throws(DemoFailure) -> Addition in
            var photos = self.photos(in: album)
            guard !photos.contains(photo) else { return Addition(count: photos.count, added: false) }
            photos.append(photo)
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                try Data(photos.map { $0 + "\n" }.joined().utf8).write(to: url(of: album), options: .atomic)
            } catch {
                throw DemoFailure(.failure, "cannot write the album \(url(of: album).path): \(error)")
            }
            return Addition(count: photos.count, added: true)
        }
    }
}
