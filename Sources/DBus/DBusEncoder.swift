/// Encodes `Encodable` Swift values as D-Bus values.
///
/// A Swift struct becomes either a D-Bus struct `(…)` of its fields in declaration order, or an
/// `a{sv}` keyed by field name (choose with `layout`). Types that are `DBusRepresentable`
/// (numbers, strings, `Data`, `ObjectPath`, `FileDescriptor`, arrays and dictionaries of them)
/// keep their own D-Bus type: `Int` is `x`, `Int8` becomes `n`, `Float` becomes `d`.
///
/// Optionals: in the `dictionary` layout a nil field is simply absent. A D-Bus struct cannot
/// hold "nothing", so in the `structure` layout a nil field is left out, which shifts the later
/// fields: use optionals only as trailing fields there (or use the dictionary layout).
/// An empty array has no element to take its type from: its element type comes from the
/// array's static type when that is `DBusSignatureProviding` (all `DBusRepresentable` types
/// are; a `Codable` struct can declare `static var dbusSignature`), otherwise it is `av`.
public struct DBusEncoder: Sendable {
    /// How keyed containers (Swift structs and classes) are laid out.
    public enum Layout: Sendable, Hashable {
        /// A D-Bus struct of the fields in the order they are encoded.
        case structure
        /// An `a{sv}` keyed by the coding keys' string values.
        case dictionary
    }

    /// How keyed containers are laid out.
    public var layout: Layout

    /// Creates an encoder.
    public init(layout: Layout = .structure) { self.layout = layout }

    /// Encodes `value`.
    ///
    /// - Throws: `org.ferry.DBus.Error.InvalidValue` when the value cannot be expressed in
    ///   D-Bus (an empty struct, mixed element types in the structure layout, nil in a struct).
    public func encode<T: Encodable>(_ value: T) throws -> DBusValue {
        let slot = EncodingSlot()
        do {
            try EncodingSlot.fill(slot, with: value, codingPath: [], layout: layout)
        } catch let error as EncodingError {
            throw DBusError.invalidValue("\(error)")
        }
        return try slot.finish(layout: layout, codingPath: [])
    }
}

/// Marks Swift dictionaries with string keys, which always encode as `a{sv}`.
protocol StringKeyedDictionaryMarker {}
extension Dictionary: StringKeyedDictionaryMarker where Key == String {}

/// Gives the element type of an array type, for the element signature of empty arrays.
protocol ArrayMarker { static var elementType: Any.Type { get } }
extension Array: ArrayMarker { static var elementType: Any.Type { Element.self } }

/// One place in the tree being encoded.
final class EncodingSlot {
    enum Content {
        case value(DBusValue)
        case keyed(KeyedStorage)
        case unkeyed(UnkeyedStorage)
    }

    final class KeyedStorage {
        var entries: [(String, EncodingSlot)] = []
        var isDictionary = false
    }

    final class UnkeyedStorage {
        var items: [EncodingSlot] = []
        var elementHint: Signature?
    }

    var content: Content?

    static func fill<T: Encodable>(_ slot: EncodingSlot, with value: T, codingPath: [any CodingKey],
                                   layout: DBusEncoder.Layout) throws
    {
        if let representable = value as? any DBusRepresentable {
            slot.content = .value(representable.dbusValue)
            return
        }
        let encoder = SlotEncoder(slot: slot, codingPath: codingPath, layout: layout)
        try value.encode(to: encoder)
        switch slot.content {
        case .keyed(let storage) where value is any StringKeyedDictionaryMarker:
            storage.isDictionary = true
        case .unkeyed(let storage):
            if let array = T.self as? any ArrayMarker.Type,
                let element = array.elementType as? any DBusSignatureProviding.Type
            {
                storage.elementHint = element.dbusSignature
            }
        default: break
        }
    }

    func finish(layout: DBusEncoder.Layout, codingPath: [any CodingKey]) throws -> DBusValue {
        let place = codingPath.isEmpty ? "the value" : codingPath.map(\.stringValue).joined(separator: ".")
        switch content {
        case nil:
            throw DBusError.invalidValue("nothing was encoded for \(place)")
        case .value(let value):
            return value
        case .keyed(let storage):
            if layout == .dictionary || storage.isDictionary {
                var entries: [DBusDictionaryEntry] = []
                for (key, slot) in storage.entries where slot.content != nil {
                    let value = try slot.finish(layout: layout, codingPath: codingPath + [AnyKey(key)])
                    entries.append(DBusDictionaryEntry(key: .string(key), value: .variant(value)))
                }
                return .dictionary(key: .string, value: .variant, entries: entries)
            }
            let fields = try storage.entries.map {
                try $0.1.finish(layout: layout, codingPath: codingPath + [AnyKey($0.0)])
            }
            guard !fields.isEmpty else {
                throw DBusError.invalidValue("\(place) has no fields: D-Bus has no empty struct")
            }
            return .structure(fields)
        case .unkeyed(let storage):
            let elements = try storage.items.enumerated().map {
                try $0.element.finish(layout: layout, codingPath: codingPath + [AnyKey($0.offset)])
            }
            if let hint = storage.elementHint {
                return .array(of: hint, elements)
            }
            guard let first = elements.first else { return .array(element: .variant, elements: []) }
            let signature = first.signature
            if elements.allSatisfy({ $0.signature == signature }) {
                return .array(of: signature, elements)
            }
            guard layout == .dictionary else {
                throw DBusError.invalidValue("\(place) has elements of different types")
            }
            return .array(element: .variant, elements: elements.map { .variant($0) })
        }
    }
}

