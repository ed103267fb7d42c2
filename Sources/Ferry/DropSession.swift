import FerryModel

/// A drag as a drop target sees it before it performs the drop (Apple's `UIDropSession`): where
/// it is, the types and number of its items, and who it comes from when local. Metadata only:
/// the items' content can be read only in
/// ``SceneDelegate/scene(_:performDrop:operation:itemProviders:)``.
///
/// D-Bus: the `info` dictionary of `org.ferry.Client1.DropEntered` / `DropUpdated` / `PerformDrop`.
public struct DropSession: Sendable, Hashable {
    /// The drag's number (`"7"` for `/org/ferry/Drag/7`).
    public let id: String
    /// The drag's location in the scene's coordinates (the desktop location minus the scene
    /// frame's origin).
    public let location: Point
    /// Every item's types, first appearance first.
    public let types: [ContentType]
    /// How many items the drag carries.
    public let numberOfItems: Int
    /// Whether this target may propose a move (false across apps, or when the drag does not
    /// allow moving). A move proposal is answered as copy otherwise.
    public let allowsMoveOperation: Bool
    /// Whether the drag comes from a scene of this app.
    public let isLocal: Bool
    /// The source app's id, only when ``isLocal``.
    public let sourceApp: String?
    /// The source scene's persistent identifier, only when ``isLocal``.
    public let sourceSession: String?
    /// The drag pasteboard's name (`org.ferry.drag.7`): its metadata may be read now, its content
    /// only while performing the drop.
    public let pasteboardName: String

    /// Makes a drop session (the library makes them from the broker's calls; tests and previews
    /// may make their own).
    public init(id: String, location: Point, types: [ContentType], numberOfItems: Int, allowsMoveOperation: Bool,
                isLocal: Bool, sourceApp: String? = nil, sourceSession: String? = nil, pasteboardName: String) {
        self.id = id
        self.location = location
        self.types = types
        self.numberOfItems = numberOfItems
        self.allowsMoveOperation = allowsMoveOperation
        self.isLocal = isLocal
        self.sourceApp = sourceApp
        self.sourceSession = sourceSession
        self.pasteboardName = pasteboardName
    }

    /// Whether some item has a type conforming to one of `types` (Apple's
    /// `hasItemsConforming(toTypeIdentifiers:)`).
    public func hasItemsConforming(to types: [ContentType]) -> Bool {
        self.types.contains { offered in types.contains { offered.conforms(to: $0) } }
    }

    /// Whether `configuration` accepts some item's type (Apple's `canLoadObjects(ofClass:)`, by
    /// paste configuration).
    public func canLoad(_ configuration: PasteConfiguration) -> Bool {
        configuration.accepts(types)
    }
}
