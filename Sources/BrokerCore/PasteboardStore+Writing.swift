#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FerryModel
import GRDB

extension PasteboardStore {
    /// Replaces a pasteboard's items, creating the pasteboard if needed, and returns its new
    /// change count. Durable before it returns: the blobs are on disk, then the transaction
    /// commits with a WAL fsync.
    ///
    /// On `general`, the items replaced become the newest history entry (when there were any,
    /// and unless they are identical to the new ones: see ``currentItemsAreIdentical(_:to:)``);
    /// the oldest entries beyond ``historyLimit`` or ``historyBytes`` are dropped with their blobs.
    ///
    /// If any item is sensitive, the write is **volatile**: nothing of it is stored (no row, no
    /// blob, no history entry, file descriptors are not read) but it still replaces the stored
    /// items and increments the change count, so after a restart neither the old content nor the
    /// secret comes back. The broker keeps volatile items in memory.
    /// - Parameters:
    ///   - items: the new items, in order.
    ///   - pasteboard: the pasteboard's name.
    ///   - now: the time recorded on the history entry.
    ///   - durable: false commits without the WAL fsync (`synchronous = NORMAL` for this
    ///     transaction): the write survives a crash of ferryd but may be lost on a power failure,
    ///     when the store comes back with the items it had before. For items that only stand for
    ///     bytes elsewhere (another device's remote items, promised only), which a power failure
    ///     takes away anyway; blobs are still written durably.
    /// - Throws: `FerryModelError` `.invalidArgument` for a bad name, a type appearing twice in an
    ///   item, an empty promise owner, a reused item id or an unreadable descriptor; `.timeout`
    ///   for a descriptor that delivers nothing for ``descriptorTimeout``; `.storageFailed` for
    ///   disk failures (nothing is changed then).
    @discardableResult
    package func write(_ items: [NewItem], to pasteboard: String, now: Date = Date(), durable: Bool = true) throws -> UInt64 {
        try Self.validatePasteboardName(pasteboard)
        try Self.validate(items)
        let volatile = items.contains { $0.options.sensitive }
        let prepared = volatile ? [] : try prepare(items)
        let created = prepared.flatMap { $0.representations.compactMap(\.blob) }
        do {
            return try writing(durable: durable) { db in
                let garbage = try replaceItems(db, pasteboard: pasteboard, with: prepared, now: now)
                return (try incrementChangeCount(db, pasteboard), garbage: garbage)
            }
        } catch {
            blobs.remove(created)
            throw error
        }
    }

    /// Removes every item of a pasteboard (on `general` they go to history) and returns the new
    /// change count.
    /// - Throws: `FerryModelError` `.notFound` for an unknown pasteboard.
    @discardableResult
    package func clear(_ pasteboard: String, now: Date = Date()) throws -> UInt64 {
        try Self.validatePasteboardName(pasteboard)
        return try freeing { db in
            try requirePasteboard(db, pasteboard)
            let garbage = try replaceItems(db, pasteboard: pasteboard, with: [], now: now)
            return (try incrementChangeCount(db, pasteboard), garbage: garbage)
        }
    }

    /// Creates an empty named pasteboard unless it exists, durably.
    /// - Returns: true when it was created, false when it already existed.
    /// - Throws: `FerryModelError` `.invalidArgument` for a bad name.
    @discardableResult
    package func createPasteboard(_ pasteboard: String) throws -> Bool {
        try Self.validatePasteboardName(pasteboard)
        return try writing { db in
            try db.execute(sql: "INSERT OR IGNORE INTO pasteboard (name) VALUES (?)", arguments: [pasteboard])
            return (db.changesCount > 0, garbage: [])
        }
    }

    /// Increments a pasteboard's change count without touching its items (the broker announces
    /// an expiry this way) and returns the new count.
    /// - Throws: `FerryModelError` `.notFound` for an unknown pasteboard.
    @discardableResult
    package func incrementChangeCount(of pasteboard: String) throws -> UInt64 {
        try Self.validatePasteboardName(pasteboard)
        return try writing { db in
            try requirePasteboard(db, pasteboard)
            return (try incrementChangeCount(db, pasteboard), garbage: [])
        }
    }

