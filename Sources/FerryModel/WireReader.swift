#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Typed, validating access to an `a{sv}` dictionary whose errors name the key path
/// (`items[2].representations[0].type: expected a string (s), found u`), as docs/wire.md
/// prescribes: integers of any width whose value fits, `as` or an `av` of strings for lists of
/// strings, `av` of `a{sv}` for lists of dictionaries, unknown keys never looked at.
///
/// The one reader of `a{sv}` values in Ferry: the model's decoders, the broker's arguments, the
/// client library's and the CLI's replies (through `FerryBus`, which makes readers of D-Bus
/// dictionaries). A value the bus sent that has no wire shape (a struct, an fd) is kept as the
/// error its conversion gave: it is thrown only when that key is read.
public struct WireReader: Sendable {
    /// The entries that have a wire shape.
    public let entries: [String: WireValue]
    /// The key path of the dictionary itself (`options`, `items[2]`), empty at the top.
    public let path: String
    /// Keys whose values could not become wire values, and why.
    let unreadable: [String: FerryModelError]

    /// A reader of `entries` whose errors name keys under `path`.
    public init(_ entries: [String: WireValue], path: String = "") {
        self.init(entries, path: path, unreadable: [:])
    }

    /// A reader that also knows keys whose values could not be converted: reading one throws its
    /// error. For the bus bridge (`FerryBus`), which converts D-Bus dictionaries.
    public init(_ entries: [String: WireValue], path: String, unreadable: [String: FerryModelError]) {
        self.entries = entries
        self.path = path
        self.unreadable = unreadable
    }

    /// Whether `key` is present (readable or not).
    public func contains(_ key: String) -> Bool { entries[key] != nil || unreadable[key] != nil }

    /// The value under `key`, nil when absent.
    /// - Throws: the conversion error of a value that has no wire shape.
    public func lookup(_ key: String) throws(FerryModelError) -> WireValue? {
        if let error = unreadable[key] { throw error }
        return entries[key]
    }

    /// `path.key` (or `key` at the top): the key path errors name.
    public func keyPath(_ key: String) -> String { KeyPath.join(path, key) }

    /// The error for a value of the wrong type: `key: expected …, found <signature>`.
    public func mismatch(_ key: String, expected: String, found value: WireValue) -> FerryModelError {
        FerryModelError.invalid("expected \(expected), found \(value.signature)", at: keyPath(key))
    }

    /// The error for a required key that is absent.
    public func missing(_ key: String) -> FerryModelError {
        FerryModelError.invalid("required key is missing", at: keyPath(key))
    }

    /// What `read` reads under `key`, which must be present.
    /// - Throws: ``missing(_:)`` when it is absent, and what `read` throws.
    public func required<T>(_ key: String, _ read: (String) throws -> T?) throws -> T {
        guard let value = try read(key) else { throw missing(key) }
        return value
    }

    /// A string (`s`), nil when absent.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key for another type.
    public func string(_ key: String) throws -> String? {
        guard let value = try lookup(key) else { return nil }
        guard case .string(let s) = value else { throw mismatch(key, expected: "a string (s)", found: value) }
        return s
    }

    /// A boolean (`b`), nil when absent.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key for another type.
    public func bool(_ key: String) throws -> Bool? {
        guard let value = try lookup(key) else { return nil }
        guard case .bool(let b) = value else { throw mismatch(key, expected: "a boolean (b)", found: value) }
        return b
    }

    /// An integer of any width that fits `Int64`; a `t` of 2^63 or more is named as too large,
    /// not as the wrong type. Nil when absent.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key.
    public func int64(_ key: String) throws -> Int64? {
        guard let value = try lookup(key) else { return nil }
        if case .uint64(let n) = value, n > UInt64(Int64.max) {
            throw FerryModelError.invalid("\(n) is too large: at most \(Int64.max) (2^63 - 1)", at: keyPath(key))
        }
        guard let n = value.integerValue else { throw mismatch(key, expected: "an integer (x)", found: value) }
        return n
    }

    /// An integer of any width that fits `Int32`, nil when absent.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key.
    public func int32(_ key: String) throws -> Int32? {
        guard let n = try int64(key) else { return nil }
        guard let small = Int32(exactly: n) else {
            throw FerryModelError.invalid("\(n) does not fit a 32-bit integer", at: keyPath(key))
        }
        return small
    }

    /// An unsigned integer of any width (a `t` up to 2^64 - 1), nil when absent.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key for a negative number or
    ///   another type.
    public func uint64(_ key: String) throws -> UInt64? {
        guard let value = try lookup(key) else { return nil }
        if case .uint64(let n) = value { return n }
        guard let n = value.integerValue else { throw mismatch(key, expected: "an integer (t)", found: value) }
        guard n >= 0 else { throw FerryModelError.invalid("must not be negative", at: keyPath(key)) }
        return UInt64(n)
    }

    /// An unsigned 32-bit integer (`u`) exactly, nil when absent.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key for another type.
    public func uint32(_ key: String) throws -> UInt32? {
        guard let value = try lookup(key) else { return nil }
        guard case .uint32(let n) = value else { throw mismatch(key, expected: "an unsigned integer (u)", found: value) }
        return n
    }

    /// A number: a double (`d`) or an integer of any width, nil when absent.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key for another type.
    public func double(_ key: String) throws -> Double? {
        guard let value = try lookup(key) else { return nil }
        if case .double(let d) = value { return d }
        if case .uint64(let n) = value { return Double(n) }
        if let n = value.integerValue { return Double(n) }
        throw mismatch(key, expected: "a double (d)", found: value)
    }

