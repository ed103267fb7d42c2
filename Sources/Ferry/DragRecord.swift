import DBus
import FerryBus
import FerryModel

/// The most recent drag as the broker recorded it: who dragged what, the path it took with the
/// proposal at each point, and how it ended (for pictures and diagnostics).
///
/// D-Bus: the reply of `org.ferry.DragManager1.LastDrag`.
public struct DragRecord: Sendable, Hashable {
    /// One point of the drag's path: the begin, each move, the drop.
    public struct Step: Sendable, Hashable {
        /// The location, in desktop coordinates.
        public let location: Point
        /// What was under it: "" for nothing, a scene's persistent identifier, or "edge:left" /
        /// "edge:right" for an edge where a drop would open a scene.
        public let target: String
        /// The operation proposed there.
        public let operation: DropOperation

        /// Makes a step.
        public init(location: Point, target: String, operation: DropOperation) {
            self.location = location
            self.target = target
            self.operation = operation
        }
    }

    /// The drag's number.
    public let id: Int
    /// The source app (for an app-icon drag: the dragged app).
    public let sourceApp: String
    /// The source scene, nil for an app-icon drag.
    public let sourceSession: String?
    /// The dragged app of an app-icon drag.
    public let app: String?
    /// The drag's state as the broker names it (`dragging`, `ended`, …).
    public let state: String
    /// The final operation, once ended.
    public let operation: DropOperation?
    /// The scene that performed the drop.
    public let target: String?
    /// The scene an edge drop opened.
    public let newSession: String?
    /// Why the drag ended as cancel or forbidden.
    public let reason: String?
    /// The path, in order.
    public let steps: [Step]
    /// While the drag runs, its first item's preview that is set (what the screen shows under
    /// the pointer); nil for none and once the drag ended.
    public let preview: DragPreview?

    /// Makes a record.
    public init(id: Int, sourceApp: String, sourceSession: String? = nil, app: String? = nil, state: String,
                operation: DropOperation? = nil, target: String? = nil, newSession: String? = nil,
                reason: String? = nil, steps: [Step] = [], preview: DragPreview? = nil) {
        self.preview = preview
        self.id = id
        self.sourceApp = sourceApp
        self.sourceSession = sourceSession
        self.app = app
        self.state = state
        self.operation = operation
        self.target = target
        self.newSession = newSession
        self.reason = reason
        self.steps = steps
    }

    /// Decodes `LastDrag`'s dictionary; nil for the empty one (no drag yet).
    /// - Throws: `FerryError` `.bus` naming the malformed key.
    init?(dbus dictionary: [String: DBusValue]) throws(FerryError) {
        guard !dictionary.isEmpty else { return nil }
        func text(_ key: String) -> String? {
            guard case .string(let value)? = dictionary[key]?.unwrappingVariants, !value.isEmpty else { return nil }
            return value
        }
        guard case .uint32(let number)? = dictionary["id"]?.unwrappingVariants else {
            throw FerryError(.bus, "DragManager1.LastDrag answered a drag without an id (u)")
        }
        var operation: DropOperation?
        if let name = text("operation") {
            guard let known = DropOperation(name: name) else {
                throw FerryError(.bus, "DragManager1.LastDrag answered an unknown operation \"\(name)\"")
            }
            operation = known
        }
        var steps: [Step] = []
        if let points = dictionary["points"]?.unwrappingVariants {
            guard case .array(_, let elements) = points else {
                throw FerryError(.bus, "DragManager1.LastDrag answered points that are not a(ddss)")
            }
            for (index, element) in elements.enumerated() {
                guard case .structure(let fields) = element.unwrappingVariants, fields.count == 4,
                      case .double(let x) = fields[0], case .double(let y) = fields[1],
                      case .string(let target) = fields[2], case .string(let name) = fields[3],
                      let proposed = DropOperation(name: name) else {
                    throw FerryError(.bus, "DragManager1.LastDrag answered a malformed point points[\(index)]")
                }
                steps.append(Step(location: Point(x: x, y: y), target: target, operation: proposed))
            }
        }
        var preview: DragPreview?
        if let value = dictionary["preview"] {
            do {
                preview = try DragPreview.list([try WireReader(dbus: value, path: "preview")]).first ?? nil
            } catch {
                throw FerryError(.bus, "DragManager1.LastDrag answered \(error)")
            }
        }
        self.init(id: Int(number), sourceApp: text("sourceApp") ?? "", sourceSession: text("sourceSession"),
                  app: text("app"), state: text("state") ?? "", operation: operation, target: text("target"),
                  newSession: text("newSession"), reason: text("reason"), steps: steps, preview: preview)
    }
}
