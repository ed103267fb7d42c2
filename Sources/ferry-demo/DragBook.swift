import FerryModel
import Synchronization

/// What a demo app remembers about the drags and drops in flight: which item each drag from one
/// of its scenes carries (so the source knows what to delete after a move), which local drops
/// left the dragged note where it was (so a move does not delete it), and the last proposal each
/// scene made per drag (so `drop-updated` is printed when it changes, not at every move).
final class DragBook: Sendable {
    private struct Book {
        /// Drag id → the dragged item.
        var items: [String: String] = [:]
        /// Drags whose local drop kept the note in place.
        var keptInPlace: Set<String> = []
        /// Drag id → scene → the operation last proposed there. A scene that refused a drag
        /// (canHandle false) hears no exit or end, so old drags are dropped past ``keptDrags``.
        var proposals: [String: [String: DropOperation]] = [:]
    }

    private let book = Mutex(Book())

    /// A drag of `item` began from one of this app's scenes.
    func began(_ drag: String, item: String) {
        book.withLock { $0.items[drag] = item }
    }

    /// A drop of drag `drag` in this app changed nothing (the note is already where it was
    /// dropped): a move must not delete it.
    func keepInPlace(_ drag: String) {
        book.withLock { _ = $0.keptInPlace.insert(drag) }
    }

    /// A drag from this app ended: the item it carried and whether its drop kept it in place;
    /// both are forgotten.
    func ended(_ drag: String) -> (item: String?, keptInPlace: Bool) {
        book.withLock { book in
            (book.items.removeValue(forKey: drag), book.keptInPlace.remove(drag) != nil)
        }
    }

    /// Notes the operation a scene proposes for a drag.
    /// - Returns: the one it proposed before (nil: the first time; the drag just entered).
    func propose(_ operation: DropOperation, drag: String, scene: String) -> DropOperation? {
        book.withLock { book in
            if book.proposals[drag] == nil, book.proposals.count >= Self.keptDrags {
                // Drag ids count up: forget the oldest.
                let oldest = book.proposals.keys.min { (Int($0) ?? 0) < (Int($1) ?? 0) }
                if let oldest { book.proposals[oldest] = nil }
            }
            let before = book.proposals[drag]?[scene]
            book.proposals[drag, default: [:]][scene] = operation
            return before
        }
    }

    /// How many drags' proposals are remembered at most.
    static let keptDrags = 32

    /// Forgets a scene's proposals for a drag (it exited, or the drag ended).
    func forget(drag: String, scene: String) {
        book.withLock { book in
            book.proposals[drag]?[scene] = nil
            if book.proposals[drag]?.isEmpty == true { book.proposals[drag] = nil }
        }
    }
}
