import FerrySystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A whole message in the D-Bus wire format and the unix fds that travel with it, its header
/// parsed and checked: what ``Message`` builds before libdbus needs it, and what a
/// peer-to-peer connection this library serves itself sends and receives (``WireTransport``).
///
/// Parsing checks everything libdbus's loader checks in a header (byte order, version, the
/// fields' codes, types and names, the fields each kind of message needs, the padding, the
/// lengths); the body is checked as it is read (``WireReader`` in its strict mode).
struct WireMessage: Sendable {
    /// The header's fields.
    struct Fields: Sendable {
        var header: WireWriter.Header
        var sender: String? = nil
        var signature: String
    }

    let bytes: [UInt8]
    /// Owned by the message; a read of a `h` gives a duplicate.
    let fds: [FileDescriptor]
    let fields: Fields
    /// Where the body starts in `bytes`.
    let bodyOffset: Int
    /// Bytes this library wrote itself (checked as they were written), not received.
    let built: Bool

    /// The fixed part of a header: byte order, type, flags, version, body length, serial and
    /// the fields' array length.
    static let fixedHeaderLength = 16

    /// A message built here: its fields are the ones written.
    init(built bytes: [UInt8], fds: [FileDescriptor], fields: Fields) {
        self.bytes = bytes
        self.fds = fds
        self.fields = fields
        bodyOffset = bytes.count - Int(Self.bodyLength(bytes))
        built = true
    }

    /// The total length of the message whose first bytes are `prefix`; nil until `prefix` holds
    /// the fixed part of the header.
    /// - Throws: `DBusError` `.invalidArgs` for a byte order or version no D-Bus peer sends, or
    ///   a length over the protocol's limit, so that a reader never waits for a message that
    ///   cannot come.
    static func length(ofMessageStartingWith prefix: UnsafeRawBufferPointer) throws -> Int? {
        guard prefix.count >= fixedHeaderLength else { return nil }
        let order = prefix[0]
        guard order == UInt8(ascii: "l") || order == UInt8(ascii: "B") else {
            throw malformed("byte order \(order)")
        }
        guard prefix[3] == 1 else { throw malformed("protocol version \(prefix[3])") }
        let swapped = (order == UInt8(ascii: "B")) == (1.littleEndian == 1)
        func uint32(at offset: Int) -> Int {
            let value = prefix.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
            return Int(swapped ? value.byteSwapped : value)
        }
        let body = uint32(at: 4), fields = uint32(at: 12)
        guard fields <= BodyValidator.maximumArrayLength else { throw malformed("header fields of \(fields) bytes") }
        let total = ((fixedHeaderLength + fields + 7) & ~7) + body
        guard total <= BodyValidator.maximumMessageLength else {
            throw DBusError.limitsExceeded("message of \(total) bytes")
        }
        return total
    }

    /// Parses and checks a message received whole (`bytes` is exactly one message) with `fds`.
    /// - Throws: `DBusError` `.invalidArgs` naming what is wrong.
    init(parsing bytes: [UInt8], fds: [FileDescriptor]) throws {
        var strings = HeaderStrings()
        let parsed = try Self.parse(bytes, strings: &strings)
        guard parsed.known else { throw Self.malformed("message type \(bytes[1])") }
        guard parsed.unixFDs == fds.count else {
            throw Self.malformed("a message that declares \(parsed.unixFDs) unix fds and came with \(fds.count)")
        }
        self.init(bytes: bytes, fds: fds, parsed: parsed)
    }

    /// A message just received whole, with the fds it declares taken from the front of `fds`;
    /// nil for a message of a type this protocol version does not know, which is ignored (its
    /// fds dropped). `strings` are the connection's header strings so far.
    /// - Throws: `DBusError` `.invalidArgs` when it is malformed or its fds did not come.
    init?(received bytes: [UInt8], takingFDsFrom fds: inout [FileDescriptor], strings: inout HeaderStrings) throws {
        let parsed = try Self.parse(bytes, strings: &strings)
        guard parsed.unixFDs <= fds.count else {
            throw Self.malformed("a message that declares \(parsed.unixFDs) unix fds and came with \(fds.count)")
        }
        let own = Array(fds.prefix(parsed.unixFDs))
        fds.removeFirst(parsed.unixFDs)
        guard parsed.known else { return nil }
        self.init(bytes: bytes, fds: own, parsed: parsed)
    }

