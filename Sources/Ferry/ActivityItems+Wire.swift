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
        try FerryError.bridgingSync {
            let info = try WireReader(dbus: value, path: "info")
            func text(_ key: String) throws -> String? { try info.string(key).flatMap { $0.isEmpty ? nil : $0 } }
            guard let pasteboard = try text("pasteboard") else {
                throw FerryModelError(.invalidArgument, "expected the share pasteboard's name", keyPath: info.keyPath("pasteboard"))
            }
            try DropSession.validatePasteboard(pasteboard, keyPath: info.keyPath("pasteboard"))
            let count = try info.uint32("items").map(Int.init)
            let allTypes = try info.contentTypes("types") ?? []
            var itemTypes = Array(repeating: allTypes, count: count ?? 0)
            if let lists = try info.stringLists("itemTypes") {
                itemTypes = try lists.enumerated().map { index, identifiers in
                    try identifiers.enumerated().map { position, identifier in
                        try WireReader.contentType(identifier, at: info.keyPath("itemTypes") + "[\(index)][\(position)]")
                    }
                }
            }
            if let count, count != itemTypes.count {
                throw FerryModelError(.invalidArgument, "\(count) items, but itemTypes lists \(itemTypes.count)", keyPath: info.keyPath("items"))
            }
            let metadata = try (info.dictionaries("metadata") ?? []).map { try $0.decodeHere(ActivityItemsConfiguration.ItemMetadata.self) }
            return ActivityItems(share: share, itemTypes: itemTypes, title: try text("title"),
                                 metadata: Array(metadata.prefix(itemTypes.count)), sourceApp: try text("sourceApp"),
                                 pasteboardName: pasteboard, itemProviders: itemProviders)
        }
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
