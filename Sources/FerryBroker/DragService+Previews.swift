import BrokerCore
import DBus
import FerryModel
import Logging

/// A drag's item previews (Apple's `UIDragItem.previewProvider`), with who may set and see them.
///
/// Made when the drag begins, before the source app is asked for its items (it sets them while
/// it provides the items, before the session exists), gone when the drag ends.
struct DragPreviews: Sendable {
    /// The drag pasteboard's name: there may be no more previews than items on it.
    let pasteboard: String
    /// Who may set them: the source app and the initiator (no one for an app-icon drag).
    let writers: Set<String>
    /// One per item from the first, nil for an item without one.
    var previews: [DragPreview?] = []
}

extension DragService {
    /// The number of the drag whose session object is `value` (`/org/ferry/Drag/<n>`).
    /// - Throws: `FerryModelError` `.invalidArgument` at `session` for another path.
    static func dragNumber(_ value: DBusValue) throws -> Int {
        guard case .objectPath(let path) = value.unwrappingVariants else {
            throw FerryModelError(.invalidArgument, "expected a drag session's object path (o)", keyPath: "session")
        }
        let prefix = path.rawValue.hasPrefix(Self.path.rawValue + "/") ? path.rawValue.dropFirst(Self.path.rawValue.count + 1) : ""
        guard !prefix.isEmpty, prefix.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), prefix.count <= 18,
              let number = Int(prefix) else {
            throw FerryModelError(.invalidArgument, "\(path.rawValue) is not a drag session (\(Self.path.rawValue)/<n>)",
                                  keyPath: "session")
        }
        return number
    }

    /// `SetPreviews`: the source app or the initiator replaces the drag's previews, while the
    /// drag begins or moves.
    /// - Throws: `FerryModelError` `.notFound` (no such drag, or it ended), `.permissionDenied`
    ///   (another caller, or the drop has started), `.invalidArgument` (more previews than items).
    func setPreviews(_ number: Int, _ list: [DragPreview?], caller: Caller) async throws {
        guard let slot = previews[number] else { throw Self.gone(number) }
        guard slot.writers.contains(caller.uniqueName) else {
            throw FerryModelError(.permissionDenied, "only drag \(number)'s source app and the connection that began it set its previews")
        }
        if let session = sessions[number], session.state != .dragging {
            throw FerryModelError(.permissionDenied, "drag \(number) is being dropped: its previews are fixed")
        }
        let items = (try? await pasteboards.transientItems(slot.pasteboard))?.count ?? 0
        guard list.count <= items else {
            throw FerryModelError(.invalidArgument, "\(list.count) previews for \(items) item\(items == 1 ? "" : "s") (one per item, in order)",
                                  keyPath: "previews")
        }
        // The drag may have ended while its items were counted.
        guard previews[number] != nil else { throw Self.gone(number) }
        // Held in memory like the drag's items: charged to the caller within ferryd's budget.
        let bytes = list.reduce(0) { $0 + ($1?.image?.count ?? 0) + ($1?.title?.utf8.count ?? 0) }
        _ = try pasteboards.memory.charge(Self.previewsKey(slot.pasteboard), caller: caller.uniqueName, bytes: bytes)
        previews[number]?.previews = list
        let count = list.compactMap { $0 }.count
        logger.debug("drag \(number): \(count) preview\(count == 1 ? "" : "s") set", metadata: ["sender": "\(caller.uniqueName)"])
    }

    /// The memory budget's key for a drag's previews.
    static func previewsKey(_ pasteboard: String) -> String { pasteboard + "#previews" }

    /// Forgets drag `number`'s previews and releases their memory.
    func dropPreviews(_ number: Int) {
        guard let slot = previews.removeValue(forKey: number) else { return }
        _ = pasteboards.memory.release(Self.previewsKey(slot.pasteboard))
    }

    /// `Previews`: the drag's previews, for its source app, its initiator and apps whose scene
    /// it has entered (who may read its metadata).
    /// - Throws: `FerryModelError` `.notFound` (no such drag, or it ended), `.permissionDenied`.
    func previews(_ number: Int, caller: Caller) throws -> [DragPreview?] {
        guard let slot = previews[number] else { throw Self.gone(number) }
        let entered = sessions[number]?.entered.values.contains { $0.target.uniqueName == caller.uniqueName } ?? false
        guard slot.writers.contains(caller.uniqueName) || entered else {
            throw FerryModelError(.permissionDenied, "drag \(number)'s previews are for its source, its initiator and the scenes it enters")
        }
        return slot.previews
    }

    /// The preview a picture of the desktop shows for a running drag: its first item's that has
    /// one, as `a{sv}` (`title`, `image`).
    func shownPreview(_ number: Int) -> DragPreview? {
        previews[number]?.previews.lazy.compactMap { $0 }.first
    }
}
