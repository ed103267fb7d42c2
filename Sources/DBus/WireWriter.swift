import CDBus

/// Marshals a message in the D-Bus wire format, in Swift: the bytes of a ``WireMessage``, which
/// libdbus parses back only when a libdbus connection sends it (`dbus_message_demarshal`).
///
/// Building a body through `DBusMessageIter` costs libdbus a header signature rewrite per
/// top-level value and a type-writer walk per value: on ferryd's four-value `Read` reply that
/// was a sixth of its CPU per call (about 11 µs). Marshalling here and parsing once costs about
/// half of that, most of it libdbus's parse.
/// Every value must have passed `BodyValidator` first.
struct WireWriter {
    /// The header fields a factory sets; the sender is the bus's to set.
    struct Header {
        var kind: Message.Kind
        var flags: UInt8 = 0
        var serial: UInt32 = 0
        var path: String? = nil
        var interface: String? = nil
        var member: String? = nil
        var errorName: String? = nil
        var replySerial: UInt32? = nil
        var destination: String? = nil
        /// How many unix fds travel with the message (its `h` values index them).
        var unixFDs = 0

        /// The total UTF-8 length of its strings.
        var textLength: Int {
            (path?.utf8.count ?? 0) + (interface?.utf8.count ?? 0) + (member?.utf8.count ?? 0)
                + (errorName?.utf8.count ?? 0) + (destination?.utf8.count ?? 0)
        }
    }

    /// The message flag NO_REPLY_EXPECTED.
    static let noReplyExpected: UInt8 = 0x1

    /// Where the message is written, how much is written so far, and how much fits.
    private var base: UnsafeMutableRawPointer
    private var count = 0
    private var capacity: Int
    /// `base` was allocated by this writer (when it grew): the caller of `init` frees it.
    private var owned = false
    /// Big-endian instead of this machine's little-endian order (for tests of readers).
    private let bigEndian: Bool
    /// The unix fds of the `h` values written, in index order (the caller's; not duplicated).
    private(set) var unixFDs: [FileDescriptor] = []

    /// The whole message, the header (with the body's signature and length) then the body, with
    /// duplicates of its unix fds for the message to own.
    ///
    /// - Parameters:
    ///   - header: its `unixFDs` must count the body's `h` values (`BodyValidator` did).
    ///   - capacity: at least the message's length: `Message` bounds the header's, and
    ///     `BodyValidator` measured the body's exactly.
    /// - Throws: `DBusError` when a unix fd cannot be duplicated.
    static func message(_ header: Header, body values: [DBusValue], nodes: [TypeNode], capacity: Int,
                        bigEndian: Bool = false) throws -> WireMessage {
        var writer = WireWriter(base: .allocate(byteCount: capacity, alignment: 8), capacity: capacity,
                                bigEndian: bigEndian)
        writer.owned = true
        defer { writer.base.deallocate() }
        writer.write(header) { $0.signature(of: nodes) }
        let bodyStart = writer.count
        for (value, node) in zip(values, nodes) { writer.append(value, node) }
        writer.patch(UInt32(writer.count - bodyStart), at: 4)
        assert(capacity >= writer.count, "the message outgrew its bound")
        var signature = ""
        for node in nodes { node.append(to: &signature) }
        return WireMessage(built: writer.bytes, fds: try writer.unixFDs.map { try $0.duplicate() },
                           fields: WireMessage.Fields(header: header, signature: signature))
    }

    /// A message whose body `body` writes value by value for the signature `signature` (typed
    /// values, see `WireCodable`; none holds a unix fd), growing the buffer from `capacity` as
    /// needed.
    ///
    /// - Throws: what `body` throws (a value that fails validation), `LimitsExceeded` for a
    ///   message over the protocol's limit.
    static func message(_ header: Header, signature: String, capacity: Int, bigEndian: Bool = false,
                        body: (inout WireWriter) throws -> Void) throws -> WireMessage {
        let capacity = max(capacity, 64)
        var writer = WireWriter(base: .allocate(byteCount: capacity, alignment: 8), capacity: capacity,
                                bigEndian: bigEndian)
        writer.owned = true
        defer { writer.base.deallocate() }
        writer.write(header) { $0.signature(signature) }
        let bodyStart = writer.count
        try body(&writer)
        guard writer.count <= BodyValidator.maximumMessageLength else {
            throw DBusError.limitsExceeded("message of more than \(BodyValidator.maximumMessageLength) bytes")
        }
        writer.patch(UInt32(writer.count - bodyStart), at: 4)
        return WireMessage(built: writer.bytes, fds: [], fields: WireMessage.Fields(header: header, signature: signature))
    }

