import Ferry
import FerryModel
import FerryTerminal

/// One scripted drag as `ferry drag` runs it: resolve the scenes, plan the path, begin, move
/// step by step printing each proposal, drop, print the outcome.
struct DragRun {
    let client: FerryClient
    let json: Bool

    /// Moves per segment of the path (begin → each via point → destination).
    static let stepsPerSegment = 4

    /// The broker's scene calls on the same connection as the drag.
    var broker: SceneCommand.Broker { SceneCommand.Broker(client: client) }

    /// A drag from the scene `from` names to `destination`, through `via`.
    /// - Returns: how the drop ended.
    /// - Throws: `CLIFailure` for an unknown or unconnected scene or screen; `FerryError` from the
    ///   broker (nothing to drag, the source app's timeout, …).
    func drag(from: SceneTarget, to destination: DragCommand.Destination, screen: Int?, via: [Point],
              options: DragOptions) async throws -> DragOutcome {
        let sessions = try await broker.sessions()
        let source = try Self.scene(try await broker.resolve(from), among: sessions)
        let start = try Self.visiblePoint(of: source, among: sessions)
        let end: Point
        switch destination {
        case .scene(let to):
            let target = try Self.scene(try await broker.resolve(to), among: sessions,
                                        avoiding: source.persistentIdentifier)
            end = try Self.visiblePoint(of: target, among: sessions)
        case .point(let point):
            end = point
        case .edge(let placement):
            end = try await edgePoint(placement, screen: screen ?? source.screen)
        }
        var options = options
        options.location = start
        let session = try await client.beginDrag(fromScene: source.persistentIdentifier, options: options)
        let report = DragReport(json: json, drag: session.id, sessions: sessions)
        do {
            try writeOut(try report.began(source: source, app: source.app, at: start, pasteboard: session.pasteboardName))
        } catch {
            try? await session.cancel()
            throw error
        }
        return try await perform(session, along: Self.path(from: start, via: via, to: end), report: report)
    }

    /// A drag of `app`'s icon from the centre of `screen` to its `edge`.
    func iconDrag(app: String, edge: ScenePlacement, screen: Int, via: [Point]) async throws -> DragOutcome {
        let app = try await broker.appID(app)
        let frame = try await screenFrame(screen)
        let start = Point(x: frame.midX, y: frame.midY)
        let end = try await edgePoint(edge, screen: screen)
        let sessions = try await broker.sessions()
        let session = try await client.beginAppIconDrag(app: app, at: start)
        let report = DragReport(json: json, drag: session.id, sessions: sessions)
        do {
            try writeOut(try report.began(source: nil, app: app, at: start, pasteboard: session.pasteboardName))
        } catch {
            try? await session.cancel()
            throw error
        }
        return try await perform(session, along: Self.path(from: start, via: via, to: end), report: report)
    }

    /// Moves along `path`, printing each proposal, then drops and prints the outcome. Any
    /// failure on the way cancels the drag first.
    private func perform(_ session: DragSession, along path: [Point], report: DragReport) async throws -> DragOutcome {
        var lastEdge: ScenePlacement?
        do {
            for (index, point) in path.enumerated() {
                let move = try await session.move(to: point)
                lastEdge = move.edge
                try writeOut(try report.moved(step: index + 1, to: point, move))
            }
            let outcome = try await session.drop()
            try writeOut(try report.dropped(outcome, edge: lastEdge))
            return outcome
        } catch let error as FerryError where error.code == .notFound {
            // The drag is gone: the broker ended it (its source app went away, or it idled 60 s).
            let record = try? await client.lastDrag()
            let reason = record.flatMap { $0.id == Int(session.id) ? $0.reason : nil }
            throw CLIFailure(.unavailable, "drag \(session.id) ended before the drop: " + (reason ?? "its source app went away"))
        } catch {
            try? await session.cancel()
            throw error
        }
    }

    /// The points the drag moves through after it begins at `start`: each segment of
    /// start → via… → end cut into ``stepsPerSegment`` equal steps (rounded to whole points),
    /// ending exactly on its end.
    static func path(from start: Point, via: [Point], to end: Point) -> [Point] {
        let corners = [start] + via + [end]
        var points: [Point] = []
        for (a, b) in zip(corners, corners.dropFirst()) {
            for step in 1...stepsPerSegment {
                if step == stepsPerSegment {
                    points.append(b)
                } else {
                    let t = Double(step) / Double(stepsPerSegment)
                    // Whole points in between: lines that read well; the ends stay exact.
                    points.append(Point(x: (a.x + (b.x - a.x) * t).rounded(), y: (a.y + (b.y - a.y) * t).rounded()))
                }
            }
        }
        return points
    }

