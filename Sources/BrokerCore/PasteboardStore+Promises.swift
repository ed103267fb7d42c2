#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FerryModel
import GRDB

extension PasteboardStore {
    /// Stores the bytes of a promised representation, handed over by its owner (its flush on
    /// exit): from now on the store holds them, inline or as a blob, durably.
    /// - Parameters:
    ///   - item: the item's id (current or in history).
    ///   - representation: the representation's exact type.
    ///   - data: the bytes or a descriptor to copy them from (not another promise).
    ///   - owner: the bus name handing the bytes over; it must be the promise's owner.
    /// - Throws: `FerryModelError` `.notFound` for an unknown or expired item or type,
    ///   `.permissionDenied` when `owner` did not make the promise, `.unavailable` when the promise
    ///   was already dropped, `.invalidArgument` when the representation is already held or
    ///   `data` is a promise.
    package func fulfillPromise(item: UUID, representation: ContentType, data: RepresentationSource,
                               from owner: String, now: Date = Date()) throws {
        if case .promised = data {
            throw FerryModelError(.invalidArgument, "a promise cannot be fulfilled with another promise")
        }
        // Check first, so a refused hand-over copies nothing.
        let current = try promiseOwner(item: item, representation: representation, now: now)
        guard current == owner else {
            throw FerryModelError(.permissionDenied, "\(representation.identifier) of item \(item) was not promised by \(owner)")
        }
        let prepared = try prepare(data, type: representation, visibility: .all)
        do {
            try writing { db in
                // The promise may have changed while the bytes were copied.
                guard try promiseOwner(db, item: item, representation: representation, now: now) == owner else {
                    throw FerryModelError(.unavailable, "the promise of \(representation.identifier) was withdrawn")
                }
                try db.execute(sql: """
                    UPDATE representation SET storage = ?, data = ?, blob = ?, owner = NULL, size = ?,
                                              checksum = ?, blobInode = ?, blobChangeTime = ?
                    WHERE item = ? AND contentType = ?
                    """, arguments: StatementArguments([prepared.storage, prepared.data, prepared.blob, prepared.size]
                                                       + prepared.blobColumns
                                                       + [item.uuidString, representation.identifier]))
                return []
            }
        } catch {
            if let blob = prepared.blob { blobs.remove([blob]) }
            throw error
        }
    }

    /// What dropping dead promises did to one pasteboard.
    package struct DroppedPromises: Sendable, Equatable {
        /// The pasteboard's new change count.
        package var changeCount: UInt64
        /// How many of its representations went.
        package var representations: Int
        /// How many of its items went (those left with no representation).
        package var items: Int
        /// The general pasteboard fell back to its most recent history entry, having lost every item.
        package var restoredHistory: Bool
        /// Items it still has (after the fall-back, if any).
        package var remainingItems: Int
    }

    /// Removes every representation promised by `owner` (it left the bus without handing them
    /// over), and every item, current or in the history, left with no representation. A
    /// pasteboard that loses items gets a new change count; the general pasteboard left with
    /// no item falls back to its most recent history entry, if any, as though it were restored.
    /// - Returns: what changed, per pasteboard that changed; history-only changes are not listed.
    @discardableResult
    package func dropPromises(of owner: String, now: Date = Date()) throws -> [String: DroppedPromises] {
        try writing { db in try dropRepresentations(db, where: "owner = ?", [owner], now: now) }
    }

    /// Removes the representations matching `condition` as ``dropPromises(of:now:)`` does.
    func dropRepresentations(_ db: Database, where condition: String, _ arguments: StatementArguments,
                             now: Date) throws -> ([String: DroppedPromises], garbage: [String]) {
        let touched = try Row.fetchAll(db, sql: """
            SELECT i.pasteboard AS pasteboard, COUNT(*) AS count FROM representation r JOIN item i ON i.id = r.item
            WHERE i.pasteboard IS NOT NULL AND r.rowid IN (SELECT rowid FROM representation WHERE \(condition))
            GROUP BY i.pasteboard
            """, arguments: arguments)
        let itemsBefore = try Dictionary(uniqueKeysWithValues: touched.map { row -> (String, Int) in
            let name: String = row["pasteboard"]
            return (name, try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item WHERE pasteboard = ?", arguments: [name]) ?? 0)
        })
        var garbage = try String.fetchAll(db, sql: "SELECT blob FROM representation WHERE blob IS NOT NULL AND \(condition)",
                                          arguments: arguments)
        try db.execute(sql: "DELETE FROM representation WHERE \(condition)", arguments: arguments)
        garbage += try deleteItems(db, where: "id NOT IN (SELECT item FROM representation)", [])
        try db.execute(sql: "DELETE FROM historyEntry WHERE id NOT IN (SELECT historyEntry FROM item WHERE historyEntry IS NOT NULL)")
        var changes: [String: DroppedPromises] = [:]
        for row in touched {
            let name: String = row["pasteboard"]
            var remaining = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item WHERE pasteboard = ?", arguments: [name]) ?? 0
            let removedItems = (itemsBefore[name] ?? 0) - remaining
            var restored = false
            if remaining == 0, name == Self.general, let entry = try liveHistoryEntryIDs(db, now: now).first {
                garbage += try deleteItems(db, where: "historyEntry = ? AND expirationDate <= ?",
                                           [entry, now.timeIntervalSinceReferenceDate])
                try db.execute(sql: "UPDATE item SET historyEntry = NULL, pasteboard = ? WHERE historyEntry = ?",
                               arguments: [Self.general, entry])
                try db.execute(sql: "DELETE FROM historyEntry WHERE id = ?", arguments: [entry])
                remaining = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item WHERE pasteboard = ?", arguments: [name]) ?? 0
                restored = true
            }
            changes[name] = DroppedPromises(changeCount: try incrementChangeCount(db, name), representations: row["count"],
                                            items: removedItems, restoredHistory: restored, remainingItems: remaining)
        }
        return (changes, garbage)
    }

    /// Every (item, type) still promised by `owner`, for the broker to ask it to hand them over.
    package func promises(of owner: String) throws -> [(item: UUID, contentType: ContentType)] {
        try reading { db in
            try Row.fetchAll(db, sql: "SELECT item, contentType FROM representation WHERE owner = ? ORDER BY item, position",
                             arguments: [owner]).compactMap { row in
                guard let id = UUID(uuidString: row["item"]), let type = try? ContentType.stored(row["contentType"]) else {
                    return nil
                }
                return (id, type)
            }
        }
    }

    private func promiseOwner(item: UUID, representation: ContentType, now: Date) throws -> String {
        try reading { db in try promiseOwner(db, item: item, representation: representation, now: now) }
    }

    private func promiseOwner(_ db: Database, item: UUID, representation: ContentType, now: Date) throws -> String {
        let row = try Row.fetchOne(db, sql: """
            SELECT r.storage, r.owner FROM representation r JOIN item i ON i.id = r.item
            WHERE r.item = ? AND r.contentType = ? AND (i.expirationDate IS NULL OR i.expirationDate > ?)
            """, arguments: [item.uuidString, representation.identifier, now.timeIntervalSinceReferenceDate])
        guard let row else {
            throw FerryModelError(.notFound, "item \(item) has no \(representation.identifier) representation")
        }
        switch row["storage"] as String {
        case "promised": return row["owner"]
        case "unavailable":
            throw FerryModelError(.unavailable, "the promise of \(representation.identifier) was already dropped")
        default:
            throw FerryModelError(.invalidArgument, "\(representation.identifier) of item \(item) is not a promise")
        }
    }
}
