#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FerryModel

/// One paste, as logged: who read what, from where, when.
public struct PasteRecord: Sendable, Hashable {
    /// The reader's app id, nil when it has none (the CLI).
    public var appID: String?
    /// The reader's unique bus name (`:1.42`).
    public var uniqueName: String
    /// The reader's uid.
    public var uid: UInt32
    /// The reader's pid.
    public var pid: Int32
    /// The pasteboard read from.
    public var pasteboard: String
    /// The index of the item read.
    public var itemIndex: Int
    /// The type delivered.
    public var contentType: ContentType
    /// When the paste happened.
    public var timestamp: Date

    /// Makes a paste record.
    public init(appID: String?, uniqueName: String, uid: UInt32, pid: Int32, pasteboard: String, itemIndex: Int,
                contentType: ContentType, timestamp: Date = Date()) {
        self.appID = appID
        self.uniqueName = uniqueName
        self.uid = uid
        self.pid = pid
        self.pasteboard = pasteboard
        self.itemIndex = itemIndex
        self.contentType = contentType
        self.timestamp = timestamp
    }
}
