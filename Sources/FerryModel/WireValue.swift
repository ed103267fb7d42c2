#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A protocol-neutral value that maps one-to-one onto the D-Bus types Ferry puts in `a{sv}`
/// dictionaries. FerryModel imports no D-Bus; the bus layer converts `WireValue` ↔ its D-Bus values.
/// Shapes of every model value are in docs/wire.md.
public indirect enum WireValue: Sendable, Hashable {
    /// `b`.
    case bool(Bool)
    /// `i`.
    case int32(Int32)
    /// `x`.
    case int64(Int64)
    /// `u`.
    case uint32(UInt32)
    /// `t`.
    case uint64(UInt64)
    /// `d`.
    case double(Double)
    /// `s` (valid UTF-8 by construction; no NUL characters are allowed by D-Bus — see ``validate()``).
    case string(String)
    /// `ay`.
    case bytes(Data)
    /// `as`.
    case strings([String])
    /// `av`: each element is wrapped in its own variant.
    case array([WireValue])
    /// `a{sv}`.
    case dictionary([String: WireValue])

    /// The D-Bus signature of the value inside its variant (`s`, `a{sv}`, …).
    public var signature: String {
        switch self {
        case .bool: "b"
        case .int32: "i"
        case .int64: "x"
        case .uint32: "u"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .bytes: "ay"
        case .strings: "as"
        case .array: "av"
        case .dictionary: "a{sv}"
        }
    }

    /// The value as a signed 64-bit integer, if it is an integer of any width that fits.
    public var integerValue: Int64? {
        switch self {
        case .int32(let v): Int64(v)
        case .int64(let v): v
        case .uint32(let v): Int64(v)
        case .uint64(let v): Int64(exactly: v)
        default: nil
        }
    }

    /// The string, if this is a string.
    public var stringValue: String? { if case .string(let v) = self { v } else { nil } }
    /// The boolean, if this is a boolean.
    public var boolValue: Bool? { if case .bool(let v) = self { v } else { nil } }
    /// The dictionary, if this is one.
    public var dictionaryValue: [String: WireValue]? { if case .dictionary(let v) = self { v } else { nil } }

    /// Checks what libdbus would abort on: strings with NUL characters (D-Bus strings cannot hold
    /// them) and containers nested deeper than ``maximumDepth``.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key path.
    public func validate() throws {
        try validate(at: "", depth: 0)
    }

    /// The deepest nesting of containers Ferry sends (D-Bus allows 32 array levels; each `av` or
    /// `a{sv}` level here costs one array and one variant).
    public static let maximumDepth = 16

    private func validate(at path: String, depth: Int) throws {
        func checkString(_ s: String, _ at: String) throws {
            if s.utf8.contains(0) { throw FerryModelError.invalid("a D-Bus string cannot contain NUL", at: at.isEmpty ? nil : at) }
        }
        switch self {
        case .string(let s): try checkString(s, path)
        case .strings(let ss): for (i, s) in ss.enumerated() { try checkString(s, KeyPath.index(path, i)) }
        case .array(let vs):
            guard depth < WireValue.maximumDepth else { throw FerryModelError.invalid("nested too deeply", at: path) }
            for (i, v) in vs.enumerated() { try v.validate(at: KeyPath.index(path, i), depth: depth + 1) }
        case .dictionary(let d):
            guard depth < WireValue.maximumDepth else { throw FerryModelError.invalid("nested too deeply", at: path) }
            for (k, v) in d {
                try checkString(k, KeyPath.join(path, k))
                try v.validate(at: KeyPath.join(path, k), depth: depth + 1)
            }
        default: break
        }
    }
}

/// A model value with a documented `a{sv}` shape (docs/wire.md).
public protocol WireCodable {
    /// The value as an `a{sv}` dictionary.
    /// - Throws: `FerryModelError` when the value itself is invalid (e.g. an oversized userInfo).
    func wireDictionary() throws -> [String: WireValue]
    /// Reads the value from an `a{sv}` dictionary. Unknown keys are ignored.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the missing or malformed key, or
    ///   `.tooLarge`.
    init(wireDictionary: [String: WireValue]) throws
}
