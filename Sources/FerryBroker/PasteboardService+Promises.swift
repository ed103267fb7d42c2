#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import BrokerCore
import DBus
import FerryModel
import Synchronization

/// Promised representations: the broker never holds their bytes; ``PromiseRelay`` asks the
/// owning app (through its `org.ferry.Client1` object) to write them into a pipe whose read end
/// goes to the reader.
extension PasteboardService {
    /// The owner's bus name and client object, when it is still a registered app.
    nonisolated func client(of owner: String) async -> (BusName, ObjectPath)? {
        guard let app = registry.app(of: owner),
              let name = try? BusName(owner), let path = try? ObjectPath(app.clientPath) else { return nil }
        return (name, path)
    }

    /// Whether the owner of a promise can still serve it: a registered app, or a remote device's
    /// item (continuity).
    nonisolated func promiseOwnerIsHere(_ owner: String) -> Bool {
        if let remote = continuity.withLock({ $0 }), remote.serves(owner: owner) { return true }
        return registry.app(of: owner) != nil
    }

    /// Starts a promised read: the pipe's read end and the transfer id `FinishTransfer` resolves;
    /// or, given `window`, the bytes themselves when the source writes them all within it
    /// (``PromiseRelay/read(owner:clientPath:itemID:type:estimatedSize:reader:pasteboard:waitingAtMost:)``).
    /// - Throws: `FerryModelError` `.unavailable` when the owner is no longer a registered app, and
    ///   what the source's failure within `window` is.
    nonisolated func startPromisedRead(owner: String, item: UUID, type: ContentType, estimatedSize: Int64?,
                                       reader: PasteboardCaller, pasteboard: String,
                                       inlineWithin window: Duration? = nil) async throws -> PromiseRelay.Delivery {
        if let remote = continuity.withLock({ $0 }), remote.serves(owner: owner) {
            // A remote item (continuity): its source device streams the bytes into the pipe.
            let (descriptor, task) = try remote.startRemoteRead(owner: owner, item: item, type: type)
            return .stream(descriptor, transfer: relay.adopt(task, reader: try BusName(reader.uniqueName), pasteboard: pasteboard))
        }
        guard let (name, path) = await client(of: owner) else {
            throw FerryModelError(.unavailable, "the app that promised \(type.identifier) is gone without handing it over")
        }
        let readerName = try BusName(reader.uniqueName)
        if let window {
            return try await relay.read(owner: name, clientPath: path, itemID: item, type: type, estimatedSize: estimatedSize,
                                        reader: readerName, pasteboard: pasteboard, waitingAtMost: window)
        }
        let (descriptor, transfer) = try await relay.start(owner: name, clientPath: path, itemID: item, type: type,
                                                           estimatedSize: estimatedSize, reader: readerName,
                                                           pasteboard: pasteboard)
        return .stream(descriptor, transfer: transfer)
    }

    /// At most `limit` bytes of a promised representation, for pattern detection (and the
    /// broker's own reads of drag and share items); nil when the owner cannot serve them within `timeout`
    /// (nil: the relay's).
    nonisolated func fetchPromised(owner: String, item: UUID, type: ContentType, limit: Int,
                                   timeout: Duration? = nil) async -> [UInt8]? {
        // A remote item's bytes are pulled only for a paste, never for the broker's own look.
        if let remote = continuity.withLock({ $0 }), remote.serves(owner: owner) { return nil }
        guard let (name, path) = await client(of: owner) else { return nil }
        return try? await relay.fetch(owner: name, clientPath: path, itemID: item, type: type, limit: limit, timeout: timeout)
    }

    /// `FinishTransfer`: how many bytes the source wrote, once it has finished.
    nonisolated func finishTransfer(_ call: MethodCall, pasteboard name: String) async throws -> [DBusValue] {
        try checkTransientAccess(name, try await resolve(call), .contentReader)
        let transfer = try call.argument(0, as: String.self)
        return [.uint64(try await relay.finish(transfer, caller: call.sender))]
    }
}