    /// Deletes a named pasteboard with its items and blobs.
    /// - Throws: `FerryModelError` `.invalidArgument` for `general` or a bad name, `.notFound`
    ///   for an unknown pasteboard.
    package func removePasteboard(_ pasteboard: String) throws {
        try Self.validatePasteboardName(pasteboard)
        guard pasteboard != Self.general else {
            throw FerryModelError(.invalidArgument, "the general pasteboard cannot be removed")
        }
        try freeing { db in
            try requirePasteboard(db, pasteboard)
            let garbage = try deleteItems(db, where: "pasteboard = ?", [pasteboard])
            try db.execute(sql: "DELETE FROM pasteboard WHERE name = ?", arguments: [pasteboard])
            return ((), garbage: garbage)
        }
    }

    /// Moves history entry `index` (0 is the most recent, as in ``history(now:)``) back to the
    /// general pasteboard: a new write, so the current items become the newest history entry and
    /// the change count increments. The restored entry leaves the history.
    /// - Returns: the new change count.
    /// - Throws: `FerryModelError` `.notFound` when there is no such entry.
    @discardableResult
    package func restoreHistory(_ index: Int, now: Date = Date()) throws -> UInt64 {
        try writing { db in
            let entries = try liveHistoryEntryIDs(db, now: now)
            guard entries.indices.contains(index) else { throw Self.noHistoryEntry(index, count: entries.count) }
            let entry = entries[index]
            var garbage = try deleteItems(db, where: "historyEntry = ? AND expirationDate <= ?",
                                          [entry, now.timeIntervalSinceReferenceDate])
            garbage += try pushCurrentToHistory(db, now: now)
            try db.execute(sql: "UPDATE item SET historyEntry = NULL, pasteboard = ? WHERE historyEntry = ?",
                           arguments: [Self.general, entry])
            try db.execute(sql: "DELETE FROM historyEntry WHERE id = ?", arguments: [entry])
            garbage += try trimHistory(db)
            return (try incrementChangeCount(db, Self.general), garbage: garbage)
        }
    }

    /// Deletes the general pasteboard's whole history and its blobs.
    package func clearHistory() throws {
        try freeing { db in
            let garbage = try deleteItems(db, where: "historyEntry IS NOT NULL", [])
            try db.execute(sql: "DELETE FROM historyEntry")
            return ((), garbage: garbage)
        }
    }

    // MARK: - Steps of a write

    /// A representation ready to insert: its bytes are inline or already in a durable blob.
    struct PreparedRepresentation {
        var contentType: ContentType
        var visibility: ItemProvider.Visibility
        var size: Int64?
        var storage: String
        var data: Data?
        var blob: String?
        var owner: String?
        /// The blob's checksum and file identity (nil for other storage).
        var checksum: UInt64?
        var identity: BlobIdentity?

        mutating func store(_ written: WrittenBlob) {
            storage = "blob"
            blob = written.name
            size = written.size
            checksum = written.checksum
            identity = written.identity
        }

        /// The values of the blob columns `checksum, blobInode, blobChangeTime`.
        var blobColumns: [(any DatabaseValueConvertible)?] {
            [checksum.map { Int64(bitPattern: $0) }, identity?.inode, identity?.changeTime]
        }
    }

    struct PreparedItem {
        var item: NewItem
        var representations: [PreparedRepresentation]
    }

    static func validate(_ items: [NewItem]) throws {
        var ids: Set<UUID> = []
        for (index, item) in items.enumerated() {
            guard ids.insert(item.id).inserted else {
                throw FerryModelError(.invalidArgument, "item id \(item.id) appears twice", keyPath: "[\(index)].id")
            }
            var types: Set<ContentType> = []
            for (r, representation) in item.representations.enumerated() {
                let keyPath = "[\(index)].representations[\(r)]"
                guard types.insert(representation.contentType).inserted else {
                    throw FerryModelError(.invalidArgument, "\(representation.contentType.identifier) appears twice",
                                          keyPath: keyPath + ".type")
                }
                if case .promised(let owner, let size) = representation.data {
                    guard !owner.isEmpty else {
                        throw FerryModelError(.invalidArgument, "a promise needs an owner", keyPath: keyPath)
                    }
                    if let size, size < 0 {
                        throw FerryModelError(.invalidArgument, "must not be negative", keyPath: keyPath + ".estimatedSize")
                    }
                }
            }
        }
    }

