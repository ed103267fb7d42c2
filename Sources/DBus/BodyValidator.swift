/// Checks a message body before any of it reaches libdbus (which aborts the process on bad
/// input) and measures its wire size exactly, simulating the marshalled layout from the body's
/// start (which the protocol aligns to 8).
struct BodyValidator {
    /// The largest array content, in bytes (2^26, 64 MiB).
    static let maximumArrayLength = 1 << 26
    /// The largest whole message, in bytes (2^27, 128 MiB).
    static let maximumMessageLength = 1 << 27
    /// The most unix fds in one message (the default bus configuration and libdbus's limit).
    static let maximumUnixFDs = 16
    /// The deepest container nesting of a value, counting arrays, dict entries, structs and
    /// variants.
    static let maximumDepth = 64

    /// The body's length in bytes so far.
    private(set) var offset = 0
    /// The unix fds counted so far.
    private(set) var unixFDs = 0
    /// The bytes of `ay` values (`.bytes`) so far: bulk that parsing a marshalled message copies.
    private(set) var byteArrayLength = 0

    /// Checks `values` as a whole body and returns their parsed types, in order.
    mutating func check(body values: [DBusValue], headerLength: Int) throws -> [TypeNode] {
        var nodes: [TypeNode] = []
        var signatureLength = 0
        for value in values {
            let node = try Self.node(of: value)
            signatureLength += Self.signatureLength(of: node)
            guard signatureLength <= SignatureParser.maximumLength else {
                throw DBusError(.invalidSignature,
                                "the body's signature would be longer than \(SignatureParser.maximumLength) bytes")
            }
            try check(value, node, depth: 0)
            nodes.append(node)
        }
        guard headerLength + offset <= Self.maximumMessageLength else {
            throw DBusError.limitsExceeded(
                "message of \(headerLength + offset) bytes exceeds the \(Self.maximumMessageLength)-byte limit")
        }
        return nodes
    }

    /// `ay`, built once: the indirect enum would allocate on every `.bytes` value.
    private static let bytesNode = TypeNode.array(.basic(UInt8(ascii: "y")))

    /// The length of `node`'s signature text, counted without building the text.
    static func signatureLength(of node: TypeNode) -> Int {
        switch node {
        case .basic, .variant: return 1
        case .array(let element): return 1 + signatureLength(of: element)
        case .dictionary(_, let value): return 4 + signatureLength(of: value)
        case .structure(let fields): return 2 + fields.reduce(0) { $0 + signatureLength(of: $1) }
        }
    }

    /// The type of `value`, derived from its own case and declared element types.
    static func node(of value: DBusValue) throws -> TypeNode {
        switch value {
        case .byte: return .basic(UInt8(ascii: "y"))
        case .boolean: return .basic(UInt8(ascii: "b"))
        case .int16: return .basic(UInt8(ascii: "n"))
        case .uint16: return .basic(UInt8(ascii: "q"))
        case .int32: return .basic(UInt8(ascii: "i"))
        case .uint32: return .basic(UInt8(ascii: "u"))
        case .int64: return .basic(UInt8(ascii: "x"))
        case .uint64: return .basic(UInt8(ascii: "t"))
        case .double: return .basic(UInt8(ascii: "d"))
        case .string: return .basic(UInt8(ascii: "s"))
        case .objectPath: return .basic(UInt8(ascii: "o"))
        case .signature: return .basic(UInt8(ascii: "g"))
        case .unixFD: return .basic(UInt8(ascii: "h"))
        case .bytes: return bytesNode
        case .array(let element, _):
            // An element of one type code parses to exactly this node: skip building the text.
            if let node = singleCodeNode(element) { return .array(node) }
            return try SignatureParser.parseSingle("a" + element.rawValue)
        case .dictionary(let key, let value, _):
            if let keyNode = singleCodeNode(key), case .basic(let keyCode) = keyNode,
               let valueNode = singleCodeNode(value) {
                return .dictionary(key: keyCode, value: valueNode)
            }
            return try SignatureParser.parseSingle("a{" + key.rawValue + value.rawValue + "}")
        case .structure(let fields):
            guard !fields.isEmpty else { throw DBusError.invalidValue("a struct needs at least one field") }
            if let node = flatStructureNode(fields) { return node }
            let text = "(" + fields.map(\.signature.rawValue).joined() + ")"
            return try SignatureParser.parseSingle(text)
        case .variant: return .variant
        }
    }

    /// The node of a signature that is one basic type code or `v`, nil for anything else (which
    /// then goes through the parser).
    private static func singleCodeNode(_ signature: Signature) -> TypeNode? {
        let utf8 = signature.rawValue.utf8
        guard utf8.count == 1, let code = utf8.first else { return nil }
        if SignatureParser.isBasic(code) { return .basic(code) }
        return code == UInt8(ascii: "v") ? .variant : nil
    }

