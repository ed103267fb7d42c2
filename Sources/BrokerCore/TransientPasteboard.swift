#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FerryModel

/// Who may use a transient pasteboard, by unique bus name; the drag or share service keeps it current.
///
/// Checked before anything else a `org.ferry.Pasteboard1` method does on a transient pasteboard
/// (after the same-uid check), without a hop to an actor. Everybody outside the sets is PermissionDenied.
package struct TransientPasteboardAccess: Sendable, Hashable {
    /// May call `SetItems` (a drag's source app and initiator, the sharer), while ``acceptsWrites`` holds.
    package var writers: Set<String>
    /// May call `Items` and `DetectPatterns` (writers, a drag's entered targets, a share's activity apps).
    package var metadataReaders: Set<String>
    /// May call `Read` and `FinishTransfer` (the source; the performer during `PerformDrop` or `PerformActivity`).
    package var contentReaders: Set<String>
    /// Whether writers may still write: false once the drop or the activity starts.
    package var acceptsWrites: Bool

    /// Makes an access rule.
    /// - Parameters:
    ///   - writers: unique names that may write.
    ///   - metadataReaders: unique names that may read metadata.
    ///   - contentReaders: unique names that may read bytes.
    ///   - acceptsWrites: whether writes are taken now.
    package init(writers: Set<String> = [], metadataReaders: Set<String> = [], contentReaders: Set<String> = [],
                acceptsWrites: Bool = true) {
        self.writers = writers
        self.metadataReaders = metadataReaders
        self.contentReaders = contentReaders
        self.acceptsWrites = acceptsWrites
    }

    /// Whether `uniqueName` plays any part in the drag or share.
    func isParty(_ uniqueName: String) -> Bool {
        writers.contains(uniqueName) || metadataReaders.contains(uniqueName) || contentReaders.contains(uniqueName)
    }

    /// Everyone playing a part in the drag or share (the pasteboard's change signals go to them only).
    package var parties: Set<String> {
        writers.union(metadataReaders).union(contentReaders)
    }
}

/// A transient pasteboard — a drag's (`org.ferry.drag.<n>`) or a share's (`org.ferry.share.<n>`):
/// who may use it and its items, in memory only.
///
/// Never in the store, never listed, no history; its change count starts at 0 and lives here.
package struct TransientPasteboard: Sendable {
    /// What a transient pasteboard carries the items of.
    package enum Kind: String, Sendable, CaseIterable {
        /// A drag session's items.
        case drag
        /// A share's activity items.
        case share

        /// Every name of this kind starts with this, followed by the drag's or share's number.
        var namePrefix: String { PasteboardName.reservedPrefix + rawValue + "." }

        /// Why writes stop, for messages.
        package var writesEnded: String {
            switch self {
            case .drag: "its drop has started"
            case .share: "its activity has started"
            }
        }

        /// The pasteboard's name for the drag or share numbered `number`.
        package func name(_ number: Int) -> String { namePrefix + String(number) }
    }

    /// The bytes a transient pasteboard holds, in all (larger representations must be promised).
    package static let maximumHeldSize = 16 << 20

    /// What a method on a transient pasteboard needs its caller to be.
    package enum Role: Sendable {
        /// `SetItems`.
        case writer
        /// `Items`, `DetectPatterns`.
        case metadataReader
        /// `Read`, `FinishTransfer`.
        case contentReader
        /// Anything else (a method refused on transient pasteboards is InvalidArgument to a party).
        case party

        /// What the role lets one do, for messages ("only the parties of drag 7 may …").
        package var action: String {
            switch self {
            case .writer: "write its items"
            case .metadataReader: "see its items"
            case .contentReader: "read its items"
            case .party: "use its pasteboard"
            }
        }
    }

    /// Who may use it.
    package var access: TransientPasteboardAccess
    /// Its items and held bytes (change count from 0).
    package var content = VolatileContent(changeCount: 0, items: [], sensitive: [], bytes: [:])

    /// A transient pasteboard open to `access`, empty.
    package init(access: TransientPasteboardAccess) {
        self.access = access
    }

    /// What a transient pasteboard's name says: its kind and number ("share 3" for
    /// `org.ferry.share.3`), or nil for any other name.
    package static func parse(_ name: String) -> (kind: Kind, number: Substring)? {
        for kind in Kind.allCases where name.hasPrefix(kind.namePrefix) {
            let number = name.dropFirst(kind.namePrefix.count)
            guard !number.isEmpty, number.utf8.count <= 20, number.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            return (kind, number)
        }
        return nil
    }

    /// "drag 7" or "share 3" for a transient pasteboard's name, for messages; nil for other names.
    package static func owner(of name: String) -> String? {
        parse(name).map { "\($0.kind.rawValue) \($0.number)" }
    }

    /// Whether `uniqueName` may act as `role` now.
    package func permits(_ role: Role, _ uniqueName: String) -> Bool {
        switch role {
        case .writer: access.writers.contains(uniqueName)
        case .metadataReader: access.metadataReaders.contains(uniqueName)
        case .contentReader: access.contentReaders.contains(uniqueName)
        case .party: access.isParty(uniqueName)
        }
    }
}
