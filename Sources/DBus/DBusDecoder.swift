/// Decodes `Decodable` Swift values from D-Bus values: the inverse of `DBusEncoder`.
///
/// A keyed type (a Swift struct) is read from a D-Bus struct `(…)` field by field in the order
/// the type decodes them, or from a string-keyed dictionary such as `a{sv}` by key, whichever
/// the value is (`layout` only names what the error expects). Unknown dictionary keys are
/// ignored; absent keys decode optionals as nil. Variants are unwrapped wherever they appear.
/// A value of the wrong type throws `org.freedesktop.DBus.Error.InvalidArgs` naming the
/// expected and actual signatures and the coding path.
public struct DBusDecoder: Sendable {
    /// The layout expected for keyed types, used in error messages.
    public var layout: DBusEncoder.Layout

    /// Creates a decoder.
    public init(layout: DBusEncoder.Layout = .structure) { self.layout = layout }

    /// Decodes a `T` from `value`.
    ///
    /// - Throws: `DBusError` named `InvalidArgs` when `value` does not match `T`.
    public func decode<T: Decodable>(_ type: T.Type, from value: DBusValue) throws -> T {
        do {
            return try ValueDecoder(value: value, codingPath: [], layout: layout).decodeValue(T.self)
        } catch let error as DecodingError {
            throw DBusError(.invalidArgs, "\(error)")
        }
    }
}

private func pathText(_ path: [any CodingKey]) -> String {
    path.isEmpty ? "the value" : path.map(\.stringValue).joined(separator: ".")
}

/// Decodes from one (variant-unwrapped) value.
struct ValueDecoder: Decoder, SingleValueDecodingContainer {
    let value: DBusValue
    let codingPath: [any CodingKey]
    let layout: DBusEncoder.Layout
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(value: DBusValue, codingPath: [any CodingKey], layout: DBusEncoder.Layout) {
        self.value = value.unwrappingVariants
        self.codingPath = codingPath
        self.layout = layout
    }

    func mismatch(_ expected: String) -> DBusError {
        DBusError.typeMismatch(expected: expected, actual: value.signature, context: pathText(codingPath))
    }

    func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        if let primitive = try decodePrimitive(type) { return primitive }
        if let representable = T.self as? any DBusRepresentable.Type {
            do {
                return try representable.init(dbusValue: value) as! T
            } catch let error as DBusError where error.name == .invalidArgs {
                throw mismatch(representable.dbusSignature.rawValue)
            }
        }
        return try T(from: self)
    }

    private func decodePrimitive<T>(_ type: T.Type) throws -> T? {
        func get<U>(_ expected: String, _ extract: (DBusValue) -> U?) throws -> T {
            guard let v = extract(value) else { throw mismatch(expected) }
            return v as! T
        }
        switch type {
        case is Bool.Type: return try get("b") { if case .boolean(let v) = $0 { v } else { nil } }
        case is String.Type: return try get("s") { if case .string(let v) = $0 { v } else { nil } }
        case is Double.Type: return try get("d") { if case .double(let v) = $0 { v } else { nil } }
        case is Float.Type: return try get("d") { if case .double(let v) = $0 { Float(v) } else { nil } }
        case is Int.Type: return try get("x") { if case .int64(let v) = $0 { Int(v) } else { nil } }
        case is Int8.Type:
            return try get("n") { if case .int16(let v) = $0 { Int8(exactly: v) } else { nil } }
        case is Int16.Type: return try get("n") { if case .int16(let v) = $0 { v } else { nil } }
        case is Int32.Type: return try get("i") { if case .int32(let v) = $0 { v } else { nil } }
        case is Int64.Type: return try get("x") { if case .int64(let v) = $0 { v } else { nil } }
        case is UInt.Type: return try get("t") { if case .uint64(let v) = $0 { UInt(v) } else { nil } }
        case is UInt8.Type: return try get("y") { if case .byte(let v) = $0 { v } else { nil } }
        case is UInt16.Type: return try get("q") { if case .uint16(let v) = $0 { v } else { nil } }
        case is UInt32.Type: return try get("u") { if case .uint32(let v) = $0 { v } else { nil } }
        case is UInt64.Type: return try get("t") { if case .uint64(let v) = $0 { v } else { nil } }
        default: return nil
        }
    }

    // Decoder

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        switch value {
        case .structure(let fields):
            return KeyedDecodingContainer(
                StructFieldsContainer<Key>(fields: fields, codingPath: codingPath, layout: layout))
        case .dictionary(let key, _, let entries) where key == .string:
            var byKey: [String: DBusValue] = [:]
            for entry in entries {
                if case .string(let k) = entry.key { byKey[k] = entry.value }
            }
            return KeyedDecodingContainer(
                DictionaryEntriesContainer<Key>(entries: byKey, codingPath: codingPath, layout: layout))
        default:
            throw mismatch(layout == .structure ? "(…)" : "a{sv}")
        }
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        switch value {
        case .array(_, let elements), .structure(let elements):
            return ElementsContainer(elements: elements, codingPath: codingPath, layout: layout)
        case .bytes(let bytes):
            return ElementsContainer(elements: bytes.map { .byte($0) }, codingPath: codingPath, layout: layout)
        default:
            throw mismatch("a…")
        }
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    // SingleValueDecodingContainer

    func decodeNil() -> Bool { false }

    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decodeValue(type) }
}