    /// What was written so far.
    private var bytes: [UInt8] { [UInt8](UnsafeRawBufferPointer(start: base, count: count)) }

    /// Values written by `body` on their own, as if at an 8-aligned place of a message, in this
    /// machine's byte order: bytes that fit as they are wherever such values start 8-aligned
    /// (the entries of a dictionary, see `MarshalledDictionary`). They follow `prefix`, bytes of
    /// the same kind, and are aligned as if it were there too.
    static func fragment(after prefix: [UInt8] = [], _ body: (inout WireWriter) throws -> Void) rethrows -> [UInt8] {
        let capacity = prefix.count + 256
        var writer = WireWriter(base: .allocate(byteCount: capacity, alignment: 8), capacity: capacity,
                                bigEndian: false)
        writer.owned = true
        defer { writer.base.deallocate() }
        prefix.withUnsafeBytes { writer.raw($0) }
        try body(&writer)
        return [UInt8](UnsafeRawBufferPointer(start: writer.base, count: writer.count))
    }

    /// The message is written big-endian (tests of the readers), not in this machine's order.
    var isBigEndian: Bool { bigEndian }

    private init(base: UnsafeMutableRawPointer, capacity: Int, bigEndian: Bool) {
        self.base = base
        self.capacity = capacity
        self.bigEndian = bigEndian
    }

