#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FerryModel

/// Who calls a pasteboard method: the connection's credentials and, when it registered one,
/// its app. Resolved before a method does anything else.
struct PasteboardCaller: Sendable {
    /// The unique name and credentials.
    var caller: Caller
    /// The app the connection registered, nil for the CLI and scripts.
    var app: RegisteredApp?

    /// The caller's unique bus name.
    var uniqueName: String { caller.uniqueName }
    /// The caller's app id, nil when it registered none.
    var appID: String? { app?.appID }

    /// Whether `item`'s `ownApp` representations are visible to this caller: only to the app
    /// that wrote the item.
    func isOwnApp(of item: StoredItem) -> Bool {
        guard let appID, let source = item.sourceAppID else { return false }
        return appID == source
    }

    /// The representations of `item` this caller may see, in fidelity order.
    func visibleRepresentations(of item: StoredItem) -> [StoredRepresentation] {
        let own = isOwnApp(of: item)
        return item.representations.filter { $0.visibility == .all || own }
    }
}

/// The items of a write that contained a sensitive item: kept in memory only (the store records
/// only that the pasteboard changed), served until the next change of that pasteboard, gone
/// after a restart.
struct VolatileContent: Sendable {
    /// The pasteboard's change count when these items became current; they are current only while
    /// the store's change count is still this.
    var changeCount: UInt64
    /// The items, as the store would describe them (held bytes are `.inline`).
    var items: [StoredItem]
    /// Which items carry the sensitive flag themselves.
    var sensitive: Set<UUID>
    /// The held bytes, by item and type.
    var bytes: [UUID: [ContentType: Data]]

    /// The unexpired items at `now`.
    func items(at now: Date) -> [StoredItem] {
        items.filter { !$0.isExpired(at: now) }
    }

    /// The earliest expiration date among the items.
    var nextExpiration: Date? {
        items.compactMap(\.options.expirationDate).min()
    }

    /// Marks the representations promised by `owner` unavailable. Returns whether any were.
    mutating func dropPromises(of owner: String) -> Bool {
        var dropped = false
        for i in items.indices {
            for r in items[i].representations.indices {
                if case .promised(let holder) = items[i].representations[r].storage, holder == owner {
                    items[i].representations[r].storage = .unavailable
                    dropped = true
                }
            }
        }
        return dropped
    }
}