    /// The scene `APP[/SESSION]` names: that session (an identifier or a unique prefix among the
    /// app's), or the app's front-most connected scene — the next one when that is `avoiding`
    /// (a drag between two scenes of one app).
    /// - Throws: `CLIFailure`: `.notFound` for an app with no scenes or an unknown session,
    ///   `.usage` for a short or ambiguous prefix, `.unavailable` for a scene that is not connected.
    static func scene(_ argument: SceneTarget, among sessions: [SceneCommand.Session],
                      avoiding: String? = nil) throws -> SceneCommand.Session {
        let own = sessions.filter { $0.app == argument.app }
        guard !own.isEmpty else {
            throw CLIFailure(.notFound, "no scene of '\(argument.app)' (ferry scenes lists them)")
        }
        if let session = argument.session {
            let found = try SceneCommand.resolve(session, among: own)
            guard found.state != .unattached else {
                throw CLIFailure(.unavailable, "the scene \(argument.app)/\(found.persistentIdentifier.prefix(8)) is not connected: "
                                 + "\(argument.app) is not running")
            }
            return found
        }
        let connected = own.filter { $0.state != .unattached }
        guard let first = connected.first else {
            throw CLIFailure(.unavailable, "\(argument.app) has no connected scene: it is not running")
        }
        return connected.first { $0.persistentIdentifier != avoiding } ?? first
    }

    /// The centre of a scene's frame.
    static func centre(of session: SceneCommand.Session) throws -> Point {
        guard let frame = session.frame else {
            throw CLIFailure(.failure, "the broker reports no frame for the scene \(session.app)/\(session.persistentIdentifier.prefix(8))")
        }
        return Point(x: frame.midX, y: frame.midY)
    }

    /// Where to drop on `scene` so that it, not a scene in front of it, is under the drag: its
    /// centre when nothing connected covers that, else the uncovered point of a 16 × 16 grid
    /// over its frame nearest the centre.
    /// - Throws: `CLIFailure` `.unavailable` when scenes in front cover it everywhere: a drag can
    ///   neither start from nor land on it (the user brings it to the front first).
    static func visiblePoint(of scene: SceneCommand.Session, among sessions: [SceneCommand.Session]) throws -> Point {
        let centre = try centre(of: scene)
        guard let frame = scene.frame else { return centre }
        let inFront = sessions.compactMap { other -> Rect? in
            guard other.persistentIdentifier != scene.persistentIdentifier, other.screen == scene.screen,
                  other.stackIndex < scene.stackIndex, other.state != .unattached else { return nil }
            return other.frame
        }
        let visible = { (point: Point) in !inFront.contains { $0.contains(point) } }
        if visible(centre) { return centre }
        let cells = 16.0
        var candidates: [Point] = []
        for row in 0..<Int(cells) {
            for column in 0..<Int(cells) {
                candidates.append(Point(x: (frame.minX + frame.size.width * (Double(column) + 0.5) / cells).rounded(.down),
                                        y: (frame.minY + frame.size.height * (Double(row) + 0.5) / cells).rounded(.down)))
            }
        }
        let distance = { (point: Point) in (point.x - centre.x) * (point.x - centre.x) + (point.y - centre.y) * (point.y - centre.y) }
        guard let point = candidates.filter(visible).min(by: { distance($0) < distance($1) }) else {
            throw CLIFailure(.unavailable, "the scene \(scene.app)/\(scene.persistentIdentifier.prefix(8)) is covered by scenes in "
                             + "front of it: bring it to the front first (ferry scene activate \(scene.persistentIdentifier.prefix(8)))")
        }
        return point
    }

    /// The middle of `placement`'s edge zone on `screen`.
    /// - Throws: `CLIFailure` `.notFound` for no such screen, `.failure` when there are no edge zones.
    func edgePoint(_ placement: ScenePlacement, screen: Int) async throws -> Point {
        let (screens, zone) = try await broker.desktop()
        guard let frame = screens.first(where: { $0.index == screen })?.frame else {
            throw CLIFailure(.notFound, "no screen \(screen) (ferry desktop lists them)")
        }
        return try Self.edgePoint(placement, of: frame, zone: zone, screen: screen)
    }

    /// The middle of `placement`'s edge zone (`zone` wide, at most half the screen) of `frame`.
    static func edgePoint(_ placement: ScenePlacement, of frame: Rect, zone: Double, screen: Int) throws -> Point {
        let width = min(max(zone.isFinite ? zone : 0, 0), frame.size.width / 2)
        guard width > 0 else { throw CLIFailure(.failure, "screen \(screen) has no edge zones (ferryd --edge-zone is 0)") }
        let x = placement == .left ? frame.minX + width / 2 : frame.maxX - width / 2
        return Point(x: x, y: frame.midY)
    }

    private func screenFrame(_ screen: Int) async throws -> Rect {
        let (screens, _) = try await broker.desktop()
        guard let frame = screens.first(where: { $0.index == screen })?.frame else {
            throw CLIFailure(.notFound, "no screen \(screen) (ferry desktop lists them)")
        }
        return frame
    }
}
