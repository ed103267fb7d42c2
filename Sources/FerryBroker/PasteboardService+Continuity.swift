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
    /// A named pasteboard changed (called on the pasteboard actor: must not block); continuity
    /// looks only at those the user opted in.
    func namedPasteboardChanged(_ name: String, changeCount: UInt64)
}

extension PasteboardService {
    /// Turns continuity on (or off, nil).
    package nonisolated func setContinuity(_ hooks: (any ContinuityHooks)?) {
        continuity.withLock { $0 = hooks }
    }

    /// Replaces the items of the general pasteboard (or of the named pasteboard `name`, made when
    /// missing) with `items` (remote items from another device), and announces the change;
    /// returns the new change count. Written without an fsync: a remote item only stands for
    /// bytes on another device, and after a power failure the pasteboard comes back with what it
    /// had before (``PasteboardStore/write(_:to:now:durable:)``).
    package func writeRemoteItems(_ items: [NewItem], to name: String = PasteboardName.general) async throws -> UInt64 {
        let store = self.store
        let count = try await BlockingWork.run { try store.write(items, to: name, durable: false) }
        didChange(name, changeCount: count)
        return count
    }

    /// Streams a representation that an app on this machine still promises, for another device's
    /// paste (issue #22): the app is asked through the same path as for a local `Read`
    /// (`org.ferry.Client1.ProvideRepresentation`, once), and its bytes go to `sink` as they come,
    /// on a worker thread where `sink` may block to hold the app back.
    /// - Parameters:
    ///   - owner: the promise's owner (the app's unique bus name).
    ///   - item: the item's id.
    ///   - type: the promised type.
    ///   - sink: takes each piece of the bytes; what it throws ends the stream and is rethrown.
    /// - Returns: the byte count, once the app has written everything and said so.
    /// - Throws: `FerryModelError` `.unavailable` (the app is gone, refused or miscounted),
    ///   `.timeout` (it did not finish within the relay's timeout), as a local paste's
    ///   `FinishTransfer` would; what `sink` throws.
    package nonisolated func streamPromised(owner: String, item: UUID, type: ContentType,
                                            into sink: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Void) async throws -> UInt64 {
        guard let (name, path) = await client(of: owner) else {
            throw FerryModelError(.unavailable, "the app that promised \(type.identifier) is gone without handing it over")
        }
        return try await relay.stream(owner: name, clientPath: path, itemID: item, type: type, paste: true, into: sink)
    }

    /// Clears the general pasteboard (or the named pasteboard `name`) when every item on it
    /// satisfies `isRemote` (the engine is gone, so remote items disappear); a local copy is
    /// never touched, nor a pasteboard that does not exist.
    /// - Returns: whether it cleared.
    @discardableResult
    package func clearRemoteItems(on name: String = PasteboardName.general,
                                  where isRemote: @Sendable (StoredItem) -> Bool) async throws -> Bool {
        let store = self.store
        guard try name == PasteboardName.general || store.pasteboards().contains(name) else { return false }
        let items = try store.items(in: name)
        guard !items.isEmpty, items.allSatisfy(isRemote), volatileContent(name, changeCount: try store.changeCount(of: name)) == nil
        else { return false }
        let count = try await BlockingWork.run { try store.clear(name) }
        didChange(name, changeCount: count)
        return true
    }
}