    /// Makes room for `n` more bytes, moving the message to a buffer twice as large (or more)
    /// when it does not fit.
    private mutating func reserve(_ n: Int) {
        guard count + n > capacity else { return }
        let grown = max(capacity * 2, count + n)
        let moved = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 8)
        moved.copyMemory(from: base, byteCount: count)
        if owned { base.deallocate() }
        base = moved
        capacity = grown
        owned = true
    }

    /// The header, with the body's signature field written by `signature` (nothing for an
    /// empty signature, which must then write nothing).
    private mutating func write(_ header: Header, signature: (inout WireWriter) -> Void) {
        byte(UInt8(ascii: bigEndian ? "B" : "l"))
        byte(UInt8(truncatingIfNeeded: header.kind.code))
        byte(header.flags)
        byte(1) // protocol version
        uint32(0) // the body length, patched at the end
        uint32(header.serial)
        let fields = startArray(elementAlignment: 8)
        if let path = header.path { field(1, "o", path) }
        if let interface = header.interface { field(2, "s", interface) }
        if let member = header.member { field(3, "s", member) }
        if let errorName = header.errorName { field(4, "s", errorName) }
        if let replySerial = header.replySerial {
            fieldCode(5, "u")
            uint32(replySerial)
        }
        if let destination = header.destination { field(6, "s", destination) }
        if header.unixFDs > 0 {
            fieldCode(9, "u")
            uint32(UInt32(header.unixFDs))
        }
        let fieldStart = count
        fieldCode(8, "g")
        let signatureStart = count
        signature(&self)
        if count == signatureStart || base.load(fromByteOffset: signatureStart, as: UInt8.self) == 0 {
            count = fieldStart // an empty body: no signature field
        }
        endArray(fields)
        align(8)
    }

    /// The total UTF-8 length of the header's strings.
    static func textLength(_ header: Header) -> Int { header.textLength }

    // MARK: Primitives

    mutating func byte(_ value: UInt8) {
        reserve(1)
        base.storeBytes(of: value, toByteOffset: count, as: UInt8.self)
        count += 1
    }

    mutating func align(_ n: Int) {
        while count % n != 0 { byte(0) }
    }

    mutating func fixed<T: FixedWidthInteger>(_ value: T) {
        align(MemoryLayout<T>.size)
        reserve(MemoryLayout<T>.size)
        base.storeBytes(of: bigEndian ? value.bigEndian : value.littleEndian, toByteOffset: count, as: T.self)
        count += MemoryLayout<T>.size
    }

    private mutating func uint32(_ value: UInt32) { fixed(value) }

    private func patch(_ value: UInt32, at offset: Int) {
        base.storeBytes(of: bigEndian ? value.bigEndian : value.littleEndian, toByteOffset: offset, as: UInt32.self)
    }

    mutating func raw(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count)
        (base + count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    private mutating func utf8(_ text: String) {
        var text = text
        text.withUTF8 { raw(UnsafeRawBufferPointer($0)) }
    }

    /// A string or object path: its length, its UTF-8 and a NUL.
    mutating func string(_ text: String) {
        uint32(UInt32(text.utf8.count))
        utf8(text)
        byte(0)
    }

    /// A signature: one length byte, the text and a NUL.
    mutating func signature(_ text: String) {
        byte(UInt8(text.utf8.count))
        utf8(text)
        byte(0)
    }

    /// The signature of `nodes` written straight from the parsed types.
    mutating func signature(of nodes: [TypeNode]) {
        let lengthOffset = count
        byte(0)
        for node in nodes { codes(of: node) }
        base.storeBytes(of: UInt8(count - lengthOffset - 1), toByteOffset: lengthOffset, as: UInt8.self)
        byte(0)
    }

    private mutating func codes(of node: TypeNode) {
        switch node {
        case .basic(let code): byte(code)
        case .variant: byte(UInt8(ascii: "v"))
        case .array(let element):
            byte(UInt8(ascii: "a"))
            codes(of: element)
        case .dictionary(let key, let value):
            byte(UInt8(ascii: "a"))
            byte(UInt8(ascii: "{"))
            byte(key)
            codes(of: value)
            byte(UInt8(ascii: "}"))
        case .structure(let fields):
            byte(UInt8(ascii: "("))
            for field in fields { codes(of: field) }
            byte(UInt8(ascii: ")"))
        }
    }

    /// Opens an array: its length (patched by `endArray`), then the padding to its first
    /// element, which the length does not count.
    mutating func startArray(elementAlignment: Int) -> (lengthOffset: Int, start: Int) {
        uint32(0)
        let lengthOffset = count - 4
        align(elementAlignment)
        return (lengthOffset, count)
    }

    func endArray(_ array: (lengthOffset: Int, start: Int)) {
        patch(UInt32(count - array.start), at: array.lengthOffset)
    }

    /// Closes an array after checking its content against the protocol's limit.
    ///
    /// - Throws: `LimitsExceeded` for more than `BodyValidator.maximumArrayLength` bytes.
    mutating func endCheckedArray(_ array: (lengthOffset: Int, start: Int)) throws {
        guard count - array.start <= BodyValidator.maximumArrayLength else {
            throw DBusError.limitsExceeded(
                "array of more than \(BodyValidator.maximumArrayLength) bytes (\(count - array.start))")
        }
        endArray(array)
    }

    /// A header field: a struct of its code and a variant of the value's one-code signature.
    private mutating func fieldCode(_ code: UInt8, _ type: Unicode.Scalar) {
        align(8)
        byte(code)
        byte(1)
        byte(UInt8(ascii: type))
        byte(0)
    }

    private mutating func field(_ code: UInt8, _ type: Unicode.Scalar, _ text: String) {
        fieldCode(code, type)
        string(text)
    }

    // MARK: Values

    mutating func append(_ value: DBusValue, _ node: TypeNode) {
        switch value {
        case .byte(let v): byte(v)
        case .boolean(let v): uint32(v ? 1 : 0)
        case .int16(let v): fixed(v)
        case .uint16(let v): fixed(v)
        case .int32(let v): fixed(v)
        case .uint32(let v): fixed(v)
        case .int64(let v): fixed(v)
        case .uint64(let v): fixed(v)
        case .double(let v): fixed(v.bitPattern)
        case .string(let v): string(v)
        case .objectPath(let v): string(v.rawValue)
        case .signature(let v): signature(v.rawValue)
        case .unixFD(let fd):
            uint32(UInt32(unixFDs.count))
            unixFDs.append(fd)
        case .bytes(let v):
            uint32(UInt32(v.count))
            v.withUnsafeBytes { raw($0) }
        case .array(_, let elements):
            guard case .array(let elementNode) = node else { preconditionFailure("validated") }
            let start = startArray(elementAlignment: elementNode.alignment)
            for element in elements { append(element, elementNode) }
            endArray(start)
        case .dictionary(_, _, let entries):
            guard case .dictionary(let keyCode, let valueNode) = node else { preconditionFailure("validated") }
            let start = startArray(elementAlignment: 8)
            for entry in entries {
                align(8)
                append(entry.key, .basic(keyCode))
                append(entry.value, valueNode)
            }
            endArray(start)
        case .structure(let fields):
            guard case .structure(let nodes) = node else { preconditionFailure("validated") }
            align(8)
            for (field, fieldNode) in zip(fields, nodes) { append(field, fieldNode) }
        case .variant(let inner):
            // Validated, so its type parses.
            guard let innerNode = try? BodyValidator.node(of: inner) else { preconditionFailure("validated") }
            signature(of: [innerNode])
            append(inner, innerNode)
        }
    }
}
