import DBus
import FerryModel

/// Readers of `a{sv}` values from the bus: the broker's arguments and the client's replies go
/// through the model's one ``WireReader``.
extension WireReader {
    /// A reader of an `a{sv}` argument whose errors name keys under `path` (`options.app`).
    ///
    /// Unknown keys are never looked at, so a value with no wire shape (a struct, an fd) fails
    /// only when its key is read: then the reader throws the conversion's error, naming the key.
    /// Read such values from `entries` itself (``VariantDictionary/descriptor(_:keyPath:)``).
    public init(dbus entries: VariantDictionary, path: String) {
        // `init(minimumCapacity:)`, not `reserveCapacity`: the stdlib's reserveCapacity is not
        // inlinable, so it runs unspecialized and looks the dictionary's type up on every call.
        var converted = [String: WireValue](minimumCapacity: entries.count)
        var unreadable: [String: FerryModelError] = [:]
        for (key, value) in entries {
            // The key path from `path` is spelled only for a failure.
            do { converted[key] = try WireValue(dbusValue: value, keyPath: key) } catch { unreadable[key] = error.nested(under: path) }
        }
        self.init(converted, path: path, unreadable: unreadable)
    }

    /// A reader of an `a{sv}` reply value (variants unwrapped).
    /// - Throws: `FerryModelError` `.invalidArgument` naming `path` when `value` is not a
    ///   dictionary with string keys.
    public init(dbus value: DBusValue, path: String) throws(FerryModelError) {
        try self.init(dbus: WireReader.variantDictionary(value, path: path), path: path)
    }

    /// Readers of the `aa{sv}` (or `av` of `a{sv}`) reply value, each naming `path[index]`.
    /// - Throws: `FerryModelError` `.invalidArgument` naming `path` or the element at fault.
    public static func readers(dbus value: DBusValue, path: String) throws(FerryModelError) -> [WireReader] {
        var readers: [WireReader] = []
        for (index, entries) in try variantDictionaries(value, path: path).enumerated() {
            readers.append(WireReader(dbus: entries, path: "\(path)[\(index)]"))
        }
        return readers
    }

    /// Readers of an `aa{sv}` reply read straight from its bytes (no `DBusValue` between), each
    /// naming `path[index]`; nil when `reply` is not an `aa{sv}` of values with a wire shape:
    /// read its `body` with ``readers(dbus:path:)``, which names what is wrong.
    /// - Throws: `DBusError` for a malformed body.
    public static func readers(plainReply reply: Message, path: String) throws -> [WireReader]? {
        guard let dictionaries = try reply.plainDictionaries(of: WireValue.self) else { return nil }
        var readers: [WireReader] = []
        readers.reserveCapacity(dictionaries.count)
        for (index, entries) in dictionaries.enumerated() {
            readers.append(WireReader(entries, path: "\(path)[\(index)]"))
        }
        return readers
    }

    /// The elements of an `aa{sv}` (or `av` of `a{sv}`) value as D-Bus dictionaries, for a caller
    /// that needs what has no wire shape in them (fds).
    /// - Throws: `FerryModelError` `.invalidArgument` naming `path` or the element at fault.
    public static func variantDictionaries(_ value: DBusValue, path: String) throws(FerryModelError) -> [VariantDictionary] {
        guard case .array(_, let elements) = value.unwrappingVariants else {
            throw WireReader.mismatch("an array of dictionaries (av)", value.unwrappingVariants, path)
        }
        var out: [VariantDictionary] = []
        out.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            out.append(try variantDictionary(element, path: "\(path)[\(index)]"))
        }
        return out
    }

    /// An `a{sv}` value as a D-Bus dictionary (variants unwrapped), for a caller that needs what
    /// has no wire shape in it (fds, points).
    /// - Throws: `FerryModelError` `.invalidArgument` naming `path` when `value` is not a
    ///   dictionary with string keys.
    public static func variantDictionary(_ value: DBusValue, path: String) throws(FerryModelError) -> VariantDictionary {
        guard case .dictionary(_, _, let entries) = value.unwrappingVariants else {
            throw WireReader.mismatch("a dictionary (a{sv})", value.unwrappingVariants, path)
        }
        var out = VariantDictionary(minimumCapacity: entries.count)
        for entry in entries {
            guard case .string(let key) = entry.key.unwrappingVariants else {
                throw WireReader.mismatch("a dictionary with string keys", entry.key, path)
            }
            out[key] = entry.value.unwrappingVariants
        }
        return out
    }
}

extension WireReader {
    /// `expected …, found <signature>`, as the reader's own mismatches read.
    static func mismatch(_ expected: String, _ value: DBusValue, _ path: String) -> FerryModelError {
        FerryModelError(.invalidArgument, "expected \(expected), found \(value.signature.rawValue)", keyPath: path.isEmpty ? nil : path)
    }
}

extension Dictionary where Key == String, Value == DBusValue {
    /// The file descriptor (`h`) under `key`, nil when absent; `keyPath` is the key's path for
    /// errors (`items[0].representations[1].fd`). File descriptors have no wire shape, so a
    /// ``WireReader`` cannot hold them.
    /// - Throws: `FerryModelError` `.invalidArgument` naming `keyPath` for another type.
    public func descriptor(_ key: String, keyPath: String) throws(FerryModelError) -> FileDescriptor? {
        guard let value = self[key]?.unwrappingVariants else { return nil }
        guard case .unixFD(let descriptor) = value else { throw WireReader.mismatch("a file descriptor (h)", value, keyPath) }
        return descriptor
    }

    /// The point (`(dd)`, finite) under `key`, nil when absent; `keyPath` is the key's path for
    /// errors. Structs have no wire shape, so a ``WireReader`` cannot hold them.
    /// - Throws: `FerryModelError` `.invalidArgument` naming `keyPath` for another type or a
    ///   coordinate that is not finite.
    public func point(_ key: String, keyPath: String) throws(FerryModelError) -> Point? {
        guard let value = self[key]?.unwrappingVariants else { return nil }
        guard case .structure(let fields) = value, fields.count == 2,
              case .double(let x) = fields[0], case .double(let y) = fields[1], x.isFinite, y.isFinite else {
            throw WireReader.mismatch("a finite point (dd)", value, keyPath)
        }
        return Point(x: x, y: y)
    }
}