/// A coding key made from a string or an index.
struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(_ string: String) { stringValue = string; intValue = nil }
    init(_ int: Int) { stringValue = "\(int)"; intValue = int }
    init?(stringValue: String) { self.init(stringValue) }
    init?(intValue: Int) { self.init(intValue) }
}

/// The `Encoder` that fills one slot.
struct SlotEncoder: Encoder {
    let slot: EncodingSlot
    let codingPath: [any CodingKey]
    let layout: DBusEncoder.Layout
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let storage: EncodingSlot.KeyedStorage
        if case .keyed(let existing) = slot.content {
            storage = existing
        } else {
            storage = EncodingSlot.KeyedStorage()
            slot.content = .keyed(storage)
        }
        return KeyedEncodingContainer(KeyedSlotContainer<Key>(storage: storage, codingPath: codingPath, layout: layout))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let storage: EncodingSlot.UnkeyedStorage
        if case .unkeyed(let existing) = slot.content {
            storage = existing
        } else {
            storage = EncodingSlot.UnkeyedStorage()
            slot.content = .unkeyed(storage)
        }
        return UnkeyedSlotContainer(storage: storage, codingPath: codingPath, layout: layout)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleSlotContainer(slot: slot, codingPath: codingPath, layout: layout)
    }
}

/// The D-Bus value of a Swift primitive, or nil for other types.
func primitiveDBusValue(_ value: Any) -> DBusValue? {
    switch value {
    case let v as Bool: return .boolean(v)
    case let v as String: return .string(v)
    case let v as Double: return .double(v)
    case let v as Float: return .double(Double(v))
    case let v as Int: return .int64(Int64(v))
    case let v as Int8: return .int16(Int16(v))
    case let v as Int16: return .int16(v)
    case let v as Int32: return .int32(v)
    case let v as Int64: return .int64(v)
    case let v as UInt: return .uint64(UInt64(v))
    case let v as UInt8: return .byte(v)
    case let v as UInt16: return .uint16(v)
    case let v as UInt32: return .uint32(v)
    case let v as UInt64: return .uint64(v)
    default: return nil
    }
}

struct SingleSlotContainer: SingleValueEncodingContainer {
    let slot: EncodingSlot
    let codingPath: [any CodingKey]
    let layout: DBusEncoder.Layout

    mutating func encodeNil() throws {
        throw DBusError.invalidValue(
            "nil at \(codingPath.map(\.stringValue).joined(separator: ".")): D-Bus has no null value")
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        if let primitive = primitiveDBusValue(value) {
            slot.content = .value(primitive)
        } else {
            try EncodingSlot.fill(slot, with: value, codingPath: codingPath, layout: layout)
        }
    }
}

struct KeyedSlotContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let storage: EncodingSlot.KeyedStorage
    let codingPath: [any CodingKey]
    let layout: DBusEncoder.Layout

    private func newSlot(_ key: Key) -> EncodingSlot {
        let slot = EncodingSlot()
        storage.entries.append((key.stringValue, slot))
        return slot
    }

    mutating func encodeNil(forKey key: Key) throws {
        guard layout == .dictionary || storage.isDictionary else {
            throw DBusError.invalidValue("nil for '\(key.stringValue)': a D-Bus struct cannot hold nil")
        }
        // Absent in a dictionary.
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let slot = newSlot(key)
        if let primitive = primitiveDBusValue(value) {
            slot.content = .value(primitive)
        } else {
            try EncodingSlot.fill(slot, with: value, codingPath: codingPath + [key], layout: layout)
        }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        SlotEncoder(slot: newSlot(key), codingPath: codingPath + [key], layout: layout)
            .container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        SlotEncoder(slot: newSlot(key), codingPath: codingPath + [key], layout: layout).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        SlotEncoder(slot: newSlot(Key(stringValue: "super")!), codingPath: codingPath, layout: layout)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        SlotEncoder(slot: newSlot(key), codingPath: codingPath + [key], layout: layout)
    }
}

struct UnkeyedSlotContainer: UnkeyedEncodingContainer {
    let storage: EncodingSlot.UnkeyedStorage
    let codingPath: [any CodingKey]
    let layout: DBusEncoder.Layout
    var count: Int { storage.items.count }

    private func newSlot() -> EncodingSlot {
        let slot = EncodingSlot()
        storage.items.append(slot)
        return slot
    }

    mutating func encodeNil() throws {
        throw DBusError.invalidValue("nil in an array: D-Bus has no null value")
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let slot = newSlot()
        if let primitive = primitiveDBusValue(value) {
            slot.content = .value(primitive)
        } else {
            try EncodingSlot.fill(slot, with: value, codingPath: codingPath + [AnyKey(count - 1)], layout: layout)
        }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
        -> KeyedEncodingContainer<NestedKey>
    {
        SlotEncoder(slot: newSlot(), codingPath: codingPath, layout: layout).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        SlotEncoder(slot: newSlot(), codingPath: codingPath, layout: layout).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        SlotEncoder(slot: newSlot(), codingPath: codingPath, layout: layout)
    }
}
