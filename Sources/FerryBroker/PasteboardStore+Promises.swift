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
    public func fulfillPromise(item: UUID, representation: ContentType, data: RepresentationSource,
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
                    UPDATE representation SET storage = ?, data = ?, blob = ?, owner = NULL, size = ?
                    WHERE item = ? AND contentType = ?
                    """, arguments: [prepared.storage, prepared.data, prepared.blob, prepared.size,
                                     item.uuidString, representation.identifier])
                return []
            }
        } catch {
            if let blob = prepared.blob { blobs.remove([blob]) }
            throw error
        }
    }

    /// Marks every representation promised by `owner` as unavailable (the owner left the bus
    /// without handing them over). Returns how many it marked.
    @discardableResult
    public func dropPromises(of owner: String) throws -> Int {
        try writing { db in
            try db.execute(sql: "UPDATE representation SET storage = 'unavailable', owner = NULL WHERE owner = ?",
                           arguments: [owner])
            return (db.changesCount, garbage: [])
        }
    }

    /// Every (item, type) still promised by `owner`, for the broker to ask it to hand them over.
    public func promises(of owner: String) throws -> [(item: UUID, contentType: ContentType)] {
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
