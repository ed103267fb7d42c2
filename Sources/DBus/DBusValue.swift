import FerrySystem

/// One D-Bus value of any type, nested to any depth.
///
/// Containers carry their element types, so an empty array or dictionary keeps its signature.
/// `bytes` is the fast path for `ay` (stored contiguously, marshalled in one copy); reading an
/// `ay` always gives `bytes`, and `.array(element: "y", …)` compares equal to the same `bytes`.
/// Doubles compare by bit pattern, so a NaN equals itself and `-0.0` differs from `0.0`: equality
/// means "the same on the wire".
public enum DBusValue: Sendable {
    /// `y`.
    case byte(UInt8)
    /// `b`.
    case boolean(Bool)
    /// `n`.
    case int16(Int16)
    /// `q`.
    case uint16(UInt16)
    /// `i`.
    case int32(Int32)
    /// `u`.
    case uint32(UInt32)
    /// `x`.
    case int64(Int64)
    /// `t`.
    case uint64(UInt64)
    /// `d`.
    case double(Double)
    /// `s`: no NUL characters.
    case string(String)
    /// `o`.
    case objectPath(ObjectPath)
    /// `g`.
    case signature(Signature)
    /// `h`: appending duplicates the descriptor; the value keeps the original alive.
    case unixFD(FileDescriptor)
    /// `ay`, stored contiguously.
    case bytes([UInt8])
    /// `a…`: every element must have signature `element` (a single complete type).
    case array(element: Signature, elements: [DBusValue])
    /// `a{kv}`: ordered entries; keys have the basic type `key`, values the type `value`.
    case dictionary(key: Signature, value: Signature, entries: [DBusDictionaryEntry])
    /// `(…)`: one or more fields.
    case structure([DBusValue])
    /// `v`: a value together with its own signature.
    indirect case variant(DBusValue)
}

/// One key/value pair of a `DBusValue.dictionary`.
public struct DBusDictionaryEntry: Sendable, Hashable {
    /// The key: a basic value.
    public var key: DBusValue
    /// The value.
    public var value: DBusValue

    /// Creates an entry.
    public init(key: DBusValue, value: DBusValue) {
        self.key = key
        self.value = value
    }
}

extension DBusValue {
    /// The value's D-Bus type signature (one complete type).
    public var signature: Signature {
        switch self {
        case .byte: return .byte
        case .boolean: return .boolean
        case .int16: return .int16
        case .uint16: return .uint16
        case .int32: return .int32
        case .uint32: return .uint32
        case .int64: return .int64
        case .uint64: return .uint64
        case .double: return .double
        case .string: return .string
        case .objectPath: return .objectPath
        case .signature: return .signature
        case .unixFD: return .unixFD
        case .bytes: return .bytes
        case .array(let element, _): return Signature(unchecked: "a" + element.rawValue)
        case .dictionary(let key, let value, _):
            return Signature(unchecked: "a{" + key.rawValue + value.rawValue + "}")
        case .structure(let fields):
            return Signature(unchecked: "(" + fields.map(\.signature.rawValue).joined() + ")")
        case .variant: return .variant
        }
    }

    /// A string value built from UTF-8 bytes.
    ///
    /// - Throws: `org.ferry.DBus.Error.InvalidValue` when the bytes are not valid UTF-8 or
    ///   contain NUL.
    public static func string(utf8 bytes: some Collection<UInt8>) throws -> DBusValue {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw DBusError.invalidValue("string is not valid UTF-8")
        }
        guard !bytes.contains(0) else { throw DBusError.invalidValue("string contains NUL") }
        return .string(text)
    }

    /// An array of `elements`, all of type `element`; `ay` becomes `bytes`.
    public static func array(of element: Signature, _ elements: [DBusValue]) -> DBusValue {
        if element == .byte, let bytes = Self.bytesIfAllBytes(elements) { return .bytes(bytes) }
        return .array(element: element, elements: elements)
    }

    /// An `a{sv}` dictionary from `entries` (keys in the order given).
    public static func variantDictionary(_ entries: KeyValuePairs<String, DBusValue>) -> DBusValue {
        .dictionary(key: .string, value: .variant,
                    entries: entries.map { DBusDictionaryEntry(key: .string($0.key), value: .variant($0.value)) })
    }

    /// The value with every level of `variant` removed.
    public var unwrappingVariants: DBusValue {
        var value = self
        while case .variant(let inner) = value { value = inner }
        return value
    }

    /// Converts to `T`, throwing a named error when the type does not match.
    ///
    /// - Throws: `org.freedesktop.DBus.Error.InvalidArgs` naming expected and actual signatures.
    @inlinable
    public func get<T: DBusRepresentable>(_ type: T.Type = T.self) throws -> T {
        try T(dbusValue: self)
    }

    static func bytesIfAllBytes(_ elements: [DBusValue]) -> [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(elements.count)
        for e in elements {
            guard case .byte(let b) = e else { return nil }
            bytes.append(b)
        }
        return bytes
    }
}

