import DBus
import FerryModel

extension DropSession {
    /// Reads the `info` dictionary of `DropEntered` / `DropUpdated` / `PerformDrop` for drag `id`.
    /// - Returns: the session and, for `PerformDrop`, the `operation` being performed.
    /// - Throws: `FerryError` `.invalidArgument` naming the malformed key (`info.location`).
    static func decode(id: String, info value: DBusValue) throws(FerryError) -> (DropSession, DropOperation?) {
        guard let info = try? [String: DBusValue](dbusValue: value.unwrappingVariants) else {
            throw FerryError(.invalidArgument, "info: expected a dictionary (a{sv})")
        }
        func bad(_ key: String, _ expected: String) -> FerryError {
            FerryError(.invalidArgument, "info.\(key): expected \(expected)")
        }
        func text(_ key: String) throws(FerryError) -> String? {
            guard let found = info[key] else { return nil }
            guard case .string(let text) = found.unwrappingVariants else { throw bad(key, "a string") }
            return text.isEmpty ? nil : text
        }
        func flag(_ key: String) throws(FerryError) -> Bool {
            guard let found = info[key] else { return false }
            guard case .boolean(let value) = found.unwrappingVariants else { throw bad(key, "a boolean") }
            return value
        }
        var location = Point.zero
        if let found = info["location"] {
            guard case .structure(let fields) = found.unwrappingVariants, fields.count == 2,
                  case .double(let x) = fields[0], case .double(let y) = fields[1], x.isFinite, y.isFinite else {
                throw bad("location", "a finite point (dd)")
            }
            location = Point(x: x, y: y)
        }
        var types: [ContentType] = []
        if let found = info["types"] {
            guard let identifiers = try? found.unwrappingVariants.get([String].self) else { throw bad("types", "strings") }
            for (index, identifier) in identifiers.enumerated() {
                guard ContentType.isValidIdentifier(identifier), let type = try? WireBridge.contentType(identifier) else {
                    throw FerryError(.invalidArgument, "info.types[\(index)]: \"\(identifier)\" is not a type identifier")
                }
                if !types.contains(type) { types.append(type) }
            }
        }
        var count = 0
        if let found = info["items"] {
            guard case .uint32(let value) = found.unwrappingVariants else { throw bad("items", "an unsigned integer (u)") }
            count = Int(value)
        }
        guard let pasteboard = try text("pasteboard") else { throw bad("pasteboard", "the drag pasteboard's name") }
        do { try PasteboardName.validate(pasteboard) } catch {
            throw FerryError(.invalidArgument, "info.pasteboard: \(FerryError.converting(error).message)")
        }
        var operation: DropOperation?
        if let name = try text("operation") {
            guard let known = DropOperation(name: name) else { throw bad("operation", "cancel, forbidden, copy or move") }
            operation = known
        }
        let isLocal = try flag("isLocal")
        let session = DropSession(id: id, location: location, types: types, numberOfItems: count,
                                  allowsMoveOperation: try flag("allowsMove"), isLocal: isLocal,
                                  sourceApp: isLocal ? try text("sourceApp") : nil,
                                  sourceSession: isLocal ? try text("sourceSession") : nil,
                                  pasteboardName: pasteboard)
        return (session, operation)
    }
}
