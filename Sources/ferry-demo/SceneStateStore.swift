import FerryModel
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a demo app remembers about one scene, apart from its restoration activity: the
/// configuration it showed and the note or photo in it (seed 001's manual state restoration,
/// keyed by the session's persistent identifier).
struct SceneState: Sendable, Hashable {
    /// The session's persistent identifier.
    var persistentIdentifier: String
    /// `Default`, `Editor` or `Viewer`.
    var configuration: String
    /// The note or photo shown (Editor, Viewer) or selected (Default).
    var item: String?

    /// The property list written to the scene's file.
    var propertyList: [String: PropertyListValue] {
        var plist: [String: PropertyListValue] = [
            "persistentIdentifier": .string(persistentIdentifier),
            "configuration": .string(configuration),
        ]
        if let item { plist["item"] = .string(item) }
        return plist
    }

    /// Reads a scene file's property list; nil when a required key is missing or malformed.
    init?(propertyList plist: [String: PropertyListValue]) {
        guard let id = plist["persistentIdentifier"]?.stringValue, let configuration = plist["configuration"]?.stringValue
        else { return nil }
        self.persistentIdentifier = id
        self.configuration = configuration
        self.item = plist["item"]?.stringValue.flatMap { ContentLibrary.isValidID($0) ? $0 : nil }
    }

    init(persistentIdentifier: String, configuration: String, item: String?) {
        self.persistentIdentifier = persistentIdentifier
        self.configuration = configuration
        self.item = item
    }
}

/// The per-scene state files: `<state dir>/scenes/<persistent id>.plist`, one per scene, never one
/// shared file (seed 001's case study), each written atomically and deleted when its session is
/// discarded.
final class SceneStateStore: Sendable {
    /// `<state dir>/scenes`.
    let directory: URL
    /// What was written and discarded; file writes and deletions happen under this lock, so a
    /// save never resurrects the file of a session discarded meanwhile.
    private let book = Mutex(Book())

    private struct Book {
        /// The state last written per scene, so an unchanged state is not written again.
        var written: [String: SceneState] = [:]
        /// Sessions discarded while this process runs.
        var discarded: Set<String> = []
    }

    /// Makes `<state dir>/scenes` when needed.
    /// - Throws: `DemoFailure` when it cannot.
    init(stateDirectory: URL) throws(DemoFailure) {
        directory = stateDirectory.appendingPathComponent("scenes", isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw DemoFailure(.failure, "cannot make \(directory.path): \(error)")
        }
    }

    /// The file name for a persistent identifier: the identifier itself when it is a safe file
    /// name (the broker's UUIDs are), else its object-path escaping (`_xx` per unsafe byte).
    static func fileName(for persistentIdentifier: String) -> String {
        let name = ContentLibrary.isValidID(persistentIdentifier) && !persistentIdentifier.hasPrefix("_") ? persistentIdentifier
            : "_" + ObjectPathElement.escape(persistentIdentifier)
        return name + ".plist"
    }

    /// The file of a scene.
    func url(of persistentIdentifier: String) -> URL {
        directory.appendingPathComponent(Self.fileName(for: persistentIdentifier))
    }

    /// The saved state of a scene, nil when there is none (or the file is unreadable).
    func state(of persistentIdentifier: String) -> SceneState? {
        guard let data = try? Data(contentsOf: url(of: persistentIdentifier)),
              case .dictionary(let plist)? = try? PropertyListValue(propertyListData: data),
              let state = SceneState(propertyList: plist), state.persistentIdentifier == persistentIdentifier
        else { return nil }
        book.withLock { $0.written[persistentIdentifier] = state }
        return state
    }

    /// Writes a scene's state atomically (a temporary file renamed over the old one) unless it
    /// is what was last written.
    /// - Returns: whether the file was written.
    @discardableResult
    func save(_ state: SceneState) throws(DemoFailure) -> Bool {
        let id = state.persistentIdentifier
        let url = url(of: id)
        return try book.withLock { book throws(DemoFailure) -> Bool in
            guard !book.discarded.contains(id), book.written[id] != state else { return false }
            do {
                let data = try PropertyListValue.dictionary(state.propertyList).propertyListData(format: .xml)
                try data.write(to: url, options: .atomic)
            } catch {
                throw DemoFailure(.failure, "cannot save the state of scene \(id) in \(url.path): \(error)")
            }
            book.written[id] = state
            return true
        }
    }

    /// Deletes the file of a discarded session and ignores later saves for it (a scene delegate
    /// still finishing must not write it back).
    /// - Returns: whether there was a file.
    @discardableResult
    func discard(_ persistentIdentifier: String) -> Bool {
        let path = url(of: persistentIdentifier).path
        return book.withLock { book in
            book.discarded.insert(persistentIdentifier)
            book.written[persistentIdentifier] = nil
            guard FileManager.default.fileExists(atPath: path) else { return false }
            return (try? FileManager.default.removeItem(atPath: path)) != nil
        }
    }

    /// The persistent identifiers that have a file, sorted.
    var savedIdentifiers: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".plist") && !$0.hasPrefix(".") }.compactMap { name in
            guard let data = try? Data(contentsOf: directory.appendingPathComponent(name)),
                  case .dictionary(let plist)? = try? PropertyListValue(propertyListData: data) else { return nil }
            return SceneState(propertyList: plist)?.persistentIdentifier
        }.sorted()
    }
}