    private init(bytes: [UInt8], fds: [FileDescriptor], parsed: Parsed) {
        self.bytes = bytes
        self.fds = fds
        fields = parsed.fields
        bodyOffset = parsed.bodyOffset
        built = false
    }

    /// A header as parsed: its fields, where the body starts, how many unix fds it declares, and
    /// whether its type is one this protocol version knows (the fields of another are not
    /// checked against a kind).
    private struct Parsed {
        var fields: Fields
        var bodyOffset: Int
        var unixFDs: Int
        var known: Bool
    }

    private static func parse(_ bytes: [UInt8], strings: inout HeaderStrings) throws -> Parsed {
        try bytes.withUnsafeBytes { buffer in
            guard try Self.length(ofMessageStartingWith: buffer) == buffer.count else {
                throw Self.malformed("a message of \(buffer.count) bytes whose header says otherwise")
            }
            return try Self.parseHeader(buffer, strings: &strings)
        }
    }

    /// The header strings last received on one connection, each field's kept with the bytes it
    /// came in: a connection's messages name the same path, interface, member, bus names and
    /// signature again and again, and a field whose bytes are the last ones of that field needs
    /// neither a check nor a new `String`. ``WireTransport`` keeps one per connection.
    struct HeaderStrings {
        /// By field code (1 to 8; 5 carries a number).
        private var kept = [(bytes: [UInt8], text: String)?](repeating: nil, count: 9)

        /// The text of header field `code` whose bytes are `raw`: the one kept for the same
        /// bytes, or what `check` makes of them (then kept instead).
        mutating func text(field code: Int, _ raw: UnsafeRawBufferPointer,
                           _ check: (UnsafeRawBufferPointer) throws -> String) throws -> String {
            if let last = kept[code], last.bytes.count == raw.count,
               raw.isEmpty || last.bytes.withUnsafeBytes({ memcmp($0.baseAddress!, raw.baseAddress!, raw.count) == 0 }) {
                return last.text
            }
            let text = try check(raw)
            kept[code] = (Array(raw), text)
            return text
        }
    }

    /// The body's length from the fixed header (in the message's byte order).
    private static func bodyLength(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { buffer in
            let value = buffer.loadUnaligned(fromByteOffset: 4, as: UInt32.self)
            return buffer[0] == UInt8(ascii: "B") ? UInt32(bigEndian: value) : UInt32(littleEndian: value)
        }
    }

