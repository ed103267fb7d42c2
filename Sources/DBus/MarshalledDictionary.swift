/// An `a{sv}` marshalled once and written into later messages as it is.
///
/// For a large reply made of many dictionaries that seldom change (ferryd's `ListSessions`):
/// each costs a copy of its bytes instead of a validation walk and a marshalling of every value,
/// and the reply no tree of `DBusValue`s. It goes into a message on the typed path
/// (`MethodCall.reply(_:)`, `Message.methodReturn(replyingTo:values:)`), alone or as the element
/// of an array.
///
/// The entries are kept in this machine's byte order, the first at offset 0. A dictionary entry
/// always starts 8-aligned, and its values' padding counts from there, so the bytes are the same
/// wherever the dictionary lands in a message. A message written in the other byte order (tests
/// only) takes the `DBusValue` path instead.
public struct MarshalledDictionary: Sendable, Equatable {
    /// The entries as the wire has them, each padded to 8 bytes before it.
    private var entries: [UInt8]

    /// Marshals `dictionary`, entries sorted by key (as its `dbusValue` orders them).
    ///
    /// - Throws: `DBusError` when a value fails validation (a string with NUL, a value over the
    ///   limits) or holds a unix fd, which only libdbus can attach to a message.
    public init(_ dictionary: [String: DBusValue]) throws {
        entries = try Self.marshal(dictionary.sorted { $0.key < $1.key })
    }

    private init(entries: [UInt8]) { self.entries = entries }

    /// This dictionary with `more` entries after its own, in their order. D-Bus does not forbid
    /// a key twice; readers here keep the last one.
    ///
    /// - Throws: as `init(_:)`.
    public func adding(_ more: KeyValuePairs<String, DBusValue>) throws -> MarshalledDictionary {
        MarshalledDictionary(entries: try Self.marshal(more, after: entries))
    }

    /// The entries `pairs` marshalled after `prefix` (padded to their first).
    private static func marshal(_ pairs: some Sequence<(key: String, value: DBusValue)>,
                                after prefix: [UInt8] = []) throws -> [UInt8] {
        do {
            return try WireWriter.fragment(after: prefix) { writer in
                for (key, value) in pairs {
                    writer.align(8)
                    try key.write(to: &writer)
                    try value.write(to: &writer)
                }
            }
        } catch is WireWriter.NeedsLibdbus {
            throw DBusError.invalidValue("a marshalled dictionary cannot hold a unix fd")
        }
    }
}

extension MarshalledDictionary: DBusRepresentable {
    /// `a{sv}`.
    public static var dbusSignature: Signature { "a{sv}" }

    /// - Throws: `InvalidArgs` when `value` is not an `a{sv}`, `InvalidValue` for an entry of
    ///   other types; as `init(_:)` for its values.
    public init(dbusValue value: DBusValue) throws {
        guard case .dictionary(.string, .variant, let pairs) = value else {
            throw DBusError.typeMismatch(expected: "a{sv}", actual: value.signature, context: "a marshalled dictionary")
        }
        entries = try Self.marshal(pairs.map { entry in
            guard case .string(let key) = entry.key, case .variant(let inner) = entry.value else {
                throw DBusError.invalidValue("an a{sv} entry of \(entry.key.signature) and \(entry.value.signature)")
            }
            return (key, inner)
        })
    }

    /// The entries read back, in their order.
    public var dbusValue: DBusValue {
        let pairs: [DBusDictionaryEntry]
        do {
            pairs = try WireReader.withFragment(entries) { reader in
                var pairs: [DBusDictionaryEntry] = []
                while reader.position < entries.count {
                    try reader.align(8)
                    pairs.append(DBusDictionaryEntry(key: .string(try reader.string()), value: try reader.value(.variant)))
                }
                return pairs
            }
        } catch {
            preconditionFailure("bytes this type marshalled read back: \(error)")
        }
        return .dictionary(key: .string, value: .variant, entries: pairs)
    }
}

extension MarshalledDictionary: WireCodable {
    static func read(from reader: inout WireReader) throws -> MarshalledDictionary {
        try MarshalledDictionary(dbusValue: try reader.value(.dictionary(key: UInt8(ascii: "s"), value: .variant)))
    }

    func write(to writer: inout WireWriter) throws {
        guard !writer.isBigEndian else { throw WireWriter.NeedsLibdbus() }
        let array = writer.startArray(elementAlignment: 8)
        entries.withUnsafeBytes { writer.raw($0) }
        try writer.endCheckedArray(array)
    }

    static var wireAlignment: Int { 4 }

    var wireLengthHint: Int { 8 + entries.count }
}
