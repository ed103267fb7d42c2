import Ferry
import FerryModel

/// The lines `ferry drag` prints: one when the drag begins, one per move, one for the drop —
/// as text, or as JSON objects one per line (`--json`).
struct DragReport {
    var json: Bool
    /// The drag's number.
    var drag: String
    /// Persistent identifier → app id, to name the scenes the drag passes over.
    var apps: [String: String]

    init(json: Bool, drag: String, sessions: [SceneCommand.Session]) {
        self.json = json
        self.drag = drag
        apps = Dictionary(sessions.map { ($0.persistentIdentifier, $0.app) }, uniquingKeysWith: { first, _ in first })
    }

    /// `drag 7: org.ferry.notes/1A2B3C4D at 528,368` (an icon drag: `drag 7: the icon of APP at X,Y`).
    func began(source: SceneCommand.Session?, app: String, at location: Point, pasteboard: String) throws -> String {
        if json {
            return try jsonLine(Event(event: "begin", drag: drag, source: source?.persistentIdentifier, location: PointJSON(location),
                                      pasteboard: pasteboard, app: app))
        }
        let what = source.map { scene($0.persistentIdentifier, app: $0.app) } ?? "the icon of \(app)"
        return "drag \(drag): \(what) at \(Self.format(location))".printableLine() + "\n"
    }

    /// `  800,500  org.ferry.gallery/5E6F7A8B  copy`, `  1908,540  right edge  copy`, `  10,10  -  cancel`.
    func moved(step: Int, to location: Point, _ move: DragMove) throws -> String {
        if json {
            return try jsonLine(Event(event: "move", drag: drag, step: step, location: PointJSON(location), target: move.target,
                                      app: move.target.flatMap { apps[$0] }, operation: move.proposal.operation.name,
                                      precise: move.proposal.isPrecise, edge: move.edge?.rawValue))
        }
        let over = if let edge = move.edge { "\(edge.rawValue) edge" } else { move.target.map { scene($0) } ?? "-" }
        return "  \(Self.format(location))  \(over)  \(move.proposal)".printableLine() + "\n"
    }

    /// The outcome: `dropped: copy to APP/SESSION, read TYPES — MESSAGE`, `dropped: opened
    /// APP/SESSION at the right edge`, `dropped: cancel — REASON`.
    func dropped(_ outcome: DragOutcome, edge: ScenePlacement?) throws -> String {
        let targetApp = outcome.target.flatMap { apps[$0] }
        if json {
            return try jsonLine(Event(event: "drop", drag: drag, target: outcome.target, app: outcome.app ?? targetApp,
                                      operation: outcome.operation.name, message: outcome.message, types: outcome.types,
                                      newSession: outcome.newSession, reason: outcome.reason))
        }
        var line = "dropped: "
        if let opened = outcome.newSession {
            line += "opened \(scene(opened, app: outcome.app))" + (edge.map { " at the \($0.rawValue) edge" } ?? "")
        } else if outcome.operation.transfersItems {
            line += outcome.operation.name + (outcome.target.map { " to \(scene($0))" } ?? "")
            if !outcome.types.isEmpty { line += ", read \(outcome.types.map(withReadableTypes).joined(separator: ", "))" }
            if let message = outcome.message { line += " — \(message)" }
        } else {
            line += outcome.operation.name + (outcome.target.map { " at \(scene($0))" } ?? "")
            if let reason = outcome.reason { line += " — \(reason)" }
        }
        return line.printableLine() + "\n"
    }

    /// `APP/SHORT-ID` (the first 8 characters, as `ferry desktop` shows them); the id alone when
    /// the app is not known.
    private func scene(_ identifier: String, app: String? = nil) -> String {
        let short = String(identifier.prefix(8))
        guard let app = app ?? apps[identifier] else { return short }
        return "\(app)/\(short)"
    }

    /// `800,500`, `10.5,-3`.
    static func format(_ point: Point) -> String { "\(formatNumber(point.x)),\(formatNumber(point.y))" }

    struct PointJSON: Encodable, Equatable {
        var x: Double
        var y: Double
        init(_ point: Point) {
            x = point.x
            y = point.y
        }
    }

    /// One JSON line: the keys its event has, absent values as null.
    struct Event: Encodable {
        var event: String
        var drag: String
        var step: Int?
        var source: String?
        var location: PointJSON?
        var pasteboard: String?
        var target: String?
        var app: String?
        var operation: String?
        var precise: Bool?
        var edge: String?
        var message: String?
        var types: [String]?
        var newSession: String?
        var reason: String?

        init(event: String, drag: String, step: Int? = nil, source: String? = nil, location: PointJSON? = nil,
             pasteboard: String? = nil, target: String? = nil, app: String? = nil, operation: String? = nil,
             precise: Bool? = nil, edge: String? = nil, message: String? = nil, types: [String]? = nil,
             newSession: String? = nil, reason: String? = nil) {
            self.event = event
            self.drag = drag
            self.step = step
            self.source = source
            self.location = location
            self.pasteboard = pasteboard
            self.target = target
            self.app = app
            self.operation = operation
            self.precise = precise
            self.edge = edge
            self.message = message
            self.types = types
            self.newSession = newSession
            self.reason = reason
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(event, forKey: .event)
            try c.encode(drag, forKey: .drag)
            switch event {
            case "begin":
                try c.encode(source, forKey: .source)
                try c.encode(app, forKey: .app)
                try c.encode(location, forKey: .location)
                try c.encode(pasteboard, forKey: .pasteboard)
            case "move":
                try c.encode(step, forKey: .step)
                try c.encode(location, forKey: .location)
                try c.encode(target, forKey: .target)
                try c.encode(app, forKey: .app)
                try c.encode(operation, forKey: .operation)
                try c.encode(precise, forKey: .precise)
                try c.encode(edge, forKey: .edge)
            default:
                try c.encode(operation, forKey: .operation)
                try c.encode(target, forKey: .target)
                try c.encode(app, forKey: .app)
                try c.encode(message, forKey: .message)
                try c.encode(types ?? [], forKey: .types)
                try c.encode(newSession, forKey: .newSession)
                try c.encode(reason, forKey: .reason)
            }
        }

        enum CodingKeys: String, CodingKey {
            case event, drag, step, source, location, pasteboard, target, app, operation, precise, edge, message, types,
                 newSession, reason
        }
    }
}