    /// Puts every representation's bytes where they will live: inline, or a durable blob.
    /// On failure, the blobs already made are deleted.
    func prepare(_ items: [NewItem]) throws -> [PreparedItem] {
        var created: [String] = []
        do {
            return try items.map { item in
                PreparedItem(item: item, representations: try item.representations.map { representation in
                    let prepared = try prepare(representation.data, type: representation.contentType,
                                               visibility: representation.visibility)
                    if let blob = prepared.blob { created.append(blob) }
                    return prepared
                })
            }
        } catch {
            blobs.remove(created)
            throw error
        }
    }

    func prepare(_ source: RepresentationSource, type: ContentType,
                 visibility: ItemProvider.Visibility) throws -> PreparedRepresentation {
        var result = PreparedRepresentation(contentType: type, visibility: visibility, size: nil, storage: "inline")
        switch source {
        case .bytes(let data):
            result.size = Int64(data.count)
            if data.count <= Self.inlineLimit {
                result.data = data
            } else {
                result.store(try blobs.write(data))
            }
        case .fileDescriptor(let fd), .fileRange(let fd, offset: _, length: _):
            var reader = DescriptorReader(fd, timeout: descriptorTimeout)
            if case .fileRange(_, let offset, let length) = source {
                guard (offset ?? 0) >= 0, (length ?? 0) >= 0 else {
                    throw FerryModelError(.invalidArgument, "a byte range must not be negative")
                }
                reader = DescriptorReader(fd, offset: offset, length: length, timeout: descriptorTimeout)
            }
            let (head, atEnd) = try reader.read(upTo: Self.inlineLimit + 1)
            if atEnd {
                result.size = Int64(head.count)
                result.data = head
            } else {
                result.store(try blobs.write(prefix: head, copyingFrom: &reader))
            }
        case .promised(let owner, let estimatedSize):
            result.storage = "promised"
            result.owner = owner
            result.size = estimatedSize
        }
        return result
    }

    /// Replaces the items of `pasteboard` (created if missing) inside a transaction. Returns the
    /// blobs that became garbage.
    func replaceItems(_ db: Database, pasteboard: String, with items: [PreparedItem], now: Date) throws -> [String] {
        try db.execute(sql: "INSERT OR IGNORE INTO pasteboard (name) VALUES (?)", arguments: [pasteboard])
        var garbage: [String]
        if pasteboard == Self.general {
            // Copying what is already there again makes no second history entry.
            garbage = try currentItemsAreIdentical(db, to: items)
                ? try deleteItems(db, where: "pasteboard = ?", [pasteboard])
                : try pushCurrentToHistory(db, now: now)
        } else {
            garbage = try deleteItems(db, where: "pasteboard = ?", [pasteboard])
        }
        for (position, prepared) in items.enumerated() {
            let item = prepared.item
            let taken = try Bool.fetchOne(db, sql: "SELECT 1 FROM item WHERE id = ?", arguments: [item.id.uuidString])
            guard taken == nil else {
                throw FerryModelError(.invalidArgument, "item id \(item.id) is already stored", keyPath: "[\(position)].id")
            }
            try db.cachedStatement(sql: """
                INSERT INTO item (id, pasteboard, position, localOnly, expirationDate, sourceAppID, suggestedName, origin,
                                  sourceProcess)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """).execute(arguments: [item.id.uuidString, pasteboard, position, item.options.localOnly,
                                 item.options.expirationDate?.timeIntervalSinceReferenceDate, item.sourceAppID, item.suggestedName,
                                 item.options.origin, item.sourceProcess])
            for (index, r) in prepared.representations.enumerated() {
                try db.cachedStatement(sql: """
                    INSERT INTO representation (item, position, contentType, visibility, size, storage, data, blob, owner,
                                                checksum, blobInode, blobChangeTime)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """).execute(arguments: StatementArguments([item.id.uuidString, index, r.contentType.identifier,
                                                                r.visibility.rawValue, r.size, r.storage, r.data, r.blob,
                                                                r.owner] + r.blobColumns))
            }
        }
        garbage += try trimHistory(db)
        return garbage
    }

