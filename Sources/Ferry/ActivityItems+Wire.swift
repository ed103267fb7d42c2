import DBus
import FerryBus
import FerryModel

extension ActivityItems {
    /// Reads the `info` dictionary of `Client1.CanPerformActivities` / `PerformActivity` for
    /// share `share`: pasteboard (s, required), items (u), types (as), itemTypes (aas), title
    /// (s), metadata (aa{sv}), sourceApp (s). Without itemTypes, each item has all of `types`.
    /// - Throws: `FerryError` `.invalidArgument` naming the malformed key (`info.itemTypes[1][0]`).
    static func decode(share: String, info value: DBusValue, itemProviders: [ItemProvider] = [])
        throws(FerryError) -> ActivityItems {
        let info: [String: WireValue]
        do { info = try [String: WireValue](dbusValue: value, keyPath: "info") } catch { throw FerryError(error) }
        func bad(_ key: String, _ expected: String) -> FerryError {
            FerryError(.invalidArgument, "info.\(key): expected \(expected)")
        }
        func text(_ key: String) throws(FerryError) -> String? {
            guard let found = info[key] else { return nil }
            guard case .string(let text) = found else { throw bad(key, "a string") }
            return text.isEmpty ? nil : text
        }
        func types(_ identifiers: [String], at key: String) throws(FerryError) -> [ContentType] {
            var out: [ContentType] = []
            for (index, identifier) in identifiers.enumerated() {
                guard ContentType.isValidIdentifier(identifier), let type = try? WireBridge.contentType(identifier) else {
                    throw FerryError(.invalidArgument,
                                     "info.\(key)[\(index)]: \"\(identifier.printableLine(limit: 80))\" is not a type identifier")
                }
                out.append(type)
            }
            return out
        }
        guard let pasteboard = try text("pasteboard") else { throw bad("pasteboard", "the share pasteboard's name") }
        do { try PasteboardName.validate(pasteboard) } catch {
            throw FerryError(.invalidArgument, "info.pasteboard: \(FerryError.converting(error).message)")
        }
        var count: Int?
        if let found = info["items"] {
            guard case .uint32(let value) = found else { throw bad("items", "an unsigned integer (u)") }
            count = Int(value)
        }
        var allTypes: [ContentType] = []
        if let found = info["types"] {
            guard case .strings(let identifiers) = found else { throw bad("types", "strings (as)") }
            allTypes = try types(identifiers, at: "types")
        }
        var itemTypes: [[ContentType]]
        if let found = info["itemTypes"] {
            let lists: [WireValue]
            switch found {
            case .array(let values): lists = values
            case .strings(let values) where values.isEmpty: lists = []
            default: throw bad("itemTypes", "one list of types per item (aas)")
            }
            itemTypes = []
            for (index, list) in lists.enumerated() {
                guard case .strings(let identifiers) = list else { throw bad("itemTypes[\(index)]", "strings (as)") }
                itemTypes.append(try types(identifiers, at: "itemTypes[\(index)]"))
            }
        } else {
            itemTypes = Array(repeating: allTypes, count: count ?? 0)
        }
        if let count, count != itemTypes.count {
            throw FerryError(.invalidArgument, "info.items: \(count) items, but itemTypes lists \(itemTypes.count)")
        }
        var metadata: [ActivityItemsConfiguration.ItemMetadata] = []
        if let found = info["metadata"] {
            let entries: [WireValue]
            switch found {
            case .array(let values): entries = values
            case .strings(let values) where values.isEmpty: entries = []
            default: throw bad("metadata", "one dictionary per item (aa{sv})")
            }
            for (index, entry) in entries.enumerated() {
                guard case .dictionary(let dictionary) = entry else { throw bad("metadata[\(index)]", "a dictionary (a{sv})") }
                do {
                    metadata.append(try ActivityItemsConfiguration.ItemMetadata(wireDictionary: dictionary))
                } catch {
                    throw FerryError(.invalidArgument, "info.metadata[\(index)]: \(FerryError.converting(error).message)")
                }
            }
        }
        return ActivityItems(share: share, itemTypes: itemTypes, title: try text("title"),
                             metadata: Array(metadata.prefix(itemTypes.count)), sourceApp: try text("sourceApp"),
                             pasteboardName: pasteboard, itemProviders: itemProviders)
    }
}

extension ActivityResult {
    /// `{completed, message, returnedItems}`: the result of `Client1.PerformActivity`.
    /// - Throws: `FerryError` `.tooLarge` past ``ShareCompletion/maximumReturnedItems`` items,
    ///   `.invalidArgument` for an empty key or a string with NUL (it cannot travel).
    func dbusValue() throws(FerryError) -> DBusValue {
        guard returnedItems.count <= ShareCompletion.maximumReturnedItems else {
            throw FerryError(.tooLarge, "returnedItems: \(returnedItems.count) items; at most \(ShareCompletion.maximumReturnedItems)")
        }
        for (index, item) in returnedItems.enumerated() {
            for (key, value) in item where key.utf8.contains(0) || value.utf8.contains(0) || key.isEmpty {
                throw FerryError(.invalidArgument,
                                 "returnedItems[\(index)]: the key \"\(key.printableLine(limit: 40))\" is empty, or it or its value holds NUL")
            }
        }
        var wire: [String: WireValue] = [
            "completed": .bool(completed),
            "returnedItems": .array(returnedItems.map { .dictionary($0.mapValues { .string($0) }) }),
        ]
        if let message {
            guard !message.utf8.contains(0) else { throw FerryError(.invalidArgument, "message: holds NUL") }
            wire["message"] = .string(message)
        }
        return wire.dbusValue
    }
}
