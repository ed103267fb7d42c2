import DesktopClipboard
import FerryModel
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the bridge knows of one selection.
struct SelectionState {
    /// One published import: the item Ferry holds for a desktop offer.
    struct Import {
        var offer: DesktopOffer
        var itemID: UUID
        var changeCount: UInt64
        var isSensitive: Bool
        /// The types copied eagerly so far, and those that must be for a complete copy.
        var stored: Set<ContentType> = []
        var storable: Set<ContentType>
        /// Whether the eager copy has ended (complete or not).
        var copyEnded = false
        var copy: Task<Void, Never>?
        var cancellation = DescriptorPump.Cancellation()

        var isComplete: Bool { !isSensitive && copyEnded && storable.isSubset(of: stored) }
    }

    var owner: BridgeStatus.Owner = .none
    var offeredTypes: [String] = []
    /// The id of the newest foreign offer.
    var latestOffer: UInt64?
    var current: Import?
    var lastImport: BridgeStatus.Transfer?
    var lastExport: BridgeStatus.Transfer?
    /// The last Ferry change exported (each exports once).
    var lastExportedChange: UInt64 = 0
    /// PRIMARY's debounced import.
    var pendingPrimary: Task<Void, Never>?
    /// Who waits for the current import's eager copy to end (a `SAVE_TARGETS` hand-over).
    var copyWaiters: [CheckedContinuation<Void, Never>] = []
    /// A restore waiting for that copy to end after the owner left (`Bridge.restoreOnceCopied`).
    var pendingRestore: Task<Void, Never>?

    /// Stops the current import's eager copy (a newer offer replaces it, or the bridge stops) and
    /// a restore waiting for it; its waiters go on.
    mutating func cancelImport() {
        pendingRestore?.cancel()
        pendingRestore = nil
        current?.cancellation.cancel()
        current?.copy?.cancel()
        for waiter in copyWaiters { waiter.resume() }
        copyWaiters = []
    }

    var status: BridgeStatus.Selection {
        var status = BridgeStatus.Selection()
        status.owner = owner
        status.offeredTypes = offeredTypes
        status.lastImport = lastImport
        status.lastExport = lastExport
        return status
    }
}