    /// The node of a struct whose fields are all basic values or variants, such as `(dd)`: what
    /// the parser gives for its text, which is at most 255 bytes (≤ 253 fields) and one struct
    /// deep. Nil for any other struct (which then goes through the parser).
    private static func flatStructureNode(_ fields: [DBusValue]) -> TypeNode? {
        guard fields.count <= SignatureParser.maximumLength - 2 else { return nil }
        var nodes: [TypeNode] = []
        nodes.reserveCapacity(fields.count)
        for field in fields {
            switch field {
            case .bytes, .array, .dictionary, .structure: return nil
            default:
                // A basic value or a variant: `node(of:)` cannot fail for those.
                guard let node = try? node(of: field) else { return nil }
                nodes.append(node)
            }
        }
        return .structure(nodes)
    }

    private mutating func align(_ n: Int) { offset = (offset + n - 1) & ~(n - 1) }

    private func mismatch(_ value: DBusValue, _ node: TypeNode) -> DBusError {
        DBusError.invalidValue(
            "value of signature '\(value.signature.rawValue)' where '\(node.text)' was declared")
    }

    private mutating func check(_ value: DBusValue, _ node: TypeNode, depth: Int) throws {
        guard depth <= Self.maximumDepth else {
            throw DBusError.invalidValue("containers nested deeper than \(Self.maximumDepth)")
        }
        switch (value, node) {
        case (.byte, .basic(UInt8(ascii: "y"))): offset += 1
        case (.boolean, .basic(UInt8(ascii: "b"))), (.int32, .basic(UInt8(ascii: "i"))),
            (.uint32, .basic(UInt8(ascii: "u"))):
            align(4); offset += 4
        case (.int16, .basic(UInt8(ascii: "n"))), (.uint16, .basic(UInt8(ascii: "q"))):
            align(2); offset += 2
        case (.int64, .basic(UInt8(ascii: "x"))), (.uint64, .basic(UInt8(ascii: "t"))),
            (.double, .basic(UInt8(ascii: "d"))):
            align(8); offset += 8
        case (.string(let s), .basic(UInt8(ascii: "s"))):
            let length = s.utf8.count
            // A Swift String is always valid UTF-8 (no surrogates), so only NUL needs a check.
            guard !s.utf8.contains(0) else { throw DBusError.invalidValue("string contains NUL") }
            try checkStringLength(length)
            align(4); offset += 4 + length + 1
        case (.objectPath(let p), .basic(UInt8(ascii: "o"))):
            try checkStringLength(p.rawValue.utf8.count)
            align(4); offset += 4 + p.rawValue.utf8.count + 1
        case (.signature(let g), .basic(UInt8(ascii: "g"))):
            _ = try SignatureParser.parse(g.rawValue)
            offset += 1 + g.rawValue.utf8.count + 1
        case (.unixFD(let fd), .basic(UInt8(ascii: "h"))):
            guard fd.isOpen else { throw DBusError.invalidValue("file descriptor is closed") }
            unixFDs += 1
            guard unixFDs <= Self.maximumUnixFDs else {
                throw DBusError.limitsExceeded(
                    "more than \(Self.maximumUnixFDs) unix fds in one message")
            }
            align(4); offset += 4
        case (.bytes(let bytes), .array(.basic(UInt8(ascii: "y")))):
            align(4); offset += 4
            try checkArrayLength(bytes.count)
            offset += bytes.count
            byteArrayLength += bytes.count
        case (.array(let element, let elements), .array(let elementNode)):
            guard element.rawValue == elementNode.text else { throw mismatch(value, node) }
            align(4); offset += 4
            align(elementNode.alignment)
            let start = offset
            for e in elements {
                try check(e, elementNode, depth: depth + 1)
                try checkArrayLength(offset - start)
            }
        case (.dictionary(let key, let valueType, let entries), .dictionary(let keyCode, let valueNode)):
            guard key.rawValue.utf8.count == 1, key.rawValue.utf8.first == keyCode, valueType.rawValue == valueNode.text
            else { throw mismatch(value, node) }
            align(4); offset += 4
            align(8)
            let start = offset
            for entry in entries {
                align(8)
                try check(entry.key, .basic(keyCode), depth: depth + 2)
                try check(entry.value, valueNode, depth: depth + 2)
                try checkArrayLength(offset - start)
            }
        case (.structure(let fields), .structure(let nodes)):
            guard fields.count == nodes.count else { throw mismatch(value, node) }
            align(8)
            for (f, n) in zip(fields, nodes) { try check(f, n, depth: depth + 1) }
        case (.variant(let inner), .variant):
            let innerNode = try Self.node(of: inner)
            offset += 1 + Self.signatureLength(of: innerNode) + 1
            align(innerNode.alignment)
            try check(inner, innerNode, depth: depth + 1)
        default:
            throw mismatch(value, node)
        }
    }

    private func checkArrayLength(_ length: Int) throws {
        guard length <= Self.maximumArrayLength else {
            throw DBusError.limitsExceeded(
                "array of more than \(Self.maximumArrayLength) bytes (\(length))")
        }
    }

    private func checkStringLength(_ length: Int) throws {
        guard length < Self.maximumMessageLength else {
            throw DBusError.limitsExceeded("string of \(length) bytes")
        }
    }
}