/// A D-Bus struct read field by field, in order.
final class StructFieldsContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let fields: [DBusValue]
    let codingPath: [any CodingKey]
    let layout: DBusEncoder.Layout
    private var index = 0

    init(fields: [DBusValue], codingPath: [any CodingKey], layout: DBusEncoder.Layout) {
        self.fields = fields
        self.codingPath = codingPath
        self.layout = layout
    }

    var allKeys: [Key] { [] }

    func contains(_ key: Key) -> Bool { index < fields.count }

    func decodeNil(forKey key: Key) throws -> Bool { index >= fields.count }

    private func next(_ key: Key) throws -> ValueDecoder {
        guard index < fields.count else {
            throw DBusError(.invalidArgs,
                            "struct at \(pathText(codingPath)) has \(fields.count) fields; '\(key.stringValue)' is missing")
        }
        defer { index += 1 }
        return ValueDecoder(value: fields[index], codingPath: codingPath + [key], layout: layout)
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try next(key).decodeValue(type)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try next(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try next(key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { try next(Key(stringValue: "super")!) }

    func superDecoder(forKey key: Key) throws -> any Decoder { try next(key) }
}

/// A string-keyed dictionary read by key.
struct DictionaryEntriesContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let entries: [String: DBusValue]
    let codingPath: [any CodingKey]
    let layout: DBusEncoder.Layout

    var allKeys: [Key] { entries.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { entries[key.stringValue] != nil }

    func decodeNil(forKey key: Key) throws -> Bool { entries[key.stringValue] == nil }

    private func decoder(_ key: Key) throws -> ValueDecoder {
        guard let value = entries[key.stringValue] else {
            throw DBusError(.invalidArgs, "missing key '\(key.stringValue)' in \(pathText(codingPath))")
        }
        return ValueDecoder(value: value, codingPath: codingPath + [key], layout: layout)
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decoder(key).decodeValue(type)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try decoder(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try decoder(key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { try decoder(Key(stringValue: "super")!) }

    func superDecoder(forKey key: Key) throws -> any Decoder { try decoder(key) }
}

/// Array elements (or struct fields) read in order.
struct ElementsContainer: UnkeyedDecodingContainer {
    let elements: [DBusValue]
    let codingPath: [any CodingKey]
    let layout: DBusEncoder.Layout
    var currentIndex = 0

    init(elements: [DBusValue], codingPath: [any CodingKey], layout: DBusEncoder.Layout) {
        self.elements = elements
        self.codingPath = codingPath
        self.layout = layout
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    mutating func decodeNil() throws -> Bool { false }

    private mutating func next() throws -> ValueDecoder {
        guard !isAtEnd else {
            throw DBusError(.invalidArgs, "\(pathText(codingPath)) has only \(elements.count) elements")
        }
        defer { currentIndex += 1 }
        return ValueDecoder(value: elements[currentIndex], codingPath: codingPath + [AnyKey(currentIndex)],
                            layout: layout)
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next().decodeValue(type) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try next().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next().unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder { try next() }
}
