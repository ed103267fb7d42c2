#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import BrokerCore
import DBus
import FerryModel
import Synchronization

/// Transient pasteboards (`org.ferry.drag.<n>`, `org.ferry.share.<n>`): one per running drag or
/// share, created and removed by the drag or share service. Memory only (``TransientPasteboard``):
/// never in the store, never listed, no history, at most 16 MiB held and within ``PasteboardService/memory``
/// (charged to the writer, released when it goes); reads, promises and `Fulfill`
/// go through the same code as on any pasteboard. Only the parties of the drag or share
/// (``TransientPasteboardAccess``) may use one.
extension PasteboardService {
    /// Creates and exports an empty transient pasteboard; returns its path.
    /// - Parameters:
    ///   - name: `org.ferry.drag.<n>` or `org.ferry.share.<n>` (``TransientPasteboard/Kind/name(_:)``).
    ///   - access: who may use it.
    /// - Throws: `FerryModelError` `.invalidArgument` for another name or one that exists already.
    package func createTransientPasteboard(_ name: String, access: TransientPasteboardAccess) throws -> ObjectPath {
        guard TransientPasteboard.parse(name) != nil else {
            throw FerryModelError(.invalidArgument, "\"\(name)\" is not a transient pasteboard's name (org.ferry.drag.<n>, org.ferry.share.<n>)")
        }
        let path = try ObjectPath(PasteboardName.objectPath(name))
        let inserted = transients.withLock { transients in
            guard transients[name] == nil, !exported.contains(name) else { return false }
            transients[name] = TransientPasteboard(access: access)
            return true
        }
        guard inserted else { throw FerryModelError(.invalidArgument, "the pasteboard \(name) exists already") }
        do {
            try connection.export(interface(for: name), at: path)
        } catch {
            transients.withLock { _ = $0.removeValue(forKey: name) }
            throw error
        }
        announced[name] = 0
        return path
    }

    /// Changes who may use a transient pasteboard (no-op for an unknown name).
    /// - Parameters:
    ///   - name: the transient pasteboard's name.
    ///   - body: changes the access rule in place.
    package nonisolated func updateTransientAccess(_ name: String, _ body: (inout TransientPasteboardAccess) -> Void) {
        transients.withLock { transients in
            guard var transient = transients[name] else { return }
            body(&transient.access)
            transients[name] = transient
        }
    }

    /// Unexports a transient pasteboard and forgets its items, after a last `Changed` (to its
    /// parties). The relay forgets the promised reads started on it (``PromiseRelay/cancelTransfers(ofPasteboard:)``):
    /// their `FinishTransfer` is NotFound from now on. No-op for an unknown name.
    /// - Parameter name: the transient pasteboard's name.
    package func removeTransientPasteboard(_ name: String) {
        let held: Int
        do {
            // Its own scope, so that the items' bytes are freed before they are given back.
            guard let gone = transients.withLock({ $0.removeValue(forKey: name) }) else { return }
            held = gone.content.heldBytes
            memory.release(name)
            relay.cancelTransfers(ofPasteboard: name)
            announce(name, changeCount: gone.content.changeCount + 1, to: gone.access.parties)
        }
        if let path = try? ObjectPath(PasteboardName.objectPath(name)) { connection.unexport(path) }
        announced[name] = nil
        if held > 0 { FreedMemory.returnToSystem() }
    }

    /// A transient pasteboard's current items (metadata as the store describes them), for the
    /// broker's own use (no access check).
    /// - Parameter name: the transient pasteboard's name.
    /// - Throws: `FerryModelError` `.notFound` for an unknown transient pasteboard.
    package nonisolated func transientItems(_ name: String) async throws -> [StoredItem] {
        try transientContent(name).items(at: Date())
    }

