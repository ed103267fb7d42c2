import DBus
import FerryModel
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The one mapping between the model's wire values (docs/wire.md) and D-Bus values, shared by the
/// broker, the client library and the CLI: `av` elements and `a{sv}` values travel in variants.
extension WireValue {
    /// The D-Bus value for this wire value.
    public var dbusValue: DBusValue {
        switch self {
        case .bool(let v): .boolean(v)
        case .int32(let v): .int32(v)
        case .int64(let v): .int64(v)
        case .uint32(let v): .uint32(v)
        case .uint64(let v): .uint64(v)
        case .double(let v): .double(v)
        case .string(let v): .string(v)
        case .bytes(let v): .bytes(Array(v))
        case .strings(let v): .array(of: .string, v.map(DBusValue.string))
        case .array(let v): .array(of: .variant, v.map { .variant($0.dbusValue) })
        case .dictionary(let v): v.dbusValue
        }
    }

    /// Reads a D-Bus value (variants unwrapped). Bytes, 16-bit integers and object paths widen to
    /// the nearest wire case (`ao` reads as `as`); an `ay` reads as bytes however it is spelled
    /// (`.bytes`, or `.array` of `.byte`, which `DBusValue` counts as equal).
    /// - Throws: `FerryModelError` `.invalidArgument` at `keyPath` for what has no wire shape:
    ///   fds, structs, signatures, dictionaries whose keys are not strings.
    public init(dbusValue value: DBusValue, keyPath: String = "") throws(FerryModelError) {
        let value = value.unwrappingVariants
        if let basic = WireValue(basic: value) {
            self = basic
            return
        }
        switch value {
        case .bytes(let v): self = .bytes(Data(v))
        case .array(let element, let elements) where element == .string || element == .objectPath:
            var strings: [String] = []
            strings.reserveCapacity(elements.count)
            for (index, element) in elements.enumerated() {
                switch element {
                case .string(let text): strings.append(text)
                case .objectPath(let path): strings.append(path.rawValue)
                default: throw Self.mismatch("a string", element, keyPath + "[\(index)]")
                }
            }
            self = .strings(strings)
        case .array(let element, let elements) where element == .byte:
            var bytes: [UInt8] = []
            bytes.reserveCapacity(elements.count)
            for (index, element) in elements.enumerated() {
                guard case .byte(let byte) = element else {
                    throw Self.mismatch("a byte", element, keyPath + "[\(index)]")
                }
                bytes.append(byte)
            }
            self = .bytes(Data(bytes))
        case .array(_, let elements):
            var values: [WireValue] = []
            values.reserveCapacity(elements.count)
            for (index, element) in elements.enumerated() {
                values.append(try WireValue(dbusValue: element, keyPath: keyPath + "[\(index)]"))
            }
            self = .array(values)
        case .dictionary:
            self = .dictionary(try [String: WireValue](dbusValue: value, keyPath: keyPath))
        case let other:
            throw Self.mismatch("a property-list value", other, keyPath)
        }
    }

    static func mismatch(_ expected: String, _ value: DBusValue, _ keyPath: String) -> FerryModelError {
        FerryModelError(.invalidArgument, "expected \(expected), found '\(value.signature.rawValue)'",
                        keyPath: keyPath.isEmpty ? nil : keyPath)
    }
}

/// Wire values read straight from a reply's bytes (`Message.plainDictionaries(of:)`), each
/// case as ``WireValue/init(dbusValue:keyPath:)`` reads the same D-Bus value.
extension WireValue: DBusPlainValue {
    /// A basic value: bytes, 16-bit integers and object paths widen to the nearest wire case;
    /// nil for a signature or an fd, which have no wire shape, and for what is not basic.
    public init?(basic value: DBusValue) {
        switch value {
        case .boolean(let v): self = .bool(v)
        case .byte(let v): self = .uint32(UInt32(v))
        case .int16(let v): self = .int32(Int32(v))
        case .uint16(let v): self = .uint32(UInt32(v))
        case .int32(let v): self = .int32(v)
        case .uint32(let v): self = .uint32(v)
        case .int64(let v): self = .int64(v)
        case .uint64(let v): self = .uint64(v)
        case .double(let v): self = .double(v)
        case .string(let v): self = .string(v)
        case .objectPath(let v): self = .string(v.rawValue)
        default: return nil
        }
    }

    /// An `ay`: `.bytes`.
    public init(bytes: UnsafeRawBufferPointer) { self = .bytes(Data(bytes)) }
    /// An `as` or `ao`: `.strings`.
    public init(strings: [String]) { self = .strings(strings) }
    /// Any other array: `.array`.
    public init(elements: [WireValue]) { self = .array(elements) }
    /// A dictionary with string keys: `.dictionary`.
    public init(entries: [String: WireValue]) { self = .dictionary(entries) }
}

extension Dictionary where Key == String, Value == WireValue {
    /// The `a{sv}` value for this wire dictionary (keys sorted, so equal dictionaries marshal alike).
    public var dbusValue: DBusValue {
        .dictionary(key: .string, value: .variant, entries: sorted { $0.key < $1.key }.map {
            DBusDictionaryEntry(key: .string($0.key), value: .variant($0.value.dbusValue))
        })
    }

    /// Reads an `a{sv}` (or any string-keyed dictionary) value.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key path of the first value
    ///   without a wire shape, or `keyPath` itself when `value` is not such a dictionary.
    public init(dbusValue value: DBusValue, keyPath: String = "") throws(FerryModelError) {
        guard case .dictionary(_, _, let entries) = value.unwrappingVariants else {
            throw WireValue.mismatch("a dictionary (a{sv})", value.unwrappingVariants, keyPath)
        }
        var out = [String: WireValue](minimumCapacity: entries.count)
        for entry in entries {
            guard case .string(let key) = entry.key.unwrappingVariants else {
                throw WireValue.mismatch("a dictionary with string keys", entry.key, keyPath)
            }
            out[key] = try WireValue(dbusValue: entry.value, keyPath: keyPath.isEmpty ? key : keyPath + "." + key)
        }
        self = out
    }
}

extension WireCodable {
    /// The value as an `a{sv}` D-Bus value.
    /// - Throws: what ``wireDictionary()`` throws.
    public func dbusValue() throws -> DBusValue {
        try wireDictionary().dbusValue
    }

    /// Reads the value from the `a{sv}` D-Bus value found at `keyPath`; its errors name keys
    /// under `keyPath` (`options.userActivity.activityType`).
    /// - Throws: `FerryModelError`, as ``init(wireDictionary:)`` and the conversion throw.
    public init(dbusValue value: DBusValue, keyPath: String = "") throws {
        let entries = try [String: WireValue](dbusValue: value, keyPath: keyPath)
        do {
            try self.init(wireDictionary: entries)
        } catch let error as FerryModelError {
            throw keyPath.isEmpty ? error : error.nested(under: keyPath)
        }
    }
}
