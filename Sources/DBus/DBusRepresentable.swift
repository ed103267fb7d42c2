#if canImport(FoundationEssentials)
import FerrySystem
import FoundationEssentials
#else
import Foundation
#endif
import CDBus
#if canImport(Glibc)
import Glibc
#endif

/// A Swift type with a fixed D-Bus type, convertible to and from `DBusValue`.
///
/// Conformances: `Bool` (`b`), `UInt8` (`y`), `Int16`…`UInt64`, `Int` (`x`), `UInt` (`t`),
/// `Double` (`d`), `String` (`s`), `ObjectPath` (`o`), `Signature` (`g`), `FileDescriptor`
/// (`h`), `Data` and `[UInt8]` (`ay`), arrays and dictionaries of representable types, and
/// `DBusValue` itself (`v`, so `[String: DBusValue]` is `a{sv}`).
public protocol DBusRepresentable: DBusSignatureProviding, Sendable {
    /// Converts from a D-Bus value.
    ///
    /// - Throws: `org.freedesktop.DBus.Error.InvalidArgs` naming the expected and actual
    ///   signatures when the value has another type.
    init(dbusValue: DBusValue) throws
    /// The D-Bus value of `self`.
    var dbusValue: DBusValue { get }
}

/// A type whose values all have one D-Bus type, known without a value.
///
/// `DBusRepresentable` types provide it, and arrays and dictionaries of them.
public protocol DBusSignatureProviding {
    /// The D-Bus type of every value of this type (one complete type).
    static var dbusSignature: Signature { get }
}

/// A representable type that is a D-Bus basic type, so it can be a dictionary key.
public protocol DBusBasicRepresentable: DBusRepresentable, Hashable {}

extension DBusRepresentable {
    @usableFromInline
    static func mismatch(_ value: DBusValue) -> DBusError {
        DBusError.typeMismatch(expected: dbusSignature.rawValue, actual: value.signature,
                               context: "\(Self.self)")
    }
}

