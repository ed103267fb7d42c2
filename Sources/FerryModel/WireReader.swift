#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Typed, validating access to an `a{sv}` dictionary whose errors name the key path.
/// Integer keys accept any D-Bus integer width whose value fits; unknown keys are never looked at.
struct WireReader {
    let entries: [String: WireValue]
    let path: String

    init(_ entries: [String: WireValue], path: String = "") {
        self.entries = entries
        self.path = path
    }

    func keyPath(_ key: String) -> String { KeyPath.join(path, key) }

    func mismatch(_ key: String, expected: String, found value: WireValue) -> FerryModelError {
        FerryModelError.invalid("expected \(expected), found \(value.signature)", at: keyPath(key))
    }

    func missing(_ key: String) -> FerryModelError {
        FerryModelError.invalid("required key is missing", at: keyPath(key))
    }

    func required<T>(_ key: String, _ read: (String) throws -> T?) throws -> T {
        guard let value = try read(key) else { throw missing(key) }
        return value
    }

    func string(_ key: String) throws -> String? {
        guard let value = entries[key] else { return nil }
        guard case .string(let s) = value else { throw mismatch(key, expected: "a string (s)", found: value) }
        return s
    }

    func bool(_ key: String) throws -> Bool? {
        guard let value = entries[key] else { return nil }
        guard case .bool(let b) = value else { throw mismatch(key, expected: "a boolean (b)", found: value) }
        return b
    }

    /// An integer of any width that fits `Int64`; a `t` of 2^63 or more is named as too large,
    /// not as the wrong type.
    func int64(_ key: String) throws -> Int64? {
        guard let value = entries[key] else { return nil }
        if case .uint64(let n) = value, n > UInt64(Int64.max) {
            throw FerryModelError.invalid("\(n) is too large: at most \(Int64.max) (2^63 - 1)", at: keyPath(key))
        }
        guard let n = value.integerValue else { throw mismatch(key, expected: "an integer (x)", found: value) }
        return n
    }

    func int32(_ key: String) throws -> Int32? {
        guard let n = try int64(key) else { return nil }
        guard let small = Int32(exactly: n) else {
            throw FerryModelError.invalid("\(n) does not fit a 32-bit integer", at: keyPath(key))
        }
        return small
    }

    func double(_ key: String) throws -> Double? {
        guard let value = entries[key] else { return nil }
        if case .double(let d) = value { return d }
        if case .uint64(let n) = value { return Double(n) }
        if let n = value.integerValue { return Double(n) }
        throw mismatch(key, expected: "a double (d)", found: value)
    }

    func bytes(_ key: String) throws -> Data? {
        guard let value = entries[key] else { return nil }
        guard case .bytes(let b) = value else { throw mismatch(key, expected: "bytes (ay)", found: value) }
        return b
    }

    /// `as`, or an `av` whose elements are all strings.
    func strings(_ key: String) throws -> [String]? {
        guard let value = entries[key] else { return nil }
        switch value {
        case .strings(let ss): return ss
        case .array(let vs):
            return try vs.enumerated().map { i, v in
                guard case .string(let s) = v else {
                    throw FerryModelError.invalid("expected a string, found \(v.signature)", at: KeyPath.index(keyPath(key), i))
                }
                return s
            }
        default: throw mismatch(key, expected: "strings (as)", found: value)
        }
    }

    func dictionary(_ key: String) throws -> WireReader? {
        guard let value = entries[key] else { return nil }
        guard case .dictionary(let d) = value else { throw mismatch(key, expected: "a dictionary (a{sv})", found: value) }
        return WireReader(d, path: keyPath(key))
    }

    /// `av` of `a{sv}`, each with a reader whose path is `key[index]`.
    func dictionaries(_ key: String) throws -> [WireReader]? {
        guard let value = entries[key] else { return nil }
        guard case .array(let vs) = value else { throw mismatch(key, expected: "an array of dictionaries (av)", found: value) }
        return try vs.enumerated().map { i, v in
            guard case .dictionary(let d) = v else {
                throw FerryModelError.invalid("expected a dictionary (a{sv}), found \(v.signature)", at: KeyPath.index(keyPath(key), i))
            }
            return WireReader(d, path: KeyPath.index(keyPath(key), i))
        }
    }

    /// Decodes a nested value, putting this reader's path in front of its errors' key paths.
    func decode<T: WireCodable>(_ type: T.Type, _ key: String) throws -> T? {
        guard let nested = try dictionary(key) else { return nil }
        return try nested.decodeHere(type)
    }

    func decodeHere<T: WireCodable>(_ type: T.Type) throws -> T {
        do {
            return try T(wireDictionary: entries)
        } catch let error as FerryModelError {
            throw path.isEmpty ? error : error.nested(under: path)
        }
    }

    func contentType(_ key: String) throws -> ContentType? {
        guard let identifier = try string(key) else { return nil }
        guard ContentType.isValidIdentifier(identifier) else {
            throw FerryModelError.invalid("\"\(identifier)\" is not a type identifier", at: keyPath(key))
        }
        // An identifier this process has no declaration for (another app's exported type) is kept
        // as it is; it conforms only to itself and `public.item`.
        return ContentType(importedAs: identifier)
    }
}
