import FerryModel
import Synchronization

/// A drag as a drop target sees it before it performs the drop (Apple's `UIDropSession`): where
/// it is, the types and number of its items, and who it comes from when local. Metadata only:
/// the items' content can be read only in
/// ``SceneDelegate/scene(_:performDrop:operation:itemProviders:)``; their previews
/// (``previews()``) at any time.
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
    /// The progress of reading the drop's items (Apple's `UIDropSession.progress`): every load
    /// started through ``SceneDelegate/scene(_:performDrop:operation:itemProviders:)``'s item
    /// providers adds its bytes, so its total is the sum of the loads' sizes and it advances as
    /// their bytes arrive. Not part of the session's value: two sessions that differ only in
    /// progress are equal.
    public var progress: ItemProvider.Progress { aggregate.progress }
    /// Sums the loads into ``progress``.
    let aggregate = DropProgress()
    /// Who ``previews()`` asks: the client that received the broker's call.
    var previewSource = DropPreviewSource(nil)

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

/// The loads of one drop, summed into one progress (as `NSProgress` adds a child per load).
/// Equal to every other and hashed as nothing, so that ``DropSession`` keeps comparing by its
/// value: the progress is a live counter, not part of what the session is.
final class DropProgress: Sendable, Hashable {
    /// The sum of every load.
    let progress = ItemProvider.Progress()
    private let loads = Mutex<[(completed: Int64, total: Int64)]>([])

    /// A progress for one more load: each change is passed on to `load` (the loader's own
    /// progress) and added into ``progress``.
    func child(forwardingTo load: ItemProvider.Progress) -> ItemProvider.Progress {
        let index = loads.withLock { loads in
            loads.append((0, 0))
            return loads.count - 1
        }
        return ItemProvider.Progress { [self] completed, total in
            load.totalUnitCount = total
            load.completedUnitCount = completed
            let (sumCompleted, sumTotal) = loads.withLock { loads in
                loads[index] = (completed, total)
                return loads.reduce((Int64(0), Int64(0))) { ($0.0 + $1.completed, $0.1 + max($1.total, $1.completed)) }
            }
            progress.totalUnitCount = sumTotal
            progress.completedUnitCount = sumCompleted
        }
    }

    static func == (lhs: DropProgress, rhs: DropProgress) -> Bool { true }
    func hash(into hasher: inout Hasher) {}
}
