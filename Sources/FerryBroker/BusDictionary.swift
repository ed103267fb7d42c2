import DBus
import FerryBus
import FerryModel

/// Typed, validating access to an `a{sv}` argument whose errors are `InvalidArgument` naming the
/// key path (`items[2].representations[0].type`), as docs/wire.md prescribes: integers of any
/// width whose value fits, `av` or `aa{sv}` for arrays of dictionaries, unknown keys ignored.
struct BusDictionary {
    /// The entries, variants already removed.
    let entries: VariantDictionary
    /// The key path of the dictionary itself.
    let path: String

    init(_ entries: VariantDictionary, path: String) {
        self.entries = entries
        self.path = path
    }

    func keyPath(_ key: String) -> String { path.isEmpty ? key : path + "." + key }

    func contains(_ key: String) -> Bool { entries[key] != nil }

    private func mismatch(_ key: String, _ expected: String, _ value: DBusValue) -> FerryModelError {
        FerryModelError(.invalidArgument, "expected \(expected), found \(value.signature.rawValue)", keyPath: keyPath(key))
    }

    func missing(_ key: String) -> FerryModelError {
        FerryModelError(.invalidArgument, "required key is missing", keyPath: keyPath(key))
    }

    func string(_ key: String) throws -> String? {
        guard let value = entries[key]?.unwrappingVariants else { return nil }
        guard case .string(let text) = value else { throw mismatch(key, "a string (s)", value) }
        return text
    }

    func bool(_ key: String) throws -> Bool? {
        guard let value = entries[key]?.unwrappingVariants else { return nil }
        guard case .boolean(let flag) = value else { throw mismatch(key, "a boolean (b)", value) }
        return flag
    }

    /// An integer of any width that fits `Int64`; a `t` past `Int64.max` (an offset, a length,
    /// a size or a date of 2^63 or more) is named as too large, not as the wrong type.
    func int64(_ key: String) throws -> Int64? {
        guard let value = entries[key]?.unwrappingVariants else { return nil }
        if case .uint64(let number) = value, number > UInt64(Int64.max) {
            throw FerryModelError(.invalidArgument, "\(number) is too large: at most \(Int64.max) (2^63 - 1)", keyPath: keyPath(key))
        }
        guard let number = Self.integer(value) else { throw mismatch(key, "an integer (x)", value) }
        return number
    }

    func uint64(_ key: String) throws -> UInt64? {
        guard let value = entries[key]?.unwrappingVariants else { return nil }
        if case .uint64(let number) = value { return number }
        guard let number = Self.integer(value) else { throw mismatch(key, "an integer (t)", value) }
        guard number >= 0 else {
            throw FerryModelError(.invalidArgument, "must not be negative", keyPath: keyPath(key))
        }
        return UInt64(number)
    }

    func bytes(_ key: String) throws -> [UInt8]? {
        guard let value = entries[key]?.unwrappingVariants else { return nil }
        switch value {
        case .bytes(let bytes): return bytes
        case .array(element: .byte, let elements):
            if let bytes = try? [UInt8](dbusValue: .array(element: .byte, elements: elements)) { return bytes }
            throw mismatch(key, "bytes (ay)", value)
        default: throw mismatch(key, "bytes (ay)", value)
        }
    }

    /// An `as` (or an empty array of any type); `what` names the elements in the error
    /// ("activity types").
    func strings(_ key: String, of what: String) throws -> [String]? {
        guard let value = entries[key] else { return nil }
        switch try WireValue(dbusValue: value, keyPath: keyPath(key)) {
        case .strings(let strings): return strings
        case .array(let elements) where elements.isEmpty: return []
        default: throw mismatch(key, "an array of \(what) (as)", value.unwrappingVariants)
        }
    }

    func descriptor(_ key: String) throws -> FileDescriptor? {
        guard let value = entries[key]?.unwrappingVariants else { return nil }
        guard case .unixFD(let descriptor) = value else { throw mismatch(key, "a file descriptor (h)", value) }
        return descriptor
    }

    /// An `av` of `a{sv}` (or an `aa{sv}`).
    func dictionaries(_ key: String) throws -> [BusDictionary]? {
        guard let value = entries[key]?.unwrappingVariants else { return nil }
        let elements: [DBusValue]
        switch value {
        case .array(_, let values): elements = values
        default: throw mismatch(key, "an array of dictionaries (av)", value)
        }
        return try elements.enumerated().map { index, element in
            let elementPath = keyPath(key) + "[\(index)]"
            guard let dictionary = try? VariantDictionary(dbusValue: element.unwrappingVariants) else {
                throw FerryModelError(.invalidArgument, "expected a dictionary (a{sv}), found \(element.unwrappingVariants.signature.rawValue)",
                                      keyPath: elementPath)
            }
            return BusDictionary(dictionary, path: elementPath)
        }
    }

    /// The value of any D-Bus integer type that fits `Int64`.
    static func integer(_ value: DBusValue) -> Int64? {
        switch value {
        case .byte(let n): Int64(n)
        case .int16(let n): Int64(n)
        case .uint16(let n): Int64(n)
        case .int32(let n): Int64(n)
        case .uint32(let n): Int64(n)
        case .int64(let n): n
        case .uint64(let n): Int64(exactly: n)
        default: nil
        }
    }
}