    private static func parseHeader(_ bytes: UnsafeRawBufferPointer, strings: inout HeaderStrings) throws -> Parsed {
        let swapped = (bytes[0] == UInt8(ascii: "B")) == (1.littleEndian == 1)
        let known = Message.Kind(code: Int32(bytes[1]))
        let kind = known ?? .signal
        var reader = WireReader(bytes: bytes, offset: 8, swapped: swapped, strict: true)
        var header = WireWriter.Header(kind: kind, flags: bytes[2])
        header.serial = try reader.fixed(UInt32.self)
        guard header.serial != 0 else { throw malformed("serial 0") }
        var sender: String? = nil
        var signature = ""
        var unixFDs = 0
        var seen: UInt16 = 0
        let end = try reader.arrayEnd(alignment: 8)
        while reader.position < end {
            try reader.align(8)
            let code = try reader.fixed(UInt8.self)
            if code < 16 {
                guard seen & (1 << code) == 0 else { throw malformed("header field \(code) twice") }
                seen |= 1 << code
            }
            let type = try reader.variantType()
            func expect(_ expected: Unicode.Scalar) throws {
                guard type == .basic(UInt8(ascii: expected)) else {
                    throw malformed("header field \(code) of type \(type.text), not \(expected)")
                }
            }
            /// The field's string, kept or checked as UTF-8 and by `rules` (a path's, a name's).
            func text(_ rules: (String) throws -> String) throws -> String {
                try strings.text(field: Int(code), try reader.stringBytes()) { try rules(try WireReader.checkedString($0)) }
            }
            switch code {
            case 1:
                try expect("o")
                header.path = try text { try ObjectPath($0).rawValue }
            case 2:
                try expect("s")
                header.interface = try text { try InterfaceName($0).rawValue }
            case 3:
                try expect("s")
                header.member = try text { try MemberName($0).rawValue }
            case 4:
                try expect("s")
                header.errorName = try text { try ErrorName($0).rawValue }
            case 5:
                try expect("u")
                header.replySerial = try reader.fixed(UInt32.self)
            case 6:
                try expect("s")
                header.destination = try text { try BusName($0).rawValue }
            case 7:
                try expect("s")
                sender = try text { try BusName($0).rawValue }
            case 8:
                try expect("g")
                signature = try strings.text(field: 8, try reader.signatureBytes(), WireReader.checkedSignature)
            case 9:
                try expect("u")
                unixFDs = Int(try reader.fixed(UInt32.self))
            case 0:
                throw malformed("header field 0")
            default:
                _ = try reader.value(type) // a field of a later protocol version: ignored
            }
        }
        try reader.expectEnd(end)
        let bodyStart = (end + 7) & ~7
        guard bytes[end..<bodyStart].allSatisfy({ $0 == 0 }) else { throw malformed("padding that is not zero") }
        guard unixFDs <= BodyValidator.maximumUnixFDs else { throw malformed("\(unixFDs) unix fds") }
        header.unixFDs = unixFDs
        let fields = Fields(header: header, sender: sender, signature: signature)
        guard known != nil else { return Parsed(fields: fields, bodyOffset: bodyStart, unixFDs: unixFDs, known: false) }
        switch kind {
        case .methodCall:
            guard header.path != nil, header.member != nil else { throw malformed("a method call without path or member") }
        case .signal:
            guard header.path != nil, header.interface != nil, header.member != nil else {
                throw malformed("a signal without path, interface or member")
            }
        case .error:
            guard header.errorName != nil, header.replySerial != nil else {
                throw malformed("an error without name or reply serial")
            }
        case .methodReturn:
            guard header.replySerial != nil else { throw malformed("a method return without reply serial") }
        }
        return Parsed(fields: fields, bodyOffset: bodyStart, unixFDs: unixFDs, known: true)
    }

    static func malformed(_ why: String) -> DBusError {
        DBusError(.invalidArgs, "malformed message: \(why)")
    }

    /// Runs `body` with a reader at the start of the body, then checks that it read all of it.
    func withBody<R>(_ body: (inout WireReader) throws -> R) throws -> R {
        try bytes.withUnsafeBytes { buffer in
            let swapped = (buffer[0] == UInt8(ascii: "B")) == (1.littleEndian == 1)
            var reader = WireReader(bytes: buffer, offset: bodyOffset, swapped: swapped, fds: fds, strict: !built)
            let result = try body(&reader)
            guard reader.position == buffer.count else { throw WireReader.malformed("bytes after the last value") }
            return result
        }
    }

    /// The body's values.
    func body() throws -> [DBusValue] {
        guard !fields.signature.isEmpty else {
            guard bodyOffset == bytes.count else { throw WireReader.malformed("a body without a signature") }
            return []
        }
        let nodes = try SignatureParser.parse(fields.signature)
        return try withBody { reader in
            var values: [DBusValue] = []
            values.reserveCapacity(nodes.count)
            for node in nodes { values.append(try reader.value(node)) }
            return values
        }
    }
}

extension Message.Kind {
    /// The kind whose wire type code is `code`; nil for codes no kind has.
    init?(code: Int32) {
        switch code {
        case Message.Kind.methodCall.code: self = .methodCall
        case Message.Kind.methodReturn.code: self = .methodReturn
        case Message.Kind.error.code: self = .error
        case Message.Kind.signal.code: self = .signal
        default: return nil
        }
    }
}
