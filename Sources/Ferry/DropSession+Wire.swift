import DBus
import FerryBus
import FerryModel

extension DropSession {
    /// Reads the `info` dictionary of `DropEntered` / `DropUpdated` / `PerformDrop` for drag `id`;
    /// the session asks `client` for its previews.
    /// - Returns: the session and, for `PerformDrop`, the `operation` being performed.
    /// - Throws: `FerryError` `.invalidArgument` naming the malformed key (`info.location`).
    static func decode(id: String, info value: DBusValue,
                       client: FerryClient? = nil) throws(FerryError) -> (DropSession, DropOperation?) {
        try FerryError.bridgingSync {
            let entries = try WireReader.variantDictionary(value, path: "info")
            let info = WireReader(dbus: entries, path: "info")
            func text(_ key: String) throws -> String? { try info.string(key).flatMap { $0.isEmpty ? nil : $0 } }
            var types: [ContentType] = []
            for type in try info.contentTypes("types") ?? [] where !types.contains(type) { types.append(type) }
            guard let pasteboard = try text("pasteboard") else {
                throw FerryModelError(.invalidArgument, "expected the drag pasteboard's name", keyPath: info.keyPath("pasteboard"))
            }
            try Self.validatePasteboard(pasteboard, keyPath: info.keyPath("pasteboard"))
            var operation: DropOperation?
            if let name = try text("operation") {
                guard let known = DropOperation(name: name) else {
                    throw FerryModelError(.invalidArgument, "expected cancel, forbidden, copy or move", keyPath: info.keyPath("operation"))
                }
                operation = known
            }
            let isLocal = try info.bool("isLocal") ?? false
            var session = DropSession(id: id, location: try entries.point("location", keyPath: info.keyPath("location")) ?? .zero,
                                      types: types, numberOfItems: Int(try info.uint32("items") ?? 0),
                                      allowsMoveOperation: try info.bool("allowsMove") ?? false, isLocal: isLocal,
                                      sourceApp: isLocal ? try text("sourceApp") : nil,
                                      sourceSession: isLocal ? try text("sourceSession") : nil,
                                      pasteboardName: pasteboard)
            session.previewSource = DropPreviewSource(client)
            return (session, operation)
        }
    }

    /// Checks a pasteboard name the broker sent.
    /// - Throws: `FerryModelError` `.invalidArgument` at `keyPath`.
    static func validatePasteboard(_ name: String, keyPath: String) throws {
        do { try PasteboardName.validate(name) } catch {
            throw FerryModelError(.invalidArgument, FerryError.converting(error).message, keyPath: keyPath)
        }
    }
}
