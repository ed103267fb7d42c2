import CDBus

/// Reads a message's body from its wire bytes (`dbus_message_marshal`), in Swift.
///
/// Reading through `DBusMessageIter` costs libdbus a type-reader walk and a call per value: the
/// caller of a `ListSessions` reply of 10,000 dictionary entries spent about 25 ms receiving and
/// decoding it. libdbus validated
/// every message it hands over (received, or parsed from bytes), so the body matches its
/// signature; this reader still checks every read against the buffer and throws instead of
/// trusting that. Messages with unix fds are read through libdbus, which owns their fds.
@usableFromInline
struct WireReader {
    private let bytes: UnsafeRawBufferPointer
    private var offset: Int
    /// The message's byte order is not this machine's.
    private let swapped: Bool
    /// The unix fds that came with the message, which its `h` values index (each read gives a
    /// duplicate). Empty for a message libdbus holds: libdbus hands out those.
    private let fds: [FileDescriptor]
    /// Bytes no library has checked (a message ``WireMessage`` parsed from a socket): every
    /// string, path, signature and boolean is checked as it is read, as libdbus would.
    private let strict: Bool
    /// The containers the reader is inside (see ``enter(_:)``).
    private var depth = 0

    init(bytes: UnsafeRawBufferPointer, offset: Int, swapped: Bool, fds: [FileDescriptor] = [], strict: Bool = false) {
        self.bytes = bytes
        self.offset = offset
        self.swapped = swapped
        self.fds = fds
        self.strict = strict
    }

    /// The body of `message`; nil when it carries unix fds (anywhere, variants included), which
    /// libdbus must hand out.
    static func readBody(of message: OpaquePointer) throws -> [DBusValue]? {
        guard dbus_message_contains_unix_fds(message) == 0 else { return nil }
        guard let text = dbus_message_get_signature(message) else { return [] }
        if text.pointee == 0 { return [] }
        let nodes = try SignatureParser.parse(String(cString: text))
        var pointer: UnsafeMutablePointer<CChar>? = nil
        var length: Int32 = 0
        guard dbus_message_marshal(message, &pointer, &length) != 0, let pointer else {
            throw DBusError(.noMemory, "out of memory")
        }
        defer { dbus_free(pointer) }
        let bytes = UnsafeRawBufferPointer(start: pointer, count: Int(length))
        return try read(nodes, message: bytes)
    }

    /// Runs `body` with a reader at the start of `message`'s body, then checks that it read the
    /// whole body; nil (and `body` not run) when the message carries unix fds, which libdbus
    /// must hand out.
    static func withBody<R>(of message: OpaquePointer, _ body: (inout WireReader) throws -> R) throws -> R? {
        guard dbus_message_contains_unix_fds(message) == 0 else { return nil }
        var pointer: UnsafeMutablePointer<CChar>? = nil
        var length: Int32 = 0
        guard dbus_message_marshal(message, &pointer, &length) != 0, let pointer else {
            throw DBusError(.noMemory, "out of memory")
        }
        defer { dbus_free(pointer) }
        var reader = try WireReader(message: UnsafeRawBufferPointer(start: pointer, count: Int(length)))
        let result = try body(&reader)
        guard reader.offset == reader.bytes.count else { throw malformed("bytes after the last value") }
        return result
    }

    /// Runs `body` with a reader at the start of `bytes`, values written on their own in this
    /// machine's byte order (`WireWriter.fragment`), then checks that it read them all.
    static func withFragment<R>(_ bytes: [UInt8], _ body: (inout WireReader) throws -> R) throws -> R {
        try bytes.withUnsafeBytes { buffer in
            var reader = WireReader(bytes: buffer, offset: 0, swapped: false)
            let result = try body(&reader)
            guard reader.offset == buffer.count else { throw malformed("bytes after the last value") }
            return result
        }
    }

    /// A reader at the start of the body of the marshalled message `bytes`.
    private init(message bytes: UnsafeRawBufferPointer) throws {
        guard bytes.count >= 16 else { throw Self.malformed("a message of \(bytes.count) bytes") }
        let order = bytes[0]
        guard order == UInt8(ascii: "l") || order == UInt8(ascii: "B") else { throw Self.malformed("byte order \(order)") }
        self.init(bytes: bytes, offset: 4, swapped: (order == UInt8(ascii: "B")) == (1.littleEndian == 1))
        let bodyLength = Int(try fixed(UInt32.self))
        offset = 12
        let fieldsLength = Int(try fixed(UInt32.self))
        offset = 16 + fieldsLength
        try align(8)
        guard offset + bodyLength == bytes.count else {
            throw Self.malformed("the body of \(bodyLength) bytes does not end the message")
        }
    }

