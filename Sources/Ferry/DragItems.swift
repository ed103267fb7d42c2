import FerryModel

/// A drag starting from a scene: what the scene is asked to provide (the argument of Apple's
/// `dragInteraction(_:itemsForBeginning:)`).
///
/// D-Bus: the arguments of `org.ferry.Client1.ProvideDragItems`.
public struct DragRequest: Sendable, Hashable {
    /// The drag's number (`"7"`).
    public let id: String
    /// Which of the scene's draggable things (the app decides what the index means; 0 is the
    /// scene's main one).
    public let item: Int
    /// Where the drag starts, in the scene's coordinates.
    public let location: Point
    /// Whether the user asks for a move.
    public let wantsMove: Bool

    /// Makes a request.
    public init(id: String, item: Int = 0, location: Point = .zero, wantsMove: Bool = false) {
        self.id = id
        self.item = item
        self.location = location
        self.wantsMove = wantsMove
    }
}

/// What a scene offers when a drag starts from it: the items and the drag's rules.
///
/// The rules apply when the broker asks (`ProvideDragItems`: another client, such as `ferry
/// drag`, began the drag). When this app begins the drag itself
/// (``FerryClient/beginDrag(fromScene:options:)``) the drag has already begun when its scene
/// delegate is asked: ``allowsMoveOperation`` and ``restrictedToApp`` are then ignored, and
/// the ``DragOptions`` given to `beginDrag` must say them.
public struct DragItems: Sendable {
    /// The dragged items; empty means nothing to drag (the drag does not begin).
    public var providers: [ItemProvider]
    /// Whether the source allows a move (only ever delivered inside this app).
    public var allowsMoveOperation: Bool
    /// Whether only this app's scenes may see the drag (Apple's
    /// `isRestrictedToDraggingApplication`).
    public var restrictedToApp: Bool
    /// The items' previews (Apple's `UIDragItem.previewProvider`), one per provider from the
    /// first (nil, or fewer than the providers: no preview for those): what targets see while
    /// the drag is over them, and pictures of the desktop draw at its location.
    public var previews: [DragPreview?]

    /// Makes the items of a drag.
    /// - Parameters:
    ///   - providers: the dragged items.
    ///   - allowsMoveOperation: whether the source allows a move.
    ///   - restrictedToApp: whether only this app's scenes may see the drag.
    ///   - previews: the items' previews, at most one per provider.
    public init(_ providers: [ItemProvider], allowsMoveOperation: Bool = true, restrictedToApp: Bool = false,
                previews: [DragPreview?] = []) {
        self.providers = providers
        self.allowsMoveOperation = allowsMoveOperation
        self.restrictedToApp = restrictedToApp
        self.previews = previews
    }

    /// Nothing to drag.
    public static let none = DragItems([])
}

/// How a drag from one of this app's scenes ended (Apple's
/// `dragInteraction(_:session:didEndWith:)`).
///
/// D-Bus: the arguments of `org.ferry.Client1.DragEnded`.
public struct DragEnd: Sendable, Hashable {
    /// The drag's number.
    public let id: String
    /// The final operation: with `.move` the source removes its original.
    public let operation: DropOperation
    /// The scene that performed the drop, when it is this app's.
    public let target: String?
    /// The scene an edge drop opened.
    public let newSession: String?

    /// Makes an end.
    public init(id: String, operation: DropOperation, target: String? = nil, newSession: String? = nil) {
        self.id = id
        self.operation = operation
        self.target = target
        self.newSession = newSession
    }
}
