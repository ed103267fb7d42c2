import DBus
import FerryBus
import FerryModel
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One item on a pasteboard as its metadata describes it: types, sizes and names, never bytes.
/// Reading it is not a paste.
public struct PasteboardItem: Sendable, Hashable {
    /// The id the broker gave the item when it was written.
    public var id: UUID
    /// Its representations (highest fidelity first) and suggested name.
    public var metadata: ItemProvider.Metadata
    /// Whether the item never leaves this machine.
    public var localOnly: Bool
    /// When the item is removed for everyone, if it expires.
    public var expirationDate: Date?
    /// The app id of the registered app that wrote it; nil when an unregistered client did.
    public var sourceAppID: String?
    /// The types whose bytes the broker does not hold: the source app serves them on demand.
    public var promisedTypes: Set<ContentType>
    /// Whether the item was written as sensitive (kept in memory only, never in history).
    public var isSensitive: Bool
    /// Where the item came from outside Ferry, as its writer said (`desktop:CLIPBOARD` for
    /// ferry-bridge's import of the desktop's clipboard); nil for an ordinary copy.
    public var origin: String?
    /// In `history()` only: the first non-blank line of the item's text, trimmed, at most 200
    /// characters, control characters as they are (escape them before printing); nil without
    /// held text.
    public var preview: String?
    /// In `history()` only: the pixel size of the item's first image, read from its header by
    /// the broker; nil when unknown.
    public var pixelSize: ImageDimensions?

    /// Makes an item description.
    public init(id: UUID, metadata: ItemProvider.Metadata, localOnly: Bool = false, expirationDate: Date? = nil,
                sourceAppID: String? = nil, promisedTypes: Set<ContentType> = [], isSensitive: Bool = false,
                origin: String? = nil) {
        self.id = id
        self.metadata = metadata
        self.localOnly = localOnly
        self.expirationDate = expirationDate
        self.sourceAppID = sourceAppID
        self.promisedTypes = promisedTypes
        self.isSensitive = isSensitive
        self.origin = origin
    }

    /// The types in fidelity order.
    public var contentTypes: [ContentType] { metadata.contentTypes }

    /// Reads the metadata dictionary `Items` and `History` give.
    /// - Throws: `FerryError` `.invalidArgument` naming the malformed key.
    init(dbus dictionary: [String: DBusValue]) throws(FerryError) {
        let wire: [String: WireValue]
        do {
            wire = try [String: WireValue](dbusValue: dictionary.dbusValue)
            metadata = try ItemProvider.Metadata(wireDictionary: wire)
        } catch {
            throw FerryError(.invalidArgument, "the broker sent malformed item metadata: \(error)")
        }
        guard let text = wire["id"]?.stringValue, let id = UUID(uuidString: text) else {
            throw FerryError(.invalidArgument, "the broker sent an item without a valid id")
        }
        self.id = id
        localOnly = wire["localOnly"]?.boolValue ?? false
        expirationDate = wire["expirationDate"]?.integerValue.map(WireBridge.date(microseconds:))
        sourceAppID = wire["sourceAppID"]?.stringValue
        var promised: Set<ContentType> = []
        if case .array(let entries)? = wire["representations"] {
            for (entry, info) in zip(entries, metadata.representations) where entry.dictionaryValue?["promised"]?.boolValue == true {
                promised.insert(info.contentType)
            }
        }
        promisedTypes = promised
        isSensitive = wire["sensitive"]?.boolValue ?? false
        origin = wire["origin"]?.stringValue
        preview = wire["preview"]?.stringValue
        if let width = wire["pixelWidth"]?.integerValue, let height = wire["pixelHeight"]?.integerValue,
           let width = Int(exactly: width), let height = Int(exactly: height), width > 0, height > 0 {
            pixelSize = ImageDimensions(width: width, height: height)
        }
    }
}

/// A previous content of the general pasteboard.
public struct PasteboardHistoryEntry: Sendable, Hashable {
    /// The change count the pasteboard had while these items were current.
    public var changeCount: UInt64
    /// When these items were replaced.
    public var replacedAt: Date
    /// The items' metadata.
    public var items: [PasteboardItem]

    /// Makes a history entry.
    public init(changeCount: UInt64, replacedAt: Date, items: [PasteboardItem]) {
        self.changeCount = changeCount
        self.replacedAt = replacedAt
        self.items = items
    }
}

/// One paste, as the broker's paste log records it.
public struct PasteLogEntry: Sendable, Hashable {
    /// When the paste happened.
    public var timestamp: Date
    /// The reader's app id; nil for a caller that is not a registered app (the CLI, a script).
    public var appID: String?
    /// The reader's unique bus name.
    public var uniqueName: String
    /// The reader's user id.
    public var uid: UInt32
    /// The reader's process id.
    public var pid: Int32
    /// The reader's process name (`/proc/PID/comm` when it pasted); nil when the broker could not
    /// learn it, and for entries a broker older than `org.ferry.Broker1` Version 4 logged.
    public var process: String?
    /// The writer's process name: who copied the item read (`/proc/PID/comm` when it copied);
    /// nil when the broker could not learn it, and for items and entries of a broker older than
    /// `org.ferry.Broker1` Version 8.
    public var writerProcess: String?
    /// The history entry read (0 = newest when it was read) for a read of history, as `ferry
    /// history show` makes; nil for an ordinary paste of the current items.
    public var historyEntry: Int?
    /// The pasteboard read.
    public var pasteboard: String
    /// The index of the item read.
    public var item: Int
    /// The type delivered.
    public var type: ContentType
    /// How the user answered when the read asked for consent (`allowed`, `denied`, `timed-out`,
    /// `withdrawn`; only an allowed read delivered `type`); nil when nobody was asked.
    public var consent: String?

    /// Makes a log entry.
    public init(timestamp: Date, appID: String?, uniqueName: String, uid: UInt32, pid: Int32, process: String? = nil,
                writerProcess: String? = nil, historyEntry: Int? = nil, pasteboard: String, item: Int, type: ContentType,
                consent: String? = nil) {
        self.timestamp = timestamp
        self.appID = appID
        self.uniqueName = uniqueName
        self.uid = uid
        self.pid = pid
        self.process = process
        self.writerProcess = writerProcess
        self.historyEntry = historyEntry
        self.pasteboard = pasteboard
        self.item = item
        self.type = type
        self.consent = consent
    }

    /// Reads a `PasteLog` entry.
    init(dbus dictionary: [String: DBusValue]) throws(FerryError) {
        let wire = (try? [String: WireValue](dbusValue: dictionary.dbusValue)) ?? [:]
        guard let micros = wire["timestamp"]?.integerValue, let typeName = wire["type"]?.stringValue,
              let type = try? WireBridge.contentType(typeName) else {
            throw FerryError(.invalidArgument, "the broker sent a malformed paste log entry")
        }
        self.init(timestamp: WireBridge.date(microseconds: micros), appID: wire["app-id"]?.stringValue,
                  uniqueName: wire["unique-name"]?.stringValue ?? "", uid: UInt32(clamping: wire["uid"]?.integerValue ?? 0),
                  pid: Int32(clamping: wire["pid"]?.integerValue ?? 0), process: wire["process"]?.stringValue,
                  writerProcess: wire["writer-process"]?.stringValue,
                  historyEntry: wire["history-entry"]?.integerValue.map { Int(clamping: $0) },
                  pasteboard: wire["pasteboard"]?.stringValue ?? "",
                  item: Int(wire["item"]?.integerValue ?? 0), type: type, consent: wire["consent"]?.stringValue)
    }
}
