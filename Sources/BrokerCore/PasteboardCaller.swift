#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FerryModel

/// Who calls a pasteboard method: the connection's credentials and, when it registered one,
/// its app. Resolved before a method does anything else.
package struct PasteboardCaller: Sendable {
    /// The unique name and credentials.
    package var caller: Caller
    /// The app the connection registered, nil for the CLI and scripts.
    package var app: AppRegistration?

    /// The caller's unique bus name.
    package var uniqueName: String { caller.uniqueName }
    /// The caller's app id, nil when it registered none.
    package var appID: String? { app?.appID }

    /// The caller `caller`, with the app it registered (nil for the CLI and scripts).
    package init(caller: Caller, app: AppRegistration?) {
        self.caller = caller
        self.app = app
    }

    /// Whether `item`'s `ownApp` representations are visible to this caller: only to the app
    /// that wrote the item.
    func isOwnApp(of item: StoredItem) -> Bool {
        guard let appID, let source = item.sourceAppID else { return false }
        return appID == source
    }

    /// The representations of `item` this caller may see, in fidelity order.
    package func visibleRepresentations(of item: StoredItem) -> [StoredRepresentation] {
        let own = isOwnApp(of: item)
        return item.representations.filter { $0.visibility == .all || own }
    }
}

/// Items held in memory only, never in the store: those of a write that contained a sensitive
/// item (the store records only that the pasteboard changed; served until the next change of
/// that pasteboard), and a transient pasteboard's (see ``TransientPasteboard``). Gone after a restart.
package struct VolatileContent: Sendable {
    /// The pasteboard's change count when these items became current; for a sensitive write they
    /// are current only while the store's change count is still this.
    package var changeCount: UInt64
    /// The items, as the store would describe them (held bytes are `.inline`).
    package var items: [StoredItem]
    /// Which items carry the sensitive flag themselves.
    package var sensitive: Set<UUID>
    /// The held bytes, by item and type.
    package var bytes: [UUID: [ContentType: Data]]

    /// Items current from change count `changeCount`, with their held bytes.
    package init(changeCount: UInt64, items: [StoredItem], sensitive: Set<UUID>, bytes: [UUID: [ContentType: Data]]) {
        self.changeCount = changeCount
        self.items = items
        self.sensitive = sensitive
        self.bytes = bytes
    }

    /// The unexpired items at `now`.
    package func items(at now: Date) -> [StoredItem] {
        items.filter { !$0.isExpired(at: now) }
    }

    /// The earliest expiration date among the items.
    package var nextExpiration: Date? {
        items.compactMap(\.options.expirationDate).min()
    }

    /// The bytes held, in all.
    package var heldBytes: Int {
        bytes.values.reduce(0) { total, byType in byType.values.reduce(total) { $0 + $1.count } }
    }

    /// Hands the bytes of a promise to the broker (`Fulfill`): the representation becomes held.
    /// - Returns: false when no item here has that id.
    /// - Throws: `FerryModelError` `.notFound` (no such type), `.permissionDenied` (another app's
    ///   promise), `.unavailable` (dropped already), `.invalidArgument` (not a promise).
    package mutating func fulfill(item: UUID, type: ContentType, data: Data, from owner: String) throws -> Bool {
        guard let i = items.firstIndex(where: { $0.id == item }) else { return false }
        guard let r = items[i].representations.firstIndex(where: { $0.contentType == type }) else {
            throw FerryModelError(.notFound, "item \(item) has no \(type.identifier) representation")
        }
        switch items[i].representations[r].storage {
        case .promised(let holder) where holder == owner:
            items[i].representations[r].storage = .inline
            items[i].representations[r].size = Int64(data.count)
            bytes[item, default: [:]][type] = data
            return true
        case .promised:
            throw FerryModelError(.permissionDenied, "\(type.identifier) of item \(item) was not promised by \(owner)")
        case .unavailable:
            throw FerryModelError(.unavailable, "the promise of \(type.identifier) was already dropped")
        case .inline, .blob:
            throw FerryModelError(.invalidArgument, "\(type.identifier) of item \(item) is not a promise")
        }
    }

    /// Removes the representations promised by `owner`, and the items left with none (a
    /// sensitive write whose source left: the store drops the same).
    package mutating func removePromises(of owner: String) {
        for i in items.indices {
            items[i].representations.removeAll { representation in
                if case .promised(let holder) = representation.storage { holder == owner } else { false }
            }
        }
        let gone = Set(items.filter(\.representations.isEmpty).map(\.id))
        items.removeAll { gone.contains($0.id) }
        sensitive.subtract(gone)
        for id in gone { bytes[id] = nil }
    }

    /// Marks the representations promised by `owner` unavailable. Returns whether any were.
    package mutating func dropPromises(of owner: String) -> Bool {
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