    /// The body of the marshalled message `bytes`, whose signature parses to `nodes`.
    static func read(_ nodes: [TypeNode], message bytes: UnsafeRawBufferPointer) throws -> [DBusValue] {
        var reader = try WireReader(message: bytes)
        var values: [DBusValue] = []
        values.reserveCapacity(nodes.count)
        for node in nodes { values.append(try reader.value(node)) }
        guard reader.offset == bytes.count else { throw malformed("bytes after the last value") }
        return values
    }

    static func malformed(_ why: String) -> DBusError {
        DBusError(.invalidArgs, "malformed message body: \(why)")
    }

    // MARK: Primitives

    @usableFromInline
    mutating func align(_ n: Int) throws {
        let aligned = (offset + n - 1) & ~(n - 1)
        guard aligned <= bytes.count else { throw Self.malformed("padding past the end") }
        offset = aligned
    }

    mutating func fixed<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        try align(MemoryLayout<T>.size)
        guard offset + MemoryLayout<T>.size <= bytes.count else { throw Self.malformed("a value past the end") }
        let value = bytes.loadUnaligned(fromByteOffset: offset, as: T.self)
        offset += MemoryLayout<T>.size
        return swapped ? value.byteSwapped : value
    }

    /// `count` bytes and the NUL after them.
    mutating func text(_ count: Int) throws -> UnsafeRawBufferPointer {
        guard count >= 0, offset + count < bytes.count, bytes[offset + count] == 0 else {
            throw Self.malformed("a string past the end")
        }
        defer { offset += count + 1 }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)])
    }

    /// The bytes from here to `end` (an `ay`'s content, `end` from `arrayEnd`), then skips them.
    @usableFromInline
    mutating func rawBytes(to end: Int) -> UnsafeRawBufferPointer {
        defer { offset = end }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<end])
    }

    /// Where the reader is: arrays read elements while it is before their end.
    @usableFromInline
    var position: Int { offset }

    @usableFromInline
    mutating func string() throws -> String {
        let utf8 = try stringBytes()
        return strict ? try Self.checkedString(utf8) : String(decoding: utf8, as: UTF8.self)
    }

    /// A string's bytes (`s`, `o`: a 32-bit length), without its NUL, not checked.
    mutating func stringBytes() throws -> UnsafeRawBufferPointer {
        try text(Int(try fixed(UInt32.self)))
    }

    /// A signature's bytes (`g`: an 8-bit length), without its NUL, not checked.
    mutating func signatureBytes() throws -> UnsafeRawBufferPointer {
        try text(Int(try fixed(UInt8.self)))
    }

    /// The string whose bytes `text` gave: checked to be UTF-8 without NUL.
    static func checkedString(_ utf8: UnsafeRawBufferPointer) throws -> String {
        guard !utf8.isEmpty else { return "" }
        // `text` ends at the wire's NUL, so a C string read from its start stops there unless a
        // NUL comes earlier (then the string is short). `String(validatingCString:)` validates
        // without the generic `String(validating:as:)`'s metadata lookup per call: a third of
        // the time (BENCHMARKS.md, "Strings read without a metadata lookup").
        let start = utf8.baseAddress!.assumingMemoryBound(to: CChar.self)
        guard let text = String(validatingCString: start), text.utf8.count == utf8.count else {
            throw malformed("a string that is not UTF-8 without NUL")
        }
        return text
    }

    /// The signature whose bytes `signatureBytes` gave, checked.
    static func checkedSignature(_ utf8: UnsafeRawBufferPointer) throws -> String {
        let text = String(decoding: utf8, as: UTF8.self)
        _ = try SignatureParser.parse(text)
        return text
    }

    mutating func signature() throws -> String {
        let utf8 = try signatureBytes()
        return strict ? try Self.checkedSignature(utf8) : String(decoding: utf8, as: UTF8.self)
    }

    @usableFromInline
    mutating func objectPath() throws -> ObjectPath {
        let text = try string()
        return strict ? try ObjectPath(text) : ObjectPath(unchecked: text)
    }

    mutating func boolean() throws -> Bool {
        let value = try fixed(UInt32.self)
        guard !strict || value <= 1 else { throw Self.malformed("a boolean of \(value)") }
        return value != 0
    }

    /// A `h`: a duplicate of the fd it indexes, owned by the caller.
    mutating func unixFD() throws -> FileDescriptor {
        let index = Int(try fixed(UInt32.self))
        guard index < fds.count else {
            throw Self.malformed(fds.isEmpty ? "a unix fd in a message that came without any"
                                             : "unix fd \(index) of \(fds.count)")
        }
        return try fds[index].duplicate()
    }

    // MARK: Values

    /// Steps into a container, `levels` deep (a dictionary is its array and its entries: 2).
    /// A signature limits how deep arrays and structs go, but not variants, which each carry a
    /// signature of their own: without this, bytes no library checked (a direct connection's)
    /// could nest variants until the reader's recursion overflowed the stack. libdbus refuses
    /// more than 64 levels in the messages it receives, and so does this reader.
    /// - Throws: `DBusError` `.invalidArgs` past ``BodyValidator/maximumDepth``.
    @usableFromInline
    mutating func enter(_ levels: Int = 1) throws {
        depth += levels
        guard depth <= BodyValidator.maximumDepth else {
            throw Self.malformed("containers nested deeper than \(BodyValidator.maximumDepth)")
        }
    }

    /// Steps out of the container last entered with `levels`.
    @usableFromInline
    mutating func leave(_ levels: Int = 1) { depth -= levels }

    @usableFromInline
    mutating func value(_ node: TypeNode) throws -> DBusValue {
        switch node {
        case .basic(let code):
            switch code {
            case UInt8(ascii: "y"): return .byte(try fixed(UInt8.self))
            case UInt8(ascii: "b"): return .boolean(try boolean())
            case UInt8(ascii: "n"): return .int16(try fixed(Int16.self))
            case UInt8(ascii: "q"): return .uint16(try fixed(UInt16.self))
            case UInt8(ascii: "i"): return .int32(try fixed(Int32.self))
            case UInt8(ascii: "u"): return .uint32(try fixed(UInt32.self))
            case UInt8(ascii: "x"): return .int64(try fixed(Int64.self))
            case UInt8(ascii: "t"): return .uint64(try fixed(UInt64.self))
            case UInt8(ascii: "d"): return .double(Double(bitPattern: try fixed(UInt64.self)))
            case UInt8(ascii: "s"): return .string(try string())
            case UInt8(ascii: "o"): return .objectPath(try objectPath())
            case UInt8(ascii: "g"): return .signature(Signature(unchecked: try signature()))
            case UInt8(ascii: "h"): return .unixFD(try unixFD())
            default: throw Self.malformed("type code \(code)")
            }
        case .array(let element):
            let end = try arrayEnd(alignment: element.alignment)
            if element == .basic(UInt8(ascii: "y")) { return .bytes(Array(rawBytes(to: end))) }
            try enter()
            defer { leave() }
            var elements: [DBusValue] = []
            while offset < end { elements.append(try value(element)) }
            try expectEnd(end)
            return .array(element: element.signature, elements: elements)
        case .dictionary(let key, let valueNode):
            let end = try arrayEnd(alignment: 8)
            try enter(2)
            defer { leave(2) }
            var entries: [DBusDictionaryEntry] = []
            while offset < end {
                try align(8)
                let k = try value(.basic(key))
                entries.append(DBusDictionaryEntry(key: k, value: try value(valueNode)))
            }
            try expectEnd(end)
            return .dictionary(key: Signature(typeCode: key), value: valueNode.signature, entries: entries)
        case .structure(let fields):
            try align(8)
            try enter()
            defer { leave() }
            var values: [DBusValue] = []
            values.reserveCapacity(fields.count)
            for field in fields { values.append(try value(field)) }
            return .structure(values)
        case .variant:
            try enter()
            defer { leave() }
            return .variant(try value(try variantType()))
        }
    }

    /// The type of a variant's value, from its signature: one basic type code (most variants)
    /// or `ay` (bytes, as a paste's data) read in place, anything else parsed.
    @usableFromInline
    mutating func variantType() throws -> TypeNode {
        if offset + 2 < bytes.count, bytes[offset] == 1, bytes[offset + 2] == 0, SignatureParser.isBasic(bytes[offset + 1]) {
            defer { offset += 3 }
            return .basic(bytes[offset + 1])
        }
        if offset + 3 < bytes.count, bytes[offset] == 2, bytes[offset + 1] == UInt8(ascii: "a"),
           bytes[offset + 2] == UInt8(ascii: "y"), bytes[offset + 3] == 0 {
            offset += 4
            return .array(.basic(UInt8(ascii: "y")))
        }
        return try SignatureParser.parseSingle(try signature())
    }

    /// Reads an array's length and the padding to its first element; returns where it ends.
    @usableFromInline
    mutating func arrayEnd(alignment: Int) throws -> Int {
        let length = Int(try fixed(UInt32.self))
        try align(alignment)
        guard offset + length <= bytes.count else { throw Self.malformed("an array past the end") }
        return offset + length
    }

    @usableFromInline
    func expectEnd(_ end: Int) throws {
        guard offset == end else { throw Self.malformed("an array whose elements overrun its length") }
    }
}
