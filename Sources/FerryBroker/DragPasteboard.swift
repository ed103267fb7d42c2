#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FerryModel

/// Who may use a drag pasteboard, by unique bus name; the drag service keeps it current.
///
/// Checked before anything else a `org.ferry.Pasteboard1` method does on a drag pasteboard (after
/// the same-uid check), without a hop to an actor. Everybody outside the sets is PermissionDenied.
public struct DragPasteboardAccess: Sendable, Hashable {
    /// May call `SetItems` (the source app, the initiator), while ``acceptsWrites`` holds.
    public var writers: Set<String>
    /// May call `Items` and `DetectPatterns` (the source app, the initiator, entered targets).
    public var metadataReaders: Set<String>
    /// May call `Read` and `FinishTransfer` (the source app; the performer during `PerformDrop`).
    public var contentReaders: Set<String>
    /// Whether writers may still write: false once the drop starts.
    public var acceptsWrites: Bool

    /// Makes an access rule.
    /// - Parameters:
    ///   - writers: unique names that may write.
    ///   - metadataReaders: unique names that may read metadata.
    ///   - contentReaders: unique names that may read bytes.
    ///   - acceptsWrites: whether writes are taken now.
    public init(writers: Set<String> = [], metadataReaders: Set<String> = [], contentReaders: Set<String> = [],
                acceptsWrites: Bool = true) {
        self.writers = writers
        self.metadataReaders = metadataReaders
        self.contentReaders = contentReaders
        self.acceptsWrites = acceptsWrites
    }

    /// Whether `uniqueName` plays any part in the drag.
    func isParty(_ uniqueName: String) -> Bool {
        writers.contains(uniqueName) || metadataReaders.contains(uniqueName) || contentReaders.contains(uniqueName)
    }

    /// Everyone playing a part in the drag (the pasteboard's change signals go to them only).
    var parties: Set<String> {
        writers.union(metadataReaders).union(contentReaders)
    }
}

/// A drag pasteboard (`org.ferry.drag.<n>`): who may use it and its items, in memory only.
///
/// Never in the store, never listed, no history; its change count starts at 0 and lives here.
struct DragPasteboard: Sendable {
    /// Every drag pasteboard's name starts with this, followed by the drag's number.
    static let namePrefix = PasteboardName.reservedPrefix + "drag."
    /// The bytes a drag pasteboard holds, in all (larger representations must be promised).
    static let maximumHeldSize = 16 << 20

    /// What a method on a drag pasteboard needs its caller to be.
    enum Role: Sendable {
        /// `SetItems`.
        case writer
        /// `Items`, `DetectPatterns`.
        case metadataReader
        /// `Read`, `FinishTransfer`.
        case contentReader
        /// Anything else (a method refused on drag pasteboards is InvalidArgument to a party).
        case party

        /// What the role lets one do, for messages ("only the parties of drag 7 may …").
        var action: String {
            switch self {
            case .writer: "write its items"
            case .metadataReader: "see its items"
            case .contentReader: "read its items"
            case .party: "use its pasteboard"
            }
        }
    }

    /// Who may use it.
    var access: DragPasteboardAccess
    /// Its items and held bytes (change count from 0).
    var content = VolatileContent(changeCount: 0, items: [], sensitive: [], bytes: [:])

    /// Whether `name` is a drag pasteboard's name: the prefix and a decimal number.
    static func isDragName(_ name: String) -> Bool {
        number(of: name) != nil
    }

    /// The drag's number in a drag pasteboard's name ("7" in `org.ferry.drag.7`), nil for other names.
    static func number(of name: String) -> Substring? {
        guard name.hasPrefix(namePrefix) else { return nil }
        let number = name.dropFirst(namePrefix.count)
        guard !number.isEmpty, number.utf8.count <= 20, number.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return number
    }

    /// Whether `uniqueName` may act as `role` now.
    func permits(_ role: Role, _ uniqueName: String) -> Bool {
        switch role {
        case .writer: access.writers.contains(uniqueName)
        case .metadataReader: access.metadataReaders.contains(uniqueName)
        case .contentReader: access.contentReaders.contains(uniqueName)
        case .party: access.isParty(uniqueName)
        }
    }
}
