#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FerryModel

/// An item as the store keeps it: identity, options, provenance and its representations'
/// metadata. Bytes are read separately with ``PasteboardStore/readData(item:representation:)``.
package struct StoredItem: Sendable, Hashable, Identifiable {
    /// Options that travel with an item (Apple's `UIPasteboard.OptionsKey`, plus `sensitive` and
    /// `origin`).
    package struct Options: Sendable, Hashable {
        /// The item never leaves this machine.
        package var localOnly: Bool
        /// After this instant the item is gone for everyone.
        package var expirationDate: Date?
        /// A secret (a password manager's copy): never written to disk, never in history.
        package var sensitive: Bool
        /// Where the item came from outside Ferry, as its writer says (`desktop:CLIPBOARD` for
        /// ferry-bridge's import of the desktop's clipboard); nil for an ordinary copy. Printable
        /// ASCII, at most ``StoredItem/maximumOriginLength`` bytes.
        package var origin: String?

        /// Makes options; the defaults are those of an ordinary copy.
        package init(localOnly: Bool = false, expirationDate: Date? = nil, sensitive: Bool = false, origin: String? = nil) {
            self.localOnly = localOnly
            self.expirationDate = expirationDate
            self.sensitive = sensitive
            self.origin = origin
        }
    }

    /// The item's identity, stable across restarts and through history.
    package var id: UUID
    /// The item's options. `sensitive` is always false here: sensitive items are never stored.
    package var options: Options
    /// The app id of the app that wrote the item, nil when unknown (the CLI).
    package var sourceAppID: String?
    /// The writer's process name (its `/proc/PID/comm` when it copied), nil when the broker could
    /// not learn it and for items stored before it kept them.
    package var sourceProcess: String?
    /// The item's suggested name (a file name without extension).
    package var suggestedName: String?
    /// The representations, highest fidelity first.
    package var representations: [StoredRepresentation]

    /// Makes a stored item.
    package init(id: UUID, options: Options = Options(), sourceAppID: String? = nil, sourceProcess: String? = nil,
                suggestedName: String? = nil, representations: [StoredRepresentation]) {
        self.id = id
        self.options = options
        self.sourceAppID = sourceAppID
        self.sourceProcess = sourceProcess
        self.suggestedName = suggestedName
        self.representations = representations
    }

    /// The longest `origin` an item may carry, in bytes.
    package static let maximumOriginLength = 64

    /// Whether `origin` is one an item may carry: 1–64 bytes of printable ASCII (space to `~`).
    package static func isValidOrigin(_ origin: String) -> Bool {
        let bytes = origin.utf8
        return !bytes.isEmpty && bytes.count <= maximumOriginLength && bytes.allSatisfy { (0x20...0x7E).contains($0) }
    }

    /// Whether the item has expired at `now`.
    package func isExpired(at now: Date) -> Bool {
        guard let expirationDate = options.expirationDate else { return false }
        return expirationDate <= now
    }

    /// The item's metadata as other processes are told it (`ItemProvider.Metadata`).
    package var metadata: ItemProvider.Metadata {
        ItemProvider.Metadata(representations: representations.map(\.info), suggestedName: suggestedName)
    }
}

/// One entry of the general pasteboard's history: the items a write replaced.
package struct HistoryEntry: Sendable, Hashable {
    /// The general pasteboard's change count while these items were current.
    package var changeCount: UInt64
    /// When the items were replaced.
    package var replacedAt: Date
    /// The items, in their pasteboard order.
    package var items: [StoredItem]

    /// Makes a history entry.
    package init(changeCount: UInt64, replacedAt: Date, items: [StoredItem]) {
        self.changeCount = changeCount
        self.replacedAt = replacedAt
        self.items = items
    }
}

/// One representation of a stored item: its type, visibility, size and where its bytes are.
package struct StoredRepresentation: Sendable, Hashable {
    /// Where a representation's bytes are.
    package enum Storage: Sendable, Hashable {
        /// In the database (small representations).
        case inline
        /// In a file under the state directory's `blobs/` (large representations).
        case blob
        /// Not held: the app whose bus name is `owner` serves them on demand.
        case promised(owner: String)
        /// Promised by an app that went away without handing the bytes over; reading them
        /// fails with `Unavailable`.
        case unavailable
    }

    /// The type of the bytes.
    package var contentType: ContentType
    /// Who may see the representation.
    package var visibility: ItemProvider.Visibility
    /// The size in bytes: exact when held, the source's estimate (or nil) when promised.
    package var size: Int64?
    /// Where the bytes are.
    package var storage: Storage

    /// Makes a stored representation.
    package init(contentType: ContentType, visibility: ItemProvider.Visibility = .all, size: Int64?, storage: Storage) {
        self.contentType = contentType
        self.visibility = visibility
        self.size = size
        self.storage = storage
    }

    /// Whether the store holds the bytes (inline or blob).
    package var isHeld: Bool {
        switch storage {
        case .inline, .blob: true
        case .promised, .unavailable: false
        }
    }

    /// The representation's metadata as other processes are told it.
    package var info: ItemProvider.RepresentationInfo {
        ItemProvider.RepresentationInfo(contentType: contentType, visibility: visibility, estimatedSize: size)
    }
}

extension ContentType {
    /// The type an identifier read back from the database names. An identifier this process has
    /// no declaration for (another app's exported type) is kept as it is, as on the wire.
    static func stored(_ identifier: String) throws -> ContentType {
        guard let type = ContentType(importedAs: identifier) else {
            throw FerryModelError.storage("bad content type \(identifier) in the database")
        }
        return type
    }
}
