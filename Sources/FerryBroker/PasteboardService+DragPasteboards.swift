#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import DBus
import FerryModel
import Synchronization

/// Drag pasteboards (`org.ferry.drag.<n>`): one per running drag, created and removed by the drag
/// service. Memory only (``DragPasteboard``): never in the store, never listed, no history, at
/// most 16 MiB held; reads, promises and `Fulfill` go through the same code as on any pasteboard.
/// Only the parties of the drag (``DragPasteboardAccess``) may use one.
extension PasteboardService {
    /// Creates and exports an empty drag pasteboard; returns its path.
    /// - Parameters:
    ///   - name: `org.ferry.drag.<n>`, n the drag's number.
    ///   - access: who may use it.
    /// - Throws: `FerryModelError` `.invalidArgument` for another name or one that exists already.
    public func createDragPasteboard(_ name: String, access: DragPasteboardAccess) throws -> ObjectPath {
        guard DragPasteboard.isDragName(name) else {
            throw FerryModelError(.invalidArgument, "\"\(name)\" is not a drag pasteboard's name (\(DragPasteboard.namePrefix)<n>)")
        }
        let path = try ObjectPath(PasteboardName.objectPath(name))
        let inserted = drags.withLock { drags in
            guard drags[name] == nil, !exported.contains(name) else { return false }
            drags[name] = DragPasteboard(access: access)
            return true
        }
        guard inserted else { throw FerryModelError(.invalidArgument, "the pasteboard \(name) exists already") }
        do {
            try connection.export(interface(for: name), at: path)
        } catch {
            drags.withLock { _ = $0.removeValue(forKey: name) }
            throw error
        }
        announced[name] = 0
        return path
    }

    /// Changes who may use a drag pasteboard (no-op for an unknown name).
    /// - Parameters:
    ///   - name: the drag pasteboard's name.
    ///   - body: changes the access rule in place.
    public nonisolated func updateDragAccess(_ name: String, _ body: (inout DragPasteboardAccess) -> Void) {
        drags.withLock { drags in
            guard var drag = drags[name] else { return }
            body(&drag.access)
            drags[name] = drag
        }
    }

    /// Unexports a drag pasteboard and forgets its items, after a last `Changed` (to the drag's
    /// parties). The relay forgets the promised reads started on it (``PromiseRelay/cancelTransfers(ofPasteboard:)``):
    /// their `FinishTransfer` is NotFound from now on. No-op for an unknown name.
    /// - Parameter name: the drag pasteboard's name.
    public func removeDragPasteboard(_ name: String) {
        guard let gone = drags.withLock({ $0.removeValue(forKey: name) }) else { return }
        relay.cancelTransfers(ofPasteboard: name)
        announce(name, changeCount: gone.content.changeCount + 1, to: gone.access.parties)
        if let path = try? ObjectPath(PasteboardName.objectPath(name)) { connection.unexport(path) }
        announced[name] = nil
    }

    /// A drag pasteboard's current items (metadata as the store describes them), for the broker's
    /// own use (no access check).
    /// - Parameter name: the drag pasteboard's name.
    /// - Throws: `FerryModelError` `.notFound` for an unknown drag pasteboard.
    public nonisolated func dragItems(_ name: String) async throws -> [StoredItem] {
        try dragContent(name).items(at: Date())
    }