extension Bool: DBusBasicRepresentable {
    /// `b`.
    public static var dbusSignature: Signature { .boolean }
    /// Reads a `b`.
    public init(dbusValue: DBusValue) throws {
        guard case .boolean(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
    /// A `b`.
    public var dbusValue: DBusValue { .boolean(self) }
}

extension UInt8: DBusBasicRepresentable {
    /// `y`.
    public static var dbusSignature: Signature { .byte }
    /// Reads a `y`.
    public init(dbusValue: DBusValue) throws {
        guard case .byte(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
    /// A `y`.
    public var dbusValue: DBusValue { .byte(self) }
}

extension Int16: DBusBasicRepresentable {
    /// `n`.
    public static var dbusSignature: Signature { .int16 }
    /// Reads a `n`.
    public init(dbusValue: DBusValue) throws {
        guard case .int16(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
    /// A `n`.
    public var dbusValue: DBusValue { .int16(self) }
}

extension UInt16: DBusBasicRepresentable {
    /// `q`.
    public static var dbusSignature: Signature { .uint16 }
    /// Reads a `q`.
    public init(dbusValue: DBusValue) throws {
        guard case .uint16(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
    /// A `q`.
    public var dbusValue: DBusValue { .uint16(self) }
}

extension Int32: DBusBasicRepresentable {
    /// `i`.
    public static var dbusSignature: Signature { .int32 }
    /// Reads an `i`.
    public init(dbusValue: DBusValue) throws {
        guard case .int32(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
    /// An `i`.
    public var dbusValue: DBusValue { .int32(self) }
}

extension UInt32: DBusBasicRepresentable {
    /// `u`.
    public static var dbusSignature: Signature { .uint32 }
    /// Reads a `u`.
    public init(dbusValue: DBusValue) throws {
        guard case .uint32(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
    /// A `u`.
    public var dbusValue: DBusValue { .uint32(self) }
}

extension Int64: DBusBasicRepresentable {
    /// `x`.
    public static var dbusSignature: Signature { .int64 }
    /// Reads an `x`.
    public init(dbusValue: DBusValue) throws {
        guard case .int64(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
    /// An `x`.
    public var dbusValue: DBusValue { .int64(self) }
}

extension UInt64: DBusBasicRepresentable {
    /// `t`.
    public static var dbusSignature: Signature { .uint64 }
    /// Reads a `t`.
    public init(dbusValue: DBusValue) throws {
        guard case .uint64(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
    /// A `t`.
    public var dbusValue: DBusValue { .uint64(self) }
}

extension Int: DBusBasicRepresentable {
    /// `x` (64-bit).
    public static var dbusSignature: Signature { .int64 }
    /// Reads an `x`.
    public init(dbusValue: DBusValue) throws {
        guard case .int64(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = Int(v)
    }
    /// An `x`.
    public var dbusValue: DBusValue { .int64(Int64(self)) }
}

extension UInt: DBusBasicRepresentable {
    /// `t` (64-bit).
    public static var dbusSignature: Signature { .uint64 }
    /// Reads a `t`.
    public init(dbusValue: DBusValue) throws {
        guard case .uint64(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = UInt(v)
    }
    /// A `t`.
    public var dbusValue: DBusValue { .uint64(UInt64(self)) }
}

extension Double: DBusBasicRepresentable {
    /// `d`.
    public static var dbusSignature: Signature { .double }
    /// Reads a `d`.
    public init(dbusValue: DBusValue) throws {
        guard case .double(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
    /// A `d`.
    public var dbusValue: DBusValue { .double(self) }
}

extension String: DBusBasicRepresentable {
    /// `s`.
    public static var dbusSignature: Signature { .string }
    /// Reads an `s`.
    public init(dbusValue: DBusValue) throws {
        guard case .string(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
    /// An `s` (validated for NUL when appended to a message).
    public var dbusValue: DBusValue { .string(self) }
}

extension ObjectPath: DBusBasicRepresentable {
    /// `o`.
    public static var dbusSignature: Signature { .objectPath }
    /// Reads an `o`.
    public init(dbusValue: DBusValue) throws {
        guard case .objectPath(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
    /// An `o`.
    public var dbusValue: DBusValue { .objectPath(self) }
}

extension Signature: DBusBasicRepresentable {
    /// `g`.
    public static var dbusSignature: Signature { .signature }
    /// Reads a `g`.
    public init(dbusValue: DBusValue) throws {
        guard case .signature(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
    /// A `g`.
    public var dbusValue: DBusValue { .signature(self) }
}

extension FileDescriptor: DBusRepresentable {
    /// `h`.
    public static var dbusSignature: Signature { .unixFD }
    /// Reads an `h`: a duplicate of the descriptor the value holds, owned by the new object
    /// (the value's own descriptor closes when the value goes away).
    ///
    /// - Throws: `InvalidArgs` on another type, `SystemError` if duplicating fails.
    public convenience init(dbusValue: DBusValue) throws {
        guard case .unixFD(let fd) = dbusValue else { throw Self.mismatch(dbusValue) }
        self.init(taking: try fd.withOpenDescriptor { raw in
            let copy = cdbus_dup_cloexec(raw)
            guard copy >= 0 else { throw DBusError.system("dup", errno: errno) }
            return copy
        })
    }
    /// An `h`.
    public var dbusValue: DBusValue { .unixFD(self) }
}

extension DBusValue: DBusRepresentable {
    /// `v`: a `DBusValue` used as a representable type is carried in a variant.
    public static var dbusSignature: Signature { .variant }
    /// Unwraps one variant.
    public init(dbusValue: DBusValue) throws {
        guard case .variant(let inner) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = inner
    }
    /// `self` in a variant.
    public var dbusValue: DBusValue { .variant(self) }
}

extension Data: DBusRepresentable {
    /// `ay`.
    public static var dbusSignature: Signature { .bytes }
    /// Reads an `ay`.
    public init(dbusValue: DBusValue) throws {
        switch dbusValue {
        case .bytes(let b): self = Data(b)
        case .array(.byte, let elements):
            guard let b = DBusValue.bytesIfAllBytes(elements) else { throw Self.mismatch(dbusValue) }
            self = Data(b)
        default: throw Self.mismatch(dbusValue)
        }
    }
    /// An `ay`.
    public var dbusValue: DBusValue { .bytes(Array(self)) }
}

extension Array: DBusSignatureProviding where Element: DBusSignatureProviding {
    /// `a` + the element's signature.
    public static var dbusSignature: Signature {
        Signature(unchecked: "a" + Element.dbusSignature.rawValue)
    }
}

extension Array: DBusRepresentable where Element: DBusRepresentable {
    /// Reads an array (an `ay` from `bytes` too).
    public init(dbusValue: DBusValue) throws {
        switch dbusValue {
        case .bytes(let bytes) where Element.self == UInt8.self:
            // The same type: reinterpret the buffer (O(1)). `as!` would cast element by element
            // where this initializer runs unspecialized (called through a generic from another
            // module, such as `MethodCall.argument(_:as:)`).
            self = unsafeBitCast(bytes, to: [Element].self)
        case .array(let element, let elements) where element == Element.dbusSignature:
            self = try elements.map { try Element(dbusValue: $0) }
        default:
            throw Self.mismatch(dbusValue)
        }
    }

    /// An array; `[UInt8]` becomes `bytes`.
    public var dbusValue: DBusValue {
        // The same type: reinterpret rather than cast element by element (see `init(dbusValue:)`).
        if Element.self == UInt8.self { return .bytes(unsafeBitCast(self, to: [UInt8].self)) }
        return .array(element: Element.dbusSignature, elements: map(\.dbusValue))
    }
}

extension Dictionary: DBusSignatureProviding
where Key: DBusBasicRepresentable, Value: DBusSignatureProviding {
    /// `a{kv}`.
    public static var dbusSignature: Signature {
        Signature(unchecked: "a{" + Key.dbusSignature.rawValue + Value.dbusSignature.rawValue + "}")
    }
}

extension Dictionary: DBusRepresentable where Key: DBusBasicRepresentable, Value: DBusRepresentable {
    /// Reads a dictionary; a repeated key keeps its last value.
    @inlinable
    public init(dbusValue: DBusValue) throws {
        if Key.self == String.self, Value.self == DBusValue.self {
            // An `a{sv}` of options, the commonest: read concretely, not through generic code
            // (where this runs unspecialized, behind a generic caller).
            self = unsafeBitCast(try dbusValue.asVariantDictionary(), to: [Key: Value].self)
            return
        }
        guard case .dictionary(let k, let v, let entries) = dbusValue,
            k == Key.dbusSignature, v == Value.dbusSignature
        else { throw Self.mismatch(dbusValue) }
        var result = [Key: Value](minimumCapacity: entries.count)
        for entry in entries {
            result[try Key(dbusValue: entry.key)] = try Value(dbusValue: entry.value)
        }
        self = result
    }

    /// A dictionary; entries are sorted by key so that the encoding is stable.
    public var dbusValue: DBusValue {
        // One array of (sort key, entry), sorted in place: each sort key is made once.
        var keyed: [(sortKey: String, entry: DBusDictionaryEntry)] = []
        keyed.reserveCapacity(count)
        for (key, value) in self {
            let keyValue = key.dbusValue
            keyed.append((DBusValue.sortKey(keyValue), DBusDictionaryEntry(key: keyValue, value: value.dbusValue)))
        }
        keyed.sort { $0.sortKey < $1.sortKey }
        return .dictionary(key: Key.dbusSignature, value: Value.dbusSignature, entries: keyed.map(\.entry))
    }
}

extension DBusValue {
    /// A text that orders basic values: strings, paths and signatures by text, numbers by value.
    static func sortKey(_ value: DBusValue) -> String {
        func padded(_ n: UInt64) -> String {
            let digits = String(n)
            return String(repeating: "0", count: 20 - digits.count) + digits
        }
        func signed(_ n: Int64) -> String { padded(UInt64(bitPattern: n) ^ (1 << 63)) }
        switch value {
        case .string(let s): return s
        case .objectPath(let p): return p.rawValue
        case .signature(let g): return g.rawValue
        case .byte(let v): return padded(UInt64(v))
        case .uint16(let v): return padded(UInt64(v))
        case .uint32(let v): return padded(UInt64(v))
        case .uint64(let v): return padded(v)
        case .int16(let v): return signed(Int64(v))
        case .int32(let v): return signed(Int64(v))
        case .int64(let v): return signed(v)
        case .boolean(let v): return v ? "1" : "0"
        default: return value.description
        }
    }
}
