#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import BrokerCore
import DBus
import FerryModel

/// How `org.ferry.Pasteboard1.Items`, `History` and `org.ferry.Broker1.PasteLog` describe things
/// on the bus (the keys are listed in org.ferry.Pasteboard1.xml and org.ferry.Broker1.xml).
enum PasteboardMetadata {
    /// Microseconds since 1970-01-01 UTC, as docs/wire.md writes dates.
    /// Dates beyond what 64 bits of microseconds can say are clamped (a writer may send any `x`).
    static func microseconds(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1_000_000).rounded()
        guard value.isFinite else { return value > 0 ? .max : .min }
        if value >= 9.223372036854775e18 { return .max }
        if value <= -9.223372036854775e18 { return .min }
        return Int64(value)
    }

    /// One item's metadata as `caller` may see it: `ownApp` representations only for the app
    /// that wrote it.
    static func item(_ item: StoredItem, sensitive: Bool, for caller: PasteboardCaller,
                     adding extra: VariantDictionary = [:]) -> DBusValue {
        let representations: [DBusValue] = caller.visibleRepresentations(of: item).map { representation in
            var entries: VariantDictionary = [
                "type": .string(representation.contentType.identifier),
                "visibility": .string(representation.visibility.rawValue),
                "promised": .boolean(!representation.isHeld),
            ]
            if let size = representation.size { entries["estimatedSize"] = .int64(size) }
            return .variant(entries.dbusValue)
        }
        var entries: VariantDictionary = [
            "id": .string(item.id.uuidString),
            "representations": .array(element: .variant, elements: representations),
            "localOnly": .boolean(item.options.localOnly),
        ]
        if let name = item.suggestedName { entries["suggestedName"] = .string(name) }
        if let date = item.options.expirationDate { entries["expirationDate"] = .int64(microseconds(date)) }
        if let app = item.sourceAppID { entries["sourceAppID"] = .string(app) }
        if let origin = item.options.origin { entries["origin"] = .string(origin) }
        if sensitive { entries["sensitive"] = .boolean(true) }
        for (key, value) in extra { entries[key] = value }
        return entries.dbusValue
    }

    /// A list of items (`aa{sv}`).
    static func items(_ items: [StoredItem], sensitive: Set<UUID> = [], for caller: PasteboardCaller) -> DBusValue {
        .array(element: "a{sv}", elements: items.map { item($0, sensitive: sensitive.contains($0.id), for: caller) })
    }

    /// One history entry: changeCount, replacedAt, items (`av` of `a{sv}`), each item with the
    /// keys `preview` gives it (its preview and pixel size).
    static func historyEntry(_ entry: HistoryEntry, for caller: PasteboardCaller,
                             preview: (StoredItem) -> VariantDictionary) -> DBusValue {
        let entries: VariantDictionary = [
            "changeCount": .uint64(entry.changeCount),
            "replacedAt": .int64(microseconds(entry.replacedAt)),
            "items": .array(element: .variant, elements: entry.items.map {
                .variant(item($0, sensitive: false, for: caller, adding: preview($0)))
            }),
        ]
        return entries.dbusValue
    }

    /// One paste log record.
    static func pasteRecord(_ record: PasteRecord) -> DBusValue {
        var entries: VariantDictionary = [
            "timestamp": .int64(microseconds(record.timestamp)),
            "unique-name": .string(record.uniqueName),
            "uid": .uint32(record.uid),
            "pid": .int32(record.pid),
            "pasteboard": .string(record.pasteboard),
            "item": .uint32(UInt32(clamping: record.itemIndex)),
            "type": .string(record.contentType.identifier),
        ]
        if let app = record.appID { entries["app-id"] = .string(app) }
        if let process = record.process { entries["process"] = .string(process) }
        if let consent = record.consent { entries["consent"] = .string(consent) }
        if let writer = record.writerProcess { entries["writer-process"] = .string(writer) }
        if let entry = record.historyEntry { entries["history-entry"] = .uint32(UInt32(clamping: entry)) }
        return entries.dbusValue
    }
}
