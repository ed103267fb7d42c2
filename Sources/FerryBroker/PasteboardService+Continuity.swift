#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import BrokerCore
import DBus
import FerryModel
import Synchronization

/// What continuity (issue #22, the FerryContinuity module in ferryd) plugs into the pasteboards:
/// remote items are promised representations whose owner names the source device, and their
/// reads go through the same `Read` / `FinishTransfer` path as an app's promise.
package protocol ContinuityHooks: Sendable {
    /// Whether `owner` (a promised representation's owner) names a remote item's source.
    func serves(owner: String) -> Bool
    /// Starts pulling a remote representation: the pipe's read end for the reader (returned at
    /// once: nothing here waits on the network) and the task that writes into it and gives the
    /// byte count or a named error.
    func startRemoteRead(owner: String, item: UUID, type: ContentType) throws
        -> (FileDescriptor, Task<UInt64, any Error>)
    /// The general pasteboard changed (called on the pasteboard actor: must not block).
    func generalChanged(changeCount: UInt64)
}

extension PasteboardService {
    /// Turns continuity on (or off, nil).
    package nonisolated func setContinuity(_ hooks: (any ContinuityHooks)?) {
        continuity.withLock { $0 = hooks }
    }

    /// Replaces the general pasteboard's items with `items` (remote items from another device),
    /// and announces the change; returns the new change count. Written without an fsync: a
    /// remote item only stands for bytes on another device, and after a power failure the
    /// pasteboard comes back with what it had before (``PasteboardStore/write(_:to:now:durable:)``).
    package func writeRemoteItems(_ items: [NewItem]) async throws -> UInt64 {
        let store = self.store, general = PasteboardName.general
        let count = try await BlockingWork.run { try store.write(items, to: general, durable: false) }
        didChange(general, changeCount: count)
        return count
    }

    /// Clears the general pasteboard when every item on it satisfies `isRemote` (the engine is
    /// gone, so remote items disappear); a local copy is never touched.
    /// - Returns: whether it cleared.
    @discardableResult
    package func clearRemoteItems(where isRemote: @Sendable (StoredItem) -> Bool) async throws -> Bool {
        let store = self.store, general = PasteboardName.general
        let items = try store.items(in: general)
        guard !items.isEmpty, items.allSatisfy(isRemote), volatileContent(general, changeCount: try store.changeCount(of: general)) == nil
        else { return false }
        let count = try await BlockingWork.run { try store.clear(general) }
        didChange(general, changeCount: count)
        return true
    }
}
