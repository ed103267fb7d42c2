#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import BrokerCore
import DBus
import FerryModel

/// One running drag as the broker keeps it (UIDragSession / UIDropSession): who started it,
/// where it is, the scene under it and that scene's last proposal, and every step so far.
///
/// A value the ``DragService`` actor owns; its object is `org.ferry.DragSession1` at
/// `/org/ferry/Drag/<number>`.
struct DragSession: Sendable {
    /// Where a drag is in its life.
    enum State: String, Sendable {
        /// Moving; Move, Drop and Cancel are accepted.
        case dragging
        /// Drop is running (the target performs, or an edge drop opens a scene).
        case performing
        /// Over: the object is gone.
        case ended
    }

    /// A scene the drag has entered, with what is needed to call its app.
    struct Entered: Sendable {
        var target: SceneService.DragTarget
        /// Whether it was told DropExited since it was last entered.
        var exited = false
    }

    /// What an edge drop would open for a set of items, once found.
    struct EdgeCheck: Sendable {
        enum State: Sendable {
            /// A Move is reading the first item's activity.
            case finding
            /// The plan, nil when no app can show the items.
            case found(DragService.EdgeDropPlan?)
        }

        var items: [UUID]
        var state: State
    }

    /// The number ferryd gave the drag (1, 2, … per run).
    let number: Int
    /// The drag's id on `Client1` ("7").
    var id: String { String(number) }
    /// Its object's path.
    let path: ObjectPath
    /// The drag pasteboard's name (`org.ferry.drag.<n>`).
    let pasteboard: String
    /// The drag pasteboard's object path.
    let pasteboardPath: ObjectPath
    /// The unique name of the connection that called BeginDrag.
    let initiator: String
    /// The source scene's app (the dragged app for an app-icon drag).
    let sourceApp: String
    /// The source app's registered connection, nil when it does not run (an app-icon drag).
    let sourceUniqueName: String?
    /// The source app's call queue, nil when it does not run.
    let sourceCallbacks: AppCallbacks?
    /// The source scene ("" for an app-icon drag).
    let sourceSession: String
    /// Whether this drags an app's icon (no items, no source scene).
    var isAppIcon: Bool { sourceSession.isEmpty }
    /// Whether a move is allowed (asked by the initiator, allowed by the source).
    let allowsMove: Bool
    /// Whether only the source app's scenes may be entered.
    let restrictedToApp: Bool

    var state = State.dragging
    /// The last location, desktop coordinates.
    var location: Point
    /// The scene under the drag now, entered (nil: none, or one the drag may not enter).
    var current: SceneService.DragTarget?
    /// The current scene's last proposal (as delivered), or cancel.
    var proposal = DropProposal.cancel
    /// The edge zone under the drag now (whether or not a drop there would open a scene).
    var edgeZone: ScenePlacement?
    /// The screen under the drag now.
    var screen = 0
    /// Whether a drop here would open a scene (Move's `edge`).
    var offersEdge = false
    /// The app an edge drop would open for the items, and the items it was found for (an
    /// append invalidates it).
    var edgeCheck: EdgeCheck?
    /// The drag pasteboard's items as last read, and when: DropUpdated reuses them for a moment
    /// (``DragService/itemsFreshness``) instead of reading them on every move.
    var items: (at: ContinuousClock.Instant, items: [StoredItem])?
    /// Every scene entered, by persistent identifier (DropEnded goes to each).
    var entered: [String: Entered] = [:]
    /// When the initiator last moved the drag (the 60 s idle timeout counts from here).
    var lastActivity = ContinuousClock.now
    /// Whether a Move, Drop or Cancel is being handled (they run one at a time).
    var busy = false

    /// Whether the drag may enter a scene of `appID` (a restricted drag: only its own app's).
    /// An app's icon enters no scene: it only opens one at an edge.
    func mayEnter(_ appID: String) -> Bool {
        !isAppIcon && (!restrictedToApp || appID == sourceApp)
    }

    /// Whether a move may be proposed by a scene of `appID`: only inside the source app, only
    /// when the drag allows it.
    func allowsMove(into appID: String) -> Bool {
        allowsMove && appID == sourceApp && !isAppIcon
    }
}

/// A drag as `DragManager1.LastDrag` tells it: where it went, what was proposed, how it ended.
///
/// Kept apart from ``DragSession`` (in ``DragService/records``): the copies of a session a call
/// holds would otherwise make every appended step copy all the steps before it.
struct DragRecord: Sendable {
    /// One location of the drag, with the scene under it and the operation proposed there.
    struct Step: Sendable, Hashable {
        var location: Point
        /// "" for none, a persistent identifier, or `edge:left` / `edge:right`.
        var target: String
        var operation: DropOperation
    }

    /// How many steps a record keeps: the first (begin) and the latest ones.
    static let stepLimit = 10_000

    var number: Int
    var sourceApp: String
    var sourceSession: String
    var isAppIcon: Bool
    var state = DragSession.State.dragging
    var operation: DropOperation?
    var target: String?
    var newSession: String?
    var reason: String?
    private(set) var steps: [Step] = []
    /// Steps dropped from the middle to stay within ``stepLimit``.
    private(set) var droppedSteps = 0

    init(number: Int, sourceApp: String, sourceSession: String, isAppIcon: Bool) {
        self.number = number
        self.sourceApp = sourceApp
        self.sourceSession = sourceSession
        self.isAppIcon = isAppIcon
    }

    /// Adds a step; at ``stepLimit`` the oldest tenth after the first go (in one go, so that a
    /// long drag does not move its steps on every move).
    mutating func append(_ step: Step) {
        if steps.count >= Self.stepLimit {
            let dropped = Self.stepLimit / 10
            steps.removeSubrange(1...dropped)
            droppedSteps += dropped
        }
        steps.append(step)
    }

    /// The `a{sv}` LastDrag returns.
    var dbusValue: DBusValue { dbusValue(preview: nil) }

    /// The `a{sv}` LastDrag returns for a running drag showing `preview` (its key `preview`).
    func dbusValue(preview: DragPreview?) -> DBusValue {
        var entries: [String: DBusValue] = [
            "id": .uint32(UInt32(clamping: number)),
            "sourceApp": .string(sourceApp),
            "sourceSession": .string(sourceSession),
            "state": .string(state.rawValue),
            "points": .array(of: "(ddss)", steps.map { step in
                .structure([.double(step.location.x), .double(step.location.y), .string(step.target),
                            .string(step.operation.name)])
            }),
        ]
        if isAppIcon { entries["app"] = .string(sourceApp) }
        if let operation { entries["operation"] = .string(operation.name) }
        if let target { entries["target"] = .string(target) }
        if let newSession { entries["newSession"] = .string(newSession) }
        if let reason { entries["reason"] = .string(reason) }
        if let preview {
            var shown: [String: DBusValue] = [:]
            if let title = preview.title { shown["title"] = .string(title) }
            if let image = preview.image { shown["image"] = .bytes(Array(image)) }
            entries["preview"] = shown.dbusValue
        }
        return entries.dbusValue
    }
}
