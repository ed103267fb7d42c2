/// A value tree of plain data, as a listing's dictionaries hold it: numbers, booleans, strings,
/// byte and string arrays, other arrays, and dictionaries with string keys. A caller's own type
/// (FerryBus's wire values) adopts it to be read straight from a message's bytes by
/// ``Message/plainDictionaries(of:)``, with no tree of `DBusValue`s between.
///
/// The reader never gives a unix fd, a struct, or a dictionary whose keys are not strings: it
/// stops and answers nil, and the caller reads the message as values.
public protocol DBusPlainValue {
    /// A basic value (`y b n q i u x t d s o g`, never `h`); nil when this type has no shape for
    /// it (the read then stops).
    init?(basic value: DBusValue)
    /// An `ay`.
    init(bytes: UnsafeRawBufferPointer)
    /// An `as` or `ao`.
    init(strings: [String])
    /// Any other array (`av`, `aa{sv}`, `ai` …), each element read as this type.
    init(elements: [Self])
    /// A dictionary with string keys (`a{sv}`, `a{ss}` …); a key given twice keeps its last value.
    init(entries: [String: Self])
}

extension Message {
    /// The body when it is one `aa{sv}` of plain values (see ``DBusPlainValue``), read straight
    /// from the message's bytes into dictionaries of `Value`; nil for another signature, a
    /// message that carries unix fds, or a value `Value` has no shape for (read those through
    /// `body`, whose values name what they hold).
    ///
    /// Inlinable, so the reader is specialized for `Value` where it is called.
    /// - Throws: `DBusError` for a malformed body (bytes no library checked).
    @inlinable
    public func plainDictionaries<Value: DBusPlainValue>(of _: Value.Type) throws -> [[String: Value]]? {
        guard signature.rawValue == "aa{sv}" else { return nil }
        do {
            return try withBodyReader { reader in
                // The elements are arrays (of 8-aligned entries): 4-aligned.
                let end = try reader.arrayEnd(alignment: 4)
                var dictionaries: [[String: Value]] = []
                while reader.position < end {
                    dictionaries.append(try reader.plainEntries(valueNode: .variant))
                }
                try reader.expectEnd(end)
                return dictionaries
            }
        } catch is WireReader.NotPlain {
            return nil
        }
    }

    /// Runs `body` with a reader at the start of the body, then checks that it read the whole
    /// body; nil (and `body` not run) for a libdbus message that carries unix fds.
    @usableFromInline
    func withBodyReader<R>(_ body: (inout WireReader) throws -> R) throws -> R? {
        if let wire { return try wire.withBody(body) }
        return try withRaw { raw in try WireReader.withBody(of: raw, body) }
    }
}

extension WireReader {
    /// A value met by ``plainValue(_:)`` that its type has no shape for.
    @usableFromInline
    struct NotPlain: Error {
        @usableFromInline init() {}
    }

    /// One value of type `node` as `Value`.
    /// - Throws: ``NotPlain`` for a type `Value` has no shape for (before reading a unix fd);
    ///   `DBusError` for malformed bytes.
    @inlinable
    mutating func plainValue<Value: DBusPlainValue>(_ node: TypeNode) throws -> Value {
        switch node {
        case .basic(UInt8(ascii: "h")):
            throw NotPlain()
        case .basic:
            guard let value = Value(basic: try value(node)) else { throw NotPlain() }
            return value
        case .variant:
            try enter()
            defer { leave() }
            return try plainValue(try variantType())
        case .array(.basic(UInt8(ascii: "y"))):
            let end = try arrayEnd(alignment: 1)
            return Value(bytes: rawBytes(to: end))
        case .array(.basic(let code)) where code == UInt8(ascii: "s") || code == UInt8(ascii: "o"):
            let end = try arrayEnd(alignment: 4)
            // Counted as `value(_:)` counts it: an array of anything but bytes is a level.
            try enter()
            defer { leave() }
            var strings: [String] = []
            while position < end { strings.append(code == UInt8(ascii: "s") ? try string() : try objectPath().rawValue) }
            try expectEnd(end)
            return Value(strings: strings)
        case .array(let element):
            let end = try arrayEnd(alignment: element.alignment)
            try enter()
            defer { leave() }
            var elements: [Value] = []
            while position < end { elements.append(try plainValue(element)) }
            try expectEnd(end)
            return Value(elements: elements)
        case .dictionary(key: UInt8(ascii: "s"), let valueNode):
            return Value(entries: try plainEntries(valueNode: valueNode))
        case .dictionary, .structure:
            throw NotPlain()
        }
    }

    /// The entries of an `a{s…}` whose values have type `valueNode`.
    @inlinable
    mutating func plainEntries<Value: DBusPlainValue>(valueNode: TypeNode) throws -> [String: Value] {
        let end = try arrayEnd(alignment: 8)
        try enter(2)
        defer { leave(2) }
        var entries: [String: Value] = [:]
        while position < end {
            try align(8)
            let key = try string()
            entries[key] = try plainValue(valueNode)
        }
        try expectEnd(end)
        return entries
    }
}
