#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FerryModel
import GRDB

extension PasteboardStore {
    /// History entry `index` (0 is the most recent, as in ``history(now:)``), without its bytes.
    /// - Throws: `FerryModelError` `.notFound` when there is no such entry.
    package func historyEntry(_ index: Int, now: Date = Date()) throws -> HistoryEntry {
        try reading { db in
            let entries = try liveHistoryEntryIDs(db, now: now)
            guard entries.indices.contains(index) else { throw Self.noHistoryEntry(index, count: entries.count) }
            let row = try Row.fetchOne(db, sql: "SELECT changeCount, replacedAt FROM historyEntry WHERE id = ?",
                                       arguments: [entries[index]])
            guard let row else { preconditionFailure("a live history entry has its row") }
            let changeCount: Int64 = row["changeCount"]
            let replacedAt: Double = row["replacedAt"]
            return HistoryEntry(changeCount: UInt64(changeCount), replacedAt: Date(timeIntervalSinceReferenceDate: replacedAt),
                                items: try fetchItems(db, where: "historyEntry = ?", [entries[index]], now: now))
        }
    }

    /// Deletes the history entries at `indexes` (as in ``history(now:)``, all counted before
    /// any is deleted) with their blobs, so their bytes leave the disk. Works on a full file
    /// system, as ``clearHistory()`` does.
    /// - Throws: `FerryModelError` `.notFound` naming the first index out of range; nothing is
    ///   deleted then.
    package func deleteHistory(_ indexes: [Int], now: Date = Date()) throws {
        try freeing { db in
            let entries = try liveHistoryEntryIDs(db, now: now)
            if let missing = indexes.first(where: { !entries.indices.contains($0) }) {
                throw Self.noHistoryEntry(missing, count: entries.count)
            }
            var garbage: [String] = []
            for id in Set(indexes.map { entries[$0] }) {
                garbage += try deleteHistoryEntry(db, id)
            }
            return ((), garbage: garbage)
        }
    }

    static func noHistoryEntry(_ index: Int, count: Int) -> FerryModelError {
        FerryModelError(.notFound, "there is no history entry \(index) (the history has \(count))")
    }

    /// Deletes one history entry and its items. Returns their blobs.
    func deleteHistoryEntry(_ db: Database, _ id: Int64) throws -> [String] {
        let garbage = try deleteItems(db, where: "historyEntry = ?", [id])
        try db.execute(sql: "DELETE FROM historyEntry WHERE id = ?", arguments: [id])
        return garbage
    }

    /// Drops history entries until the history fits ``historyBytes``: first every entry larger
    /// than the limit on its own, then the oldest. Returns their blobs.
    func trimHistoryBytes(_ db: Database) throws -> [String] {
        let rows = try Row.fetchAll(db, sql: """
            SELECT h.id, (SELECT COALESCE(SUM(r.size), 0) FROM item i JOIN representation r ON r.item = i.id
                          WHERE i.historyEntry = h.id AND r.storage IN ('inline', 'blob')) AS bytes
            FROM historyEntry h ORDER BY h.id DESC
            """)
        var kept: Int64 = 0
        var garbage: [String] = []
        for row in rows {
            let id: Int64 = row["id"], bytes: Int64 = row["bytes"]
            if bytes <= historyBytes - kept {
                kept += bytes
            } else {
                garbage += try deleteHistoryEntry(db, id)
                // An entry too large on its own leaves room for older ones; any other means
                // the history is full from here on.
                if bytes <= historyBytes { kept = historyBytes }
            }
        }
        return garbage
    }

    /// Whether the general pasteboard's current items are identical to `items`: the same number
    /// of items, each with the same representations in the same order (type and visibility),
    /// each with the same bytes: equal inline bytes, or blobs of equal size and equal XXH64
    /// checksum (recorded at write, so no file is read). A promised representation, or a blob
    /// without a recorded checksum, is never identical to anything.
    func currentItemsAreIdentical(_ db: Database, to items: [PreparedItem]) throws -> Bool {
        let rows = try Row.fetchAll(db, sql: """
            SELECT i.id, r.contentType, r.visibility, r.storage, r.size, r.data, r.checksum
            FROM item i LEFT JOIN representation r ON r.item = i.id
            WHERE i.pasteboard = ? ORDER BY i.position, r.position
            """, arguments: [Self.general])
        var current: [[Row]] = []
        var lastItem: String?
        for row in rows {
            let id: String = row["id"]
            if id != lastItem { current.append([]); lastItem = id }
            if row["contentType"] as String? != nil { current[current.count - 1].append(row) }
        }
        guard !items.isEmpty, current.count == items.count else { return false }
        for (stored, prepared) in zip(current, items) {
            guard stored.count == prepared.representations.count else { return false }
            for (row, new) in zip(stored, prepared.representations) {
                guard row["contentType"] as String == new.contentType.identifier,
                      row["visibility"] as String == new.visibility.rawValue,
                      row["storage"] as String == new.storage,
                      row["size"] as Int64? == new.size else { return false }
                switch new.storage {
                case "inline":
                    guard row["data"] as Data? == new.data else { return false }
                case "blob":
                    guard let checksum = new.checksum, row["checksum"] as Int64? == Int64(bitPattern: checksum) else { return false }
                default:
                    return false
                }
            }
        }
        return true
    }
}
