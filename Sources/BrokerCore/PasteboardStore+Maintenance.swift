#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import FerryModel
import GRDB

extension PasteboardStore {
    /// Deletes every item (current or in history) whose expiration date is at or before `now`,
    /// with its blobs, and history entries left empty. Returns the pasteboards that lost items
    /// (the broker announces their change; their change counts are not incremented here).
    @discardableResult
    package func removeExpired(now: Date = Date()) throws -> Set<String> {
        try writing { db in
            let limit = now.timeIntervalSinceReferenceDate
            let touched = Set(try String.fetchAll(db, sql: """
                SELECT DISTINCT pasteboard FROM item WHERE pasteboard IS NOT NULL AND expirationDate <= ?
                """, arguments: [limit]))
            let garbage = try deleteItems(db, where: "expirationDate <= ?", [limit])
            try db.execute(sql: "DELETE FROM historyEntry WHERE id NOT IN (SELECT historyEntry FROM item WHERE historyEntry IS NOT NULL)")
            return (touched, garbage: garbage)
        }
    }

    /// The earliest expiration date of any stored item, so the broker can schedule the next
    /// ``removeExpired(now:)``; nil when nothing expires.
    package func nextExpiration() throws -> Date? {
        try reading { db in
            try Double.fetchOne(db, sql: "SELECT MIN(expirationDate) FROM item").map(Date.init(timeIntervalSinceReferenceDate:))
        }
    }

    /// Records a paste. The log keeps the last ``pasteLogLimit`` records.
    ///
    /// Logged with `synchronous = NORMAL`: the record survives a crash of ferryd (kill -9) but
    /// may be lost on a power failure, so a paste costs no fsync.
    package func logPaste(_ record: PasteRecord) throws {
        try logPastes([record])
    }

    /// Records several pastes, in order, in one transaction (as ``logPaste(_:)``).
    package func logPastes(_ records: [PasteRecord]) throws {
        guard !records.isEmpty else { return }
        try loggingWrite { db in
            try db.cachedStatement(sql: "PRAGMA synchronous = NORMAL").execute()
            defer { try? db.cachedStatement(sql: "PRAGMA synchronous = FULL").execute() }
            try db.inTransaction {
                let insert = try db.cachedStatement(sql: """
                    INSERT INTO pasteLog (timestamp, appID, uniqueName, uid, pid, process, pasteboard, itemIndex, contentType,
                                          consent, writerProcess, historyEntry)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
                for record in records {
                    try insert.execute(arguments: [record.timestamp.timeIntervalSinceReferenceDate, record.appID,
                                                   record.uniqueName, Int64(record.uid), record.pid, record.process, record.pasteboard,
                                                   record.itemIndex, record.contentType.identifier, record.consent,
                                                   record.writerProcess, record.historyEntry.map { Int64($0) }])
                }
                try db.cachedStatement(sql: "DELETE FROM pasteLog WHERE id <= ?")
                    .execute(arguments: [db.lastInsertedRowID - Int64(Self.pasteLogLimit)])
                return .commit
            }
        }
    }

    private func loggingWrite(_ body: (Database) throws -> Void) throws {
        do {
            try database.writeWithoutTransaction(body)
        } catch {
            throw FerryModelError.storage("cannot log a paste: \(error)")
        }
    }

    /// The most recent paste records, newest first.
    /// - Parameter limit: at most this many.
    package func pasteLog(limit: Int = 100) throws -> [PasteRecord] {
        try reading { db in
            try Row.fetchAll(db, sql: """
                SELECT timestamp, appID, uniqueName, uid, pid, process, pasteboard, itemIndex, contentType, consent,
                       writerProcess, historyEntry
                FROM pasteLog ORDER BY id DESC LIMIT ?
                """, arguments: [max(0, limit)]).map { row in
                let identifier: String = row["contentType"]
                let type = try ContentType.stored(identifier)
                let uid: Int64 = row["uid"]
                return PasteRecord(appID: row["appID"], uniqueName: row["uniqueName"], uid: UInt32(truncatingIfNeeded: uid),
                                   pid: row["pid"], process: row["process"], writerProcess: row["writerProcess"],
                                   historyEntry: row["historyEntry"], pasteboard: row["pasteboard"], itemIndex: row["itemIndex"],
                                   contentType: type, timestamp: Date(timeIntervalSinceReferenceDate: row["timestamp"]),
                                   consent: row["consent"])
            }
        }
    }

    /// Checks the database (`PRAGMA integrity_check` and foreign keys) and that every referenced
    /// blob exists. Returns the problems found; empty means consistent.
    package func checkIntegrity() throws -> [String] {
        try reading { db in
            var problems = try String.fetchAll(db, sql: "PRAGMA integrity_check").filter { $0 != "ok" }
            if try Row.fetchOne(db, sql: "PRAGMA foreign_key_check") != nil {
                problems.append("foreign key violations")
            }
            for name in try String.fetchAll(db, sql: "SELECT blob FROM representation WHERE blob IS NOT NULL")
            where access(blobs.path(name), F_OK) != 0 {
                problems.append("blob \(name) is missing")
            }
            return problems
        }
    }
}