    /// The bytes of one representation of a drag pasteboard's item, for the broker's own use (the
    /// edge drop reads the user activity): held bytes, or promised ones fetched from the source
    /// app. Not a paste: not logged, no policy, no access check.
    /// - Parameters:
    ///   - name: the drag pasteboard's name.
    ///   - item: the item's index.
    ///   - type: the type wanted: the item's first representation conforming to it.
    ///   - limit: the most bytes wanted.
    ///   - timeout: how long the source app has to serve promised bytes (5 s by default).
    /// - Returns: the bytes; nil when the item or a conforming representation is missing, or its
    ///   promise cannot be served (the app gone, failing or slower than `timeout`).
    /// - Throws: `FerryModelError` `.notFound` for an unknown drag pasteboard, `.tooLarge` when
    ///   the bytes exceed `limit`.
    public nonisolated func dragBytes(_ name: String, item: Int, type: ContentType, limit: Int,
                                      timeout: Duration = .seconds(5)) async throws -> [UInt8]? {
        let items = try dragContent(name).items(at: Date())
        guard items.indices.contains(item) else { return nil }
        let stored = items[item]
        let conforming = stored.representations.filter { $0.contentType.conforms(to: type) }
        guard let representation = conforming.first(where: { $0.storage != .unavailable }) else { return nil }
        let tooLarge = FerryModelError(.tooLarge, "\(representation.contentType.identifier) of item \(item) of \(name) "
                                       + "has more than \(limit) bytes")
        switch representation.storage {
        case .promised(let owner):
            guard let bytes = await fetchPromised(owner: owner, item: stored.id, type: representation.contentType,
                                                  limit: max(0, min(limit, Int.max - 1)) + 1, timeout: timeout) else { return nil }
            guard bytes.count <= limit else { throw tooLarge }
            return bytes
        case .inline, .blob, .unavailable:
            // Read again: a Fulfill may have changed the bytes since the items were read.
            guard let data = try dragContent(name).bytes[stored.id]?[representation.contentType] else { return nil }
            guard data.count <= limit else { throw tooLarge }
            return [UInt8](data)
        }
    }

    // MARK: - Access

    /// Refuses `caller` unless it plays `role` in the drag whose pasteboard is `name` (and, for a
    /// writer, the drag still takes items). Nothing to check on other pasteboards.
    /// - Returns: whether `name` is a drag pasteboard.
    /// - Throws: `FerryModelError` `.permissionDenied`, or `.notFound` once the drag has ended.
    @discardableResult
    nonisolated func checkDragAccess(_ name: String, _ caller: PasteboardCaller, _ role: DragPasteboard.Role) throws -> Bool {
        guard PasteboardName.isReserved(name), let number = DragPasteboard.number(of: name) else { return false }
        let drag = try dragPasteboard(name)
        guard drag.permits(role, caller.uniqueName) else {
            throw FerryModelError(.permissionDenied, "only the parties of drag \(number) may \(role.action)")
        }
        if role == .writer, !drag.access.acceptsWrites {
            throw FerryModelError(.permissionDenied, "drag \(number) no longer takes items: its drop has started")
        }
        return true
    }

    /// Refuses a method that drag pasteboards do not have: InvalidArgument to the drag's parties,
    /// PermissionDenied to anyone else. Nothing on other pasteboards.
    nonisolated func refuseOnDragPasteboard(_ name: String, _ caller: PasteboardCaller, _ method: String) throws {
        guard try checkDragAccess(name, caller, .party) else { return }
        let reason = method == "Clear" ? "cannot be cleared (its items go with the drag)" : "has no history"
        throw FerryModelError(.invalidArgument, "\(method): the drag pasteboard \(name) \(reason)")
    }

    // MARK: - Content

    /// One drag pasteboard's state (a copy: its storage is shared until written).
    /// - Throws: `FerryModelError` `.notFound` when it does not exist (its drag has ended).
    nonisolated func dragPasteboard(_ name: String) throws -> DragPasteboard {
        guard let found = drags.withLock({ $0[name] }) else {
            let drag = DragPasteboard.number(of: name).map { "drag \($0) has ended" } ?? "no drag pasteboard \(name)"
            throw FerryModelError(.notFound, "\(drag): its pasteboard is gone")
        }
        return found
    }

    /// A drag pasteboard's content. - Throws: as ``dragPasteboard(_:)``.
    nonisolated func dragContent(_ name: String) throws -> VolatileContent {
        try dragPasteboard(name).content
    }

    /// Whether `name` names a drag pasteboard (existing or ended): its state lives here, not in the store.
    nonisolated func isDragPasteboard(_ name: String) -> Bool {
        PasteboardName.isReserved(name) && DragPasteboard.isDragName(name)
    }

