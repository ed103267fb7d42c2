/// An `a{sv}` dictionary: string keys, values of any type. Values are stored unwrapped (the
/// variant layer is added when marshalled and removed when read), and a key that is absent
/// stands for "no value" (D-Bus has no nil).
public typealias VariantDictionary = [String: DBusValue]

extension Dictionary where Key == String, Value == DBusValue {
    /// The value for `key`, converted to `T`.
    ///
    /// - Throws: `InvalidArgs` when the key is absent or its value has another type (the
    ///   message names the key and both signatures).
    public func value<T: DBusRepresentable>(forKey key: String, as type: T.Type = T.self) throws -> T {
        guard let value = self[key] else {
            throw DBusError(.invalidArgs, "missing key '\(key)' (expected a value of signature '\(T.dbusSignature)')")
        }
        return try Self.convert(value, key)
    }

    /// The value for `key` converted to `T`, or nil when the key is absent.
    ///
    /// - Throws: `InvalidArgs` when the value has another type.
    public func valueIfPresent<T: DBusRepresentable>(forKey key: String, as type: T.Type = T.self) throws -> T? {
        guard let value = self[key] else { return nil }
        return try Self.convert(value, key)
    }

    /// Stores `value` under `key`; nil removes the key.
    public mutating func set<T: DBusRepresentable>(_ key: String, to value: T?) {
        if let value {
            self[key] = value.dbusValue
        } else {
            removeValue(forKey: key)
        }
    }

    private static func convert<T: DBusRepresentable>(_ value: DBusValue, _ key: String) throws -> T {
        do {
            return try T(dbusValue: value)
        } catch let error as DBusError where error.name == .invalidArgs {
            throw DBusError.typeMismatch(expected: T.dbusSignature.rawValue, actual: value.signature,
                                         context: "key '\(key)'")
        }
    }
}

extension DBusValue {
    /// This `a{sv}` as a ``VariantDictionary`` (values unwrapped), converted concretely, outside
    /// any generic context (`Dictionary.init(dbusValue:)` uses it); a repeated key keeps its last
    /// value. The opposite of ``variantDictionary(_:)``.
    @usableFromInline
    func asVariantDictionary() throws -> [String: DBusValue] {
        guard case .dictionary(.string, .variant, let entries) = self else { throw VariantDictionary.mismatch(self) }
        // Not `reserveCapacity`, which the stdlib does not inline (see `WireReader.init(dbus:path:)`).
        var result = [String: DBusValue](minimumCapacity: entries.count)
        for entry in entries {
            guard case .string(let key) = entry.key, case .variant(let value) = entry.value else {
                throw VariantDictionary.mismatch(self)
            }
            result[key] = value
        }
        return result
    }
}