    /// Bytes (`ay`), nil when absent.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key for another type.
    public func bytes(_ key: String) throws -> Data? {
        guard let value = try lookup(key) else { return nil }
        guard case .bytes(let b) = value else { throw mismatch(key, expected: "bytes (ay)", found: value) }
        return b
    }

    /// `as`, or an `av` whose elements are all strings (an empty array of any type is empty);
    /// nil when absent.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key or the element at fault.
    public func strings(_ key: String) throws -> [String]? { try strings(key, of: nil) }

    /// `as`, or an `av` whose elements are all strings (an empty array of any type is empty);
    /// nil when absent. `what` names the elements in the error (`activity types`).
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key, or the element at fault
    ///   (`types[2]`).
    public func strings(_ key: String, of what: String?) throws -> [String]? {
        guard let value = try lookup(key) else { return nil }
        switch value {
        case .strings(let ss): return ss
        case .array(let vs):
            return try vs.enumerated().map { i, v in
                guard case .string(let s) = v else {
                    throw FerryModelError.invalid("expected a string, found \(v.signature)", at: KeyPath.index(keyPath(key), i))
                }
                return s
            }
        default: throw mismatch(key, expected: what.map { "an array of \($0) (as)" } ?? "strings (as)", found: value)
        }
    }

    /// The reader of the `a{sv}` under `key` (its errors name `key.…`), nil when absent.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key for another type.
    public func dictionary(_ key: String) throws -> WireReader? {
        guard let value = try lookup(key) else { return nil }
        guard case .dictionary(let d) = value else { throw mismatch(key, expected: "a dictionary (a{sv})", found: value) }
        return WireReader(d, path: keyPath(key))
    }

    /// `av` of `a{sv}` (an empty array of any type is empty), each with a reader whose path is
    /// `key[index]`; nil when absent.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key, or the element at fault.
    public func dictionaries(_ key: String) throws -> [WireReader]? {
        guard let value = try lookup(key) else { return nil }
        if case .strings(let ss) = value, ss.isEmpty { return [] }
        guard case .array(let vs) = value else { throw mismatch(key, expected: "an array of dictionaries (av)", found: value) }
        return try vs.enumerated().map { i, v in
            guard case .dictionary(let d) = v else {
                throw FerryModelError.invalid("expected a dictionary (a{sv}), found \(v.signature)", at: KeyPath.index(keyPath(key), i))
            }
            return WireReader(d, path: KeyPath.index(keyPath(key), i))
        }
    }

    /// Decodes the nested value under `key`, putting this reader's path in front of its errors'
    /// key paths; nil when absent.
    /// - Throws: `FerryModelError`, as the type's ``WireCodable/init(wireDictionary:)`` throws.
    public func decode<T: WireCodable>(_ type: T.Type, _ key: String) throws -> T? {
        guard let nested = try dictionary(key) else { return nil }
        return try nested.decodeHere(type)
    }

    /// Decodes this whole dictionary as `type`, its errors' key paths under this reader's path.
    /// - Throws: `FerryModelError`, as the type's ``WireCodable/init(wireDictionary:)`` throws.
    public func decodeHere<T: WireCodable>(_ type: T.Type) throws -> T {
        do {
            return try T(wireDictionary: entries)
        } catch let error as FerryModelError {
            throw path.isEmpty ? error : error.nested(under: path)
        }
    }

    /// `aas` (an `av` of `as`; an empty array of any type is empty): one list of strings per
    /// element, nil when absent.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key or the element at fault.
    public func stringLists(_ key: String) throws -> [[String]]? {
        guard let value = try lookup(key) else { return nil }
        switch value {
        case .strings(let ss) where ss.isEmpty: return []
        case .array(let vs):
            return try vs.enumerated().map { i, v in
                guard case .strings(let ss) = v else {
                    if case .array(let empty) = v, empty.isEmpty { return [] }
                    throw FerryModelError.invalid("expected strings (as), found \(v.signature)", at: KeyPath.index(keyPath(key), i))
                }
                return ss
            }
        default: throw mismatch(key, expected: "one list of strings per element (aas)", found: value)
        }
    }

    /// Type identifiers (`as`), each as ``contentType(_:)`` reads one; nil when absent.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key, or the element that is
    ///   not a type identifier (`types[1]`).
    public func contentTypes(_ key: String) throws -> [ContentType]? {
        try strings(key).map { identifiers in
            try identifiers.enumerated().map { i, identifier in
                try Self.contentType(identifier, at: KeyPath.index(keyPath(key), i))
            }
        }
    }

    /// The type `identifier` names: the declared type, or for one this process has no
    /// declaration of (another app's exported type), the identifier as it is, conforming only to
    /// itself and `public.item`.
    /// - Throws: `FerryModelError` `.invalidArgument` at `keyPath` when it is not a type identifier.
    public static func contentType(_ identifier: String, at keyPath: String) throws -> ContentType {
        guard ContentType.isValidIdentifier(identifier), let type = ContentType(importedAs: identifier) else {
            throw FerryModelError.invalid("\"\(identifier.printableLine(limit: 80))\" is not a type identifier", at: keyPath)
        }
        return type
    }

    /// A type identifier (`s`), as the declared type or, for one this process has no
    /// declaration of, the identifier as it is; nil when absent.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key for another type or a
    ///   string that is not a type identifier.
    public func contentType(_ key: String) throws -> ContentType? {
        guard let identifier = try string(key) else { return nil }
        guard ContentType.isValidIdentifier(identifier) else {
            throw FerryModelError.invalid("\"\(identifier)\" is not a type identifier", at: keyPath(key))
        }
        // An identifier this process has no declaration for (another app's exported type) is kept
        // as it is; it conforms only to itself and `public.item`.
        return ContentType(importedAs: identifier)
    }
}
