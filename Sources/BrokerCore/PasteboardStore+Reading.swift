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
    /// The names of every pasteboard, `general` first, then by name.
    package func pasteboards() throws -> [String] {
        try reading { db in
            try String.fetchAll(db, sql: "SELECT name FROM pasteboard ORDER BY name <> 'general', name")
        }
    }

    /// A pasteboard's change count.
    /// - Throws: `FerryModelError` `.notFound` for an unknown pasteboard, `.invalidArgument` for a bad name.
    package func changeCount(of pasteboard: String) throws -> UInt64 {
        try Self.validatePasteboardName(pasteboard)
        return try reading { db in
            guard let count = try Int64.fetchOne(db, sql: "SELECT changeCount FROM pasteboard WHERE name = ?",
                                                 arguments: [pasteboard]) else {
                throw FerryModelError(.notFound, "there is no pasteboard \"\(pasteboard)\"")
            }
            return UInt64(count)
        }
    }

    /// A pasteboard's unexpired items, in order, without their bytes.
    /// - Throws: `FerryModelError` `.notFound` for an unknown pasteboard, `.invalidArgument` for a bad name.
    package func items(in pasteboard: String, now: Date = Date()) throws -> [StoredItem] {
        try Self.validatePasteboardName(pasteboard)
        return try reading { db in
            try requirePasteboard(db, pasteboard)
            return try fetchItems(db, where: "pasteboard = ?", [pasteboard], now: now)
        }
    }

    /// A pasteboard's change count and unexpired items, read together (one consistent view).
    /// - Throws: `FerryModelError` `.notFound` for an unknown pasteboard, `.invalidArgument` for a bad name.
    package func contents(of pasteboard: String, now: Date = Date()) throws -> (changeCount: UInt64, items: [StoredItem]) {
        try Self.validatePasteboardName(pasteboard)
        return try reading { db in
            guard let count = try Int64.fetchOne(try db.cachedStatement(sql: "SELECT changeCount FROM pasteboard WHERE name = ?"),
                                                 arguments: [pasteboard]) else {
                throw FerryModelError(.notFound, "there is no pasteboard \"\(pasteboard)\"")
            }
            return (UInt64(count), try fetchItems(db, where: "pasteboard = ?", [pasteboard], now: now))
        }
    }

    /// One stored item (current or in history) by id, unless it has expired.
    /// - Throws: `FerryModelError` `.notFound` when there is no such unexpired item.
    package func item(_ id: UUID, now: Date = Date()) throws -> StoredItem {
        try reading { db in
            guard let item = try fetchItems(db, where: "id = ?", [id.uuidString], now: now).first else {
                throw FerryModelError(.notFound, "there is no item \(id)")
            }
            return item
        }
    }

    /// The general pasteboard's history, most recent first, without expired items (an entry
    /// whose items have all expired is left out).
    package func history(now: Date = Date()) throws -> [HistoryEntry] {
        try reading { db in
            let rows = try Row.fetchAll(db, sql: "SELECT id, changeCount, replacedAt FROM historyEntry ORDER BY id DESC")
            return try rows.compactMap { row -> HistoryEntry? in
                let id: Int64 = row["id"]
                let items = try fetchItems(db, where: "historyEntry = ?", [id], now: now)
                guard !items.isEmpty else { return nil }
                let changeCount: Int64 = row["changeCount"]
                let replacedAt: Double = row["replacedAt"]
                return HistoryEntry(changeCount: UInt64(changeCount), replacedAt: Date(timeIntervalSinceReferenceDate: replacedAt),
                                    items: items)
            }
        }
    }

    /// The bytes of a representation of a stored item (current or in history).
    ///
    /// A blob is served as it is while its file's identity (inode, ctime) is the one recorded
    /// when its checksum was known to hold. Otherwise (the file was written to, or put back from
    /// a backup or a copy) it is checksummed once: a match records the new identity and serves,
    /// a mismatch is `.unavailable`. A blob stored before checksums existed gets its checksum
    /// and identity at its first read.
    /// - Parameters:
    ///   - item: the item's id.
    ///   - representation: the representation's exact type.
    /// - Returns: the inline bytes, a read-only descriptor on the blob (the caller closes it), or
    ///   the owner to ask for promised bytes.
    /// - Throws: `FerryModelError` `.notFound` for an unknown or expired item or a type the item
    ///   does not have; `.unavailable` when the bytes were promised by an app that is gone, or
    ///   the blob file is damaged (another size or other bytes than stored, not a regular file).
    package func readData(item: UUID, representation: ContentType, now: Date = Date()) throws -> RepresentationData {
        let found = try reading { db -> (data: RepresentationData, blob: StoredBlob?) in
            let row = try Row.fetchOne(try db.cachedStatement(sql: """
                SELECT r.storage, r.data, r.blob, r.owner, r.size, r.checksum, r.blobInode, r.blobChangeTime,
                       i.expirationDate
                FROM item i LEFT JOIN representation r ON r.item = i.id AND r.contentType = ?
                WHERE i.id = ?
                """), arguments: [representation.identifier, item.uuidString])
            guard let row else { throw FerryModelError(.notFound, "there is no item \(item)") }
            if let expiration: Double = row["expirationDate"], expiration <= now.timeIntervalSinceReferenceDate {
                throw FerryModelError(.notFound, "item \(item) has expired")
            }
            guard let storage: String = row["storage"] else {
                throw FerryModelError(.notFound, "item \(item) has no \(representation.identifier) representation")
            }
            switch storage {
            case "inline":
                return (.bytes(row["data"] ?? Data()), nil)
            case "blob":
                let name: String = row["blob"]
                let (fd, size, identity) = try blobs.open(name, expectedSize: row["size"])
                let checksum: Int64? = row["checksum"]
                let inode: Int64? = row["blobInode"], changeTime: Int64? = row["blobChangeTime"]
                let recorded = inode.flatMap { inode in changeTime.map { BlobIdentity(inode: inode, changeTime: $0) } }
                guard checksum != nil, recorded == identity else {
                    return (.file(descriptor: fd, size: size),
                            StoredBlob(name: name, checksum: checksum.map { UInt64(bitPattern: $0) }, identity: identity))
                }
                return (.file(descriptor: fd, size: size), nil)
            case "promised":
                return (.promised(owner: row["owner"]), nil)
            default:
                throw FerryModelError(.unavailable,
                                      "the app that promised \(representation.identifier) is gone without handing it over")
            }
        }
        guard let blob = found.blob, case .file(let fd, let size) = found.data else { return found.data }
        // Checksummed off the database queue: other calls go on while a large blob is read. The
        // identity recorded is the one taken before the checksum, so a change made while it runs
        // gives the file another ctime and is checked at the next read.
        do {
            let actual = try blobs.checksum(of: fd, size: size)
            if let expected = blob.checksum, expected != actual {
                throw FerryModelError(.unavailable, "the representation's blob file is damaged: "
                                      + "its bytes changed since they were stored (checksum mismatch); it is not served")
            }
            try writing { db in
                try db.execute(sql: "UPDATE representation SET checksum = ?, blobInode = ?, blobChangeTime = ? WHERE blob = ?",
                               arguments: [Int64(bitPattern: actual), blob.identity.inode, blob.identity.changeTime, blob.name])
                return []
            }
        } catch {
            Glibc.close(fd)
            throw error
        }
        return found.data
    }

    /// A blob whose file must be checksummed before it is served: its recorded checksum (nil
    /// for a blob stored before checksums) and the identity its file has now.
    private struct StoredBlob {
        var name: String
        var checksum: UInt64?
        var identity: BlobIdentity
    }

    /// Loads the unexpired items matching `condition`, with their representations, in position order.
    func fetchItems(_ db: Database, where condition: String, _ arguments: StatementArguments,
                    now: Date) throws -> [StoredItem] {
        var all = arguments
        all += [now.timeIntervalSinceReferenceDate]
        let itemRows = try Row.fetchAll(try db.cachedStatement(sql: """
            SELECT id, localOnly, expirationDate, sourceAppID, sourceProcess, suggestedName, origin FROM item
            WHERE \(condition) AND (expirationDate IS NULL OR expirationDate > ?)
            ORDER BY position
            """), arguments: all)
        return try itemRows.map { row in
            let idString: String = row["id"]
            guard let id = UUID(uuidString: idString) else {
                throw FerryModelError.storage("bad item id \(idString) in the database")
            }
            let expiration: Double? = row["expirationDate"]
            let options = StoredItem.Options(localOnly: row["localOnly"],
                                             expirationDate: expiration.map(Date.init(timeIntervalSinceReferenceDate:)),
                                             origin: row["origin"])
            return StoredItem(id: id, options: options, sourceAppID: row["sourceAppID"], sourceProcess: row["sourceProcess"],
                              suggestedName: row["suggestedName"],
                              representations: try fetchRepresentations(db, item: idString))
        }
    }

    private func fetchRepresentations(_ db: Database, item: String) throws -> [StoredRepresentation] {
        let rows = try Row.fetchAll(try db.cachedStatement(sql: """
            SELECT contentType, visibility, size, storage, owner FROM representation WHERE item = ? ORDER BY position
            """), arguments: [item])
        return try rows.map { row in
            let identifier: String = row["contentType"]
            let type = try ContentType.stored(identifier)
            let storage: StoredRepresentation.Storage
            switch row["storage"] as String {
            case "inline": storage = .inline
            case "blob": storage = .blob
            case "promised": storage = .promised(owner: row["owner"])
            default: storage = .unavailable
            }
            return StoredRepresentation(contentType: type,
                                        visibility: ItemProvider.Visibility(rawValue: row["visibility"]) ?? .all,
                                        size: row["size"], storage: storage)
        }
    }
}