    /// Moves the general pasteboard's current items into a new history entry (none when there
    /// are no items or the history limit is 0, in which case they are deleted).
    func pushCurrentToHistory(_ db: Database, now: Date) throws -> [String] {
        let garbage = try deleteItems(db, where: "pasteboard = ? AND expirationDate <= ?",
                                      [Self.general, now.timeIntervalSinceReferenceDate])
        let count = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item WHERE pasteboard = ?",
                                     arguments: [Self.general]) ?? 0
        guard count > 0 else { return garbage }
        guard historyLimit > 0 else { return garbage + (try deleteItems(db, where: "pasteboard = ?", [Self.general])) }
        let changeCount = try Int64.fetchOne(db, sql: "SELECT changeCount FROM pasteboard WHERE name = ?",
                                             arguments: [Self.general]) ?? 0
        try db.execute(sql: "INSERT INTO historyEntry (changeCount, replacedAt) VALUES (?, ?)",
                       arguments: [changeCount, now.timeIntervalSinceReferenceDate])
        try db.execute(sql: "UPDATE item SET pasteboard = NULL, historyEntry = ? WHERE pasteboard = ?",
                       arguments: [db.lastInsertedRowID, Self.general])
        return garbage
    }

    /// Drops the oldest history entries beyond the limit, then those past ``historyBytes``
    /// (``trimHistoryBytes(_:)``). Returns their blobs.
    func trimHistory(_ db: Database) throws -> [String] {
        let old = "SELECT id FROM historyEntry ORDER BY id DESC LIMIT -1 OFFSET \(historyLimit)"
        let garbage = try deleteItems(db, where: "historyEntry IN (\(old))", [])
        try db.execute(sql: "DELETE FROM historyEntry WHERE id IN (\(old))")
        return garbage + (try trimHistoryBytes(db))
    }

    /// Deletes the items matching `condition` (their representations cascade). Returns their blobs.
    func deleteItems(_ db: Database, where condition: String, _ arguments: StatementArguments) throws -> [String] {
        let garbage = try String.fetchAll(db, sql: """
            SELECT blob FROM representation WHERE blob IS NOT NULL AND item IN (SELECT id FROM item WHERE \(condition))
            """, arguments: arguments)
        try db.execute(sql: "DELETE FROM item WHERE \(condition)", arguments: arguments)
        return garbage
    }

    func incrementChangeCount(_ db: Database, _ pasteboard: String) throws -> UInt64 {
        try db.execute(sql: "UPDATE pasteboard SET changeCount = changeCount + 1 WHERE name = ?", arguments: [pasteboard])
        return UInt64(try Int64.fetchOne(db, sql: "SELECT changeCount FROM pasteboard WHERE name = ?",
                                         arguments: [pasteboard]) ?? 0)
    }

    func requirePasteboard(_ db: Database, _ pasteboard: String) throws {
        guard try Bool.fetchOne(db, sql: "SELECT 1 FROM pasteboard WHERE name = ?", arguments: [pasteboard]) != nil else {
            throw FerryModelError(.notFound, "there is no pasteboard \"\(pasteboard)\"")
        }
    }

    /// The ids of the history entries that still have unexpired items, most recent first.
    func liveHistoryEntryIDs(_ db: Database, now: Date) throws -> [Int64] {
        try Int64.fetchAll(db, sql: """
            SELECT id FROM historyEntry h WHERE EXISTS (
                SELECT 1 FROM item WHERE historyEntry = h.id AND (expirationDate IS NULL OR expirationDate > ?))
            ORDER BY id DESC
            """, arguments: [now.timeIntervalSinceReferenceDate])
    }
}
