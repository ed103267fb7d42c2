import Ferry
import FerryModel
import FerryTestSupport
import Foundation
import Testing

/// A scene on the broker's desktop, as `ferry scenes --json` reports it.
struct DesktopScene: Sendable {
    var app: String
    var persistentIdentifier: String
    var configuration: String?
    var frame: Rect
    var screen: Int
    var stackIndex: Int
}

/// Notes and Gallery running, each with its first scene settled: Notes' list and Gallery's grid.
struct NotesAndGallery {
    let notes: DemoProcess
    let gallery: DemoProcess
    let list: String
    let grid: String

    /// Stops both apps.
    func stop() {
        notes.process.stop()
        gallery.process.stop()
    }
}

extension DemoHarness {
    /// Starts Notes, then Gallery (with `galleryArguments`), and waits for each first scene.
    func startNotesAndGallery(galleryArguments: [String] = []) async throws -> NotesAndGallery {
        let notes = try await startDemo()
        let gallery: DemoProcess
        do {
            gallery = try await startDemo("Gallery", galleryArguments)
        } catch {
            notes.process.stop()
            throw error
        }
        do {
            let list = try await notes.settled().session
            let grid = try await gallery.settled().session
            return NotesAndGallery(notes: notes, gallery: gallery, list: list, grid: grid)
        } catch {
            notes.process.stop()
            gallery.process.stop()
            throw error
        }
    }

    /// The default desktop: one 1920×1080 screen.
    static let screen = Rect(x: 0, y: 0, width: 1920, height: 1080)

    /// A client on this bus that scripts drags (the initiator, as `ferry drag` is).
    func dragClient() async throws -> FerryClient {
        try await FerryClient.connect(address: bus.address)
    }

    /// Every scene with its frame, front to back per screen (`ferry scenes --json`).
    func desktop() async throws -> [DesktopScene] {
        let result = try await ChildProcess.run(try BuiltProducts.executable("ferry"), ["scenes", "--json"],
                                                environment: bus.environment(), timeout: .seconds(20))
        guard result.succeeded,
              let report = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
              let scenes = report["scenes"] as? [[String: Any]]
        else { throw DemoTestError("ferry scenes --json failed: \(result.stderr)\(result.stdout)") }
        return scenes.compactMap { entry in
            guard let app = entry["app"] as? String, let id = entry["persistentIdentifier"] as? String,
                  let frame = entry["frame"] as? [String: Any],
                  let x = frame["x"] as? Double, let y = frame["y"] as? Double,
                  let width = frame["width"] as? Double, let height = frame["height"] as? Double
            else { return nil }
            return DesktopScene(app: app, persistentIdentifier: id, configuration: entry["configuration"] as? String,
                                frame: Rect(x: x, y: y, width: width, height: height),
                                screen: entry["screen"] as? Int ?? 0, stackIndex: entry["stackIndex"] as? Int ?? 0)
        }
    }

    /// A point inside scene `session` that no scene in front of it covers and that is outside the
    /// screen's edge zones: where a drag must go to be over that scene.
    func visiblePoint(of session: String) async throws -> Point {
        let scenes = try await desktop()
        guard let target = scenes.first(where: { $0.persistentIdentifier == session }) else {
            throw DemoTestError("no scene \(session) on the desktop: \(scenes.map(\.persistentIdentifier))")
        }
        let front = scenes.filter { $0.screen == target.screen && $0.stackIndex < target.stackIndex }
        let f = target.frame
        // Cascaded scenes leave a strip a few dozen pixels wide: try points near the corners too.
        let fractions = [0.01, 0.02] + Array(stride(from: 0.1, through: 0.9, by: 0.1)) + [0.98, 0.99]
        for row in fractions {
            for column in fractions {
                let p = Point(x: f.origin.x + f.size.width * column, y: f.origin.y + f.size.height * row)
                guard p.x > Self.screen.origin.x + 40, p.x < Self.screen.origin.x + Self.screen.size.width - 40 else { continue }
                if !front.contains(where: { Self.contains($0.frame, p) }) { return p }
            }
        }
        throw DemoTestError("scene \(session) at \(f) is covered by \(front.map(\.frame))")
    }

    /// A point in the right (or left) edge zone of the screen, below every scene's title.
    func edgePoint(right: Bool = true) -> Point {
        Point(x: right ? Self.screen.size.width - 4 : 4, y: Self.screen.size.height / 2)
    }

    static func contains(_ rect: Rect, _ p: Point) -> Bool {
        p.x >= rect.origin.x && p.x < rect.origin.x + rect.size.width && p.y >= rect.origin.y && p.y < rect.origin.y + rect.size.height
    }

    /// The part of `Scenes1.ListSessions` that is session `id`'s dictionary (from its
    /// persistentIdentifier to the next session's), as gdbus prints it.
    func sessionText(_ app: String, _ id: String) async throws -> String {
        let listed = try await sessions(of: app)
        let sessions = listed.components(separatedBy: "{'persistentIdentifier'")
        if let own = sessions.first(where: { $0.hasPrefix(": <'\(id)'>") }) { return own }
        // Keys may come in another order: fall back to the entry that names the id anywhere.
        let entries = listed.components(separatedBy: "}, {")
        return entries.first { $0.contains("'\(id)'") } ?? ""
    }
}

extension DemoProcess {
    /// Every event named `name` so far that satisfies `match`.
    func all(_ name: String, where match: (DemoEventLine) -> Bool = { _ in true }) -> [DemoEventLine] {
        events.filter { $0.name == name && match($0) }
    }
}

extension DemoHarness {
    /// Runs `body` with a drag client on this bus, closing it afterwards.
    func withDragClient<T>(_ body: (FerryClient) async throws -> T) async throws -> T {
        let client = try await dragClient()
        do {
            let result = try await body(client)
            await client.close()
            return result
        } catch {
            await client.close()
            throw error
        }
    }

    /// The text of a note in Notes' state directory, nil when it does not exist.
    func note(_ id: String) -> String? {
        try? String(contentsOf: stateDirectory("Notes").appendingPathComponent("notes/\(id).txt"), encoding: .utf8)
    }

    /// Gallery's photo file names, sorted.
    func photos() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: stateDirectory("Gallery").appendingPathComponent("photos").path).sorted()
    }
}