    /// `SetItems` on a drag pasteboard: the bytes read into memory (16 MiB in all), then the
    /// items replace the current ones (or follow them, with `append`) if the drag still takes
    /// them. The change count is bumped and announced.
    nonisolated func setDragItems(_ write: PasteboardWrite, append: Bool, pasteboard name: String) async throws -> (UInt64, [UUID]) {
        let held = append ? try dragContent(name).heldBytes : 0
        let timeout = store.descriptorTimeout
        let limit = DragPasteboard.maximumHeldSize
        let reason = "a drag pasteboard holds its bytes in memory (promise larger representations)"
        let added = try await BlockingWork.run {
            try write.performInMemory(limit: max(0, limit - held), timeout: timeout, limitReason: reason)
        }
        let count = try drags.withLock { drags throws(FerryModelError) -> UInt64 in
            guard var drag = drags[name] else { throw FerryModelError(.notFound, "the drag of \(name) has ended") }
            guard drag.access.acceptsWrites else {
                throw FerryModelError(.permissionDenied, "\(name) no longer takes items: its drop has started")
            }
            var content = append ? drag.content : VolatileContent(changeCount: drag.content.changeCount, items: [],
                                                                  sensitive: [], bytes: [:])
            guard content.items.count + added.items.count <= PasteboardWrite.maximumItems else {
                throw FerryModelError(.tooLarge, "\(content.items.count + added.items.count) items; at most \(PasteboardWrite.maximumItems)",
                                      keyPath: "items")
            }
            guard content.heldBytes + added.heldBytes <= limit else {
                throw FerryModelError(.tooLarge, "\(reason): at most \(limit) bytes in all", keyPath: "items")
            }
            content.items += added.items
            content.sensitive.formUnion(added.sensitive)
            content.bytes.merge(added.bytes) { _, new in new }
            content.changeCount += 1
            drag.content = content
            drags[name] = drag
            return content.changeCount
        }
        await announceDrag(name, changeCount: count)
        return (count, added.items.map(\.id))
    }

    /// Announces a drag pasteboard's change unless it is gone meanwhile.
    private func announceDrag(_ name: String, changeCount: UInt64) {
        guard let parties = drags.withLock({ $0[name]?.access.parties }) else { return }
        announce(name, changeCount: changeCount, to: parties)
    }

    /// `Fulfill` of a drag pasteboard's promise: the bytes become held (within 16 MiB in all).
    /// - Returns: false when no drag pasteboard has the item.
    nonisolated func fulfillDrag(item: UUID, type: ContentType, data: Data, from owner: String) throws -> Bool {
        try drags.withLock { drags throws(FerryModelError) -> Bool in
            for (name, var drag) in drags where drag.content.items.contains(where: { $0.id == item }) {
                guard drag.content.heldBytes + data.count <= DragPasteboard.maximumHeldSize else {
                    throw FerryModelError(.tooLarge, "a drag pasteboard holds at most \(DragPasteboard.maximumHeldSize) bytes in all",
                                          keyPath: "data")
                }
                do {
                    guard try drag.content.fulfill(item: item, type: type, data: data, from: owner) else { return false }
                } catch let error as FerryModelError {
                    throw error
                } catch {
                    throw FerryModelError(.invalidArgument, "\(error)")
                }
                drags[name] = drag
                return true
            }
            return false
        }
    }

    /// How many more bytes the drag pasteboard holding `item` may hold; nil when none holds it.
    nonisolated func dragRoom(holding item: UUID) -> Int? {
        drags.withLock { drags in
            drags.values.first { $0.content.items.contains { $0.id == item } }
                .map { DragPasteboard.maximumHeldSize - $0.content.heldBytes }
        }
    }

    /// Turns the drag pasteboards' promises of `owner` into unavailable markers.
    nonisolated func dropDragPromises(of owner: String) {
        drags.withLock { drags in
            for name in Array(drags.keys) { _ = drags[name]?.content.dropPromises(of: owner) }
        }
    }
}