    /// The bytes of one representation of a transient pasteboard's item, for the broker's own use
    /// (the edge drop reads the user activity, built-in activities read the items): held bytes, or
    /// promised ones fetched from the source app. Not a paste: not logged, no policy, no access check.
    /// - Parameters:
    ///   - name: the transient pasteboard's name.
    ///   - item: the item's index.
    ///   - type: the type wanted: the item's first representation conforming to it.
    ///   - limit: the most bytes wanted.
    ///   - timeout: how long the source app has to serve promised bytes (5 s by default).
    /// - Returns: the bytes; nil when the item or a conforming representation is missing, or its
    ///   promise cannot be served (the app gone, failing or slower than `timeout`).
    /// - Throws: `FerryModelError` `.notFound` for an unknown transient pasteboard, `.tooLarge` when
    ///   the bytes exceed `limit`.
    package nonisolated func transientBytes(_ name: String, item: Int, type: ContentType, limit: Int,
                                      timeout: Duration = .seconds(5)) async throws -> [UInt8]? {
        let items = try transientContent(name).items(at: Date())
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
            guard let data = try transientContent(name).bytes[stored.id]?[representation.contentType] else { return nil }
            guard data.count <= limit else { throw tooLarge }
            return [UInt8](data)
        }
    }

    // MARK: - Access

    /// Refuses `caller` unless it plays `role` in the drag or share whose pasteboard is `name` (and,
    /// for a writer, it still takes items). Nothing to check on other pasteboards.
    /// - Returns: whether `name` is a transient pasteboard.
    /// - Throws: `FerryModelError` `.permissionDenied`, or `.notFound` once the drag or share has ended.
    @discardableResult
    nonisolated func checkTransientAccess(_ name: String, _ caller: PasteboardCaller, _ role: TransientPasteboard.Role) throws -> Bool {
        guard PasteboardName.isReserved(name), let (kind, number) = TransientPasteboard.parse(name) else { return false }
        let owner = "\(kind.rawValue) \(number)"
        let transient = try transientPasteboard(name)
        guard transient.permits(role, caller.uniqueName) else {
            throw FerryModelError(.permissionDenied, "only the parties of \(owner) may \(role.action)")
        }
        if role == .writer, !transient.access.acceptsWrites {
            throw FerryModelError(.permissionDenied, "\(owner) no longer takes items: \(kind.writesEnded)")
        }
        return true
    }

    /// Refuses a method that transient pasteboards do not have: InvalidArgument to the parties,
    /// PermissionDenied to anyone else. Nothing on other pasteboards.
    nonisolated func refuseOnTransientPasteboard(_ name: String, _ caller: PasteboardCaller, _ method: String) throws {
        guard try checkTransientAccess(name, caller, .party) else { return }
        let kind = TransientPasteboard.parse(name)?.kind.rawValue ?? "drag"
        let reason = method == "Clear" ? "cannot be cleared (its items go with the \(kind))" : "has no history"
        throw FerryModelError(.invalidArgument, "\(method): the \(kind) pasteboard \(name) \(reason)")
    }

    // MARK: - Content

    /// One transient pasteboard's state (a copy: its storage is shared until written).
    /// - Throws: `FerryModelError` `.notFound` when it does not exist (its drag or share has ended).
    nonisolated func transientPasteboard(_ name: String) throws -> TransientPasteboard {
        guard let found = transients.withLock({ $0[name] }) else {
            let gone = TransientPasteboard.owner(of: name).map { "\($0) has ended" } ?? "no transient pasteboard \(name)"
            throw FerryModelError(.notFound, "\(gone): its pasteboard is gone")
        }
        return found
    }

    /// A transient pasteboard's content. - Throws: as ``transientPasteboard(_:)``.
    nonisolated func transientContent(_ name: String) throws -> VolatileContent {
        try transientPasteboard(name).content
    }

    /// Whether `name` names a transient pasteboard (existing or ended): its state lives here, not in the store.
    nonisolated func isTransientPasteboard(_ name: String) -> Bool {
        PasteboardName.isReserved(name) && TransientPasteboard.parse(name) != nil
    }

    /// `SetItems` on a transient pasteboard: the bytes read into memory (16 MiB in all), then the
    /// items replace the current ones (or follow them, with `append`) if the drag or share still
    /// takes them. The change count is bumped and announced.
    nonisolated func setTransientItems(_ write: PasteboardWrite, append: Bool, pasteboard name: String) async throws -> (UInt64, [UUID]) {
        let held = append ? try transientContent(name).heldBytes : 0
        let timeout = store.descriptorTimeout
        let limit = TransientPasteboard.maximumHeldSize
        let caller = write.writer.uniqueName
        let room = memory.room(for: caller, replacing: name)
        let reason = "a transient pasteboard holds its bytes in memory (promise larger representations)"
        let added = try await BlockingWork.run(reading: write.descriptors, for: caller, timeout: timeout) {
            try write.performInMemory(limit: max(0, min(limit, room) - held), timeout: timeout,
                                      limitReason: room < limit ? reason + "; ferryd --memory-budget, --caller-memory-budget" : reason)
        }
        let count = try transients.withLock { transients throws(FerryModelError) -> UInt64 in
            guard var transient = transients[name] else { throw FerryModelError(.notFound, "the drag or share of \(name) has ended") }
            guard transient.access.acceptsWrites else {
                throw FerryModelError(.permissionDenied, "\(name) no longer takes items: \(TransientPasteboard.parse(name)?.kind.writesEnded ?? "it has begun")")
            }
            var content = append ? transient.content : VolatileContent(changeCount: transient.content.changeCount, items: [],
                                                                  sensitive: [], bytes: [:])
            guard content.items.count + added.items.count <= PasteboardWrite.maximumItems else {
                throw FerryModelError(.tooLarge, "\(content.items.count + added.items.count) items; at most \(PasteboardWrite.maximumItems)",
                                      keyPath: "items")
            }
            guard content.heldBytes + added.heldBytes <= limit else {
                throw FerryModelError(.tooLarge, "\(reason): at most \(limit) bytes in all", keyPath: "items")
            }
            try memory.charge(name, caller: caller, bytes: content.heldBytes + added.heldBytes)
            content.items += added.items
            content.sensitive.formUnion(added.sensitive)
            content.bytes.merge(added.bytes) { _, new in new }
            content.changeCount += 1
            transient.content = content
            transients[name] = transient
            return content.changeCount
        }
        await announceTransient(name, changeCount: count)
        return (count, added.items.map(\.id))
    }

    /// Announces a transient pasteboard's change unless it is gone meanwhile.
    private func announceTransient(_ name: String, changeCount: UInt64) {
        guard let parties = transients.withLock({ $0[name]?.access.parties }) else { return }
        announce(name, changeCount: changeCount, to: parties)
    }

    /// `Fulfill` of a transient pasteboard's promise: the bytes become held (within 16 MiB in all).
    /// - Returns: false when no transient pasteboard has the item.
    nonisolated func fulfillTransient(item: UUID, type: ContentType, data: Data, from owner: String) throws -> Bool {
        try transients.withLock { transients throws(FerryModelError) -> Bool in
            for (name, var transient) in transients where transient.content.items.contains(where: { $0.id == item }) {
                guard transient.content.heldBytes + data.count <= TransientPasteboard.maximumHeldSize else {
                    throw FerryModelError(.tooLarge, "a transient pasteboard holds at most \(TransientPasteboard.maximumHeldSize) bytes in all",
                                          keyPath: "data")
                }
                let previous = try memory.charge(name, caller: owner, bytes: transient.content.heldBytes + data.count)
                do {
                    guard try transient.content.fulfill(item: item, type: type, data: data, from: owner) else {
                        memory.restore(name, previous)
                        return false
                    }
                } catch let error as FerryModelError {
                    memory.restore(name, previous)
                    throw error
                } catch {
                    memory.restore(name, previous)
                    throw FerryModelError(.invalidArgument, "\(error)")
                }
                transients[name] = transient
                return true
            }
            return false
        }
    }

    /// How many more bytes the transient pasteboard holding `item` may hold; nil when none holds it.
    nonisolated func transientRoom(holding item: UUID) -> Int? {
        transients.withLock { transients in
            transients.values.first { $0.content.items.contains { $0.id == item } }
                .map { TransientPasteboard.maximumHeldSize - $0.content.heldBytes }
        }
    }

    /// Turns the transient pasteboards' promises of `owner` into unavailable markers.
    nonisolated func dropTransientPromises(of owner: String) {
        transients.withLock { transients in
            for name in Array(transients.keys) { _ = transients[name]?.content.dropPromises(of: owner) }
        }
    }
}