extension DBusValue: Hashable {
    /// Wire equality: doubles by bit pattern, `bytes` equal to an `ay` array of the same bytes.
    public static func == (lhs: DBusValue, rhs: DBusValue) -> Bool {
        switch (lhs, rhs) {
        case let (.byte(a), .byte(b)): return a == b
        case let (.boolean(a), .boolean(b)): return a == b
        case let (.int16(a), .int16(b)): return a == b
        case let (.uint16(a), .uint16(b)): return a == b
        case let (.int32(a), .int32(b)): return a == b
        case let (.uint32(a), .uint32(b)): return a == b
        case let (.int64(a), .int64(b)): return a == b
        case let (.uint64(a), .uint64(b)): return a == b
        case let (.double(a), .double(b)): return a.bitPattern == b.bitPattern
        case let (.string(a), .string(b)): return a == b
        case let (.objectPath(a), .objectPath(b)): return a == b
        case let (.signature(a), .signature(b)): return a == b
        case let (.unixFD(a), .unixFD(b)): return a == b
        case let (.bytes(a), .bytes(b)): return a == b
        case let (.bytes(a), .array(e, elements)), let (.array(e, elements), .bytes(a)):
            return e == .byte && bytesIfAllBytes(elements) == a
        case let (.array(e1, a), .array(e2, b)): return e1 == e2 && a == b
        case let (.dictionary(k1, v1, a), .dictionary(k2, v2, b)):
            return k1 == k2 && v1 == v2 && a == b
        case let (.structure(a), .structure(b)): return a == b
        case let (.variant(a), .variant(b)): return a == b
        default: return false
        }
    }

    /// Hashes consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .byte(let v): hasher.combine(0); hasher.combine(v)
        case .boolean(let v): hasher.combine(1); hasher.combine(v)
        case .int16(let v): hasher.combine(2); hasher.combine(v)
        case .uint16(let v): hasher.combine(3); hasher.combine(v)
        case .int32(let v): hasher.combine(4); hasher.combine(v)
        case .uint32(let v): hasher.combine(5); hasher.combine(v)
        case .int64(let v): hasher.combine(6); hasher.combine(v)
        case .uint64(let v): hasher.combine(7); hasher.combine(v)
        case .double(let v): hasher.combine(8); hasher.combine(v.bitPattern)
        case .string(let v): hasher.combine(9); hasher.combine(v)
        case .objectPath(let v): hasher.combine(10); hasher.combine(v)
        case .signature(let v): hasher.combine(11); hasher.combine(v)
        case .unixFD(let v): hasher.combine(12); hasher.combine(v)
        case .bytes(let v): hasher.combine(13); hasher.combine(v)
        case .array(let e, let elements):
            if e == .byte, let bytes = Self.bytesIfAllBytes(elements) {
                hasher.combine(13); hasher.combine(bytes)
            } else {
                hasher.combine(14); hasher.combine(e); hasher.combine(elements)
            }
        case .dictionary(let k, let v, let entries):
            hasher.combine(15); hasher.combine(k); hasher.combine(v); hasher.combine(entries)
        case .structure(let fields): hasher.combine(16); hasher.combine(fields)
        case .variant(let v): hasher.combine(17); hasher.combine(v)
        }
    }
}

extension DBusValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByFloatLiteral
{
    /// A `s` value.
    public init(stringLiteral value: String) { self = .string(value) }
    /// A `b` value.
    public init(booleanLiteral value: Bool) { self = .boolean(value) }
    /// A `d` value.
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension DBusValue: CustomStringConvertible {
    /// A compact, GVariant-like rendering for logs and test failures.
    public var description: String {
        switch self {
        case .byte(let v): return "byte \(v)"
        case .boolean(let v): return "\(v)"
        case .int16(let v): return "int16 \(v)"
        case .uint16(let v): return "uint16 \(v)"
        case .int32(let v): return "\(v)"
        case .uint32(let v): return "uint32 \(v)"
        case .int64(let v): return "int64 \(v)"
        case .uint64(let v): return "uint64 \(v)"
        case .double(let v): return "\(v)"
        case .string(let v): return v.debugDescription
        case .objectPath(let v): return "objectpath '\(v)'"
        case .signature(let v): return "signature '\(v)'"
        case .unixFD(let v): return "handle \(v)"
        case .bytes(let v):
            return v.count > 32 ? "bytes(\(v.count))" : "bytes \(v)"
        case .array(let e, let elements):
            return elements.isEmpty
                ? "@a\(e) []" : "[" + elements.map(\.description).joined(separator: ", ") + "]"
        case .dictionary(let k, let v, let entries):
            return entries.isEmpty
                ? "@a{\(k)\(v)} {}"
                : "{" + entries.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        case .structure(let fields): return "(" + fields.map(\.description).joined(separator: ", ") + ")"
        case .variant(let v): return "<\(v)>"
        }
    }
}
