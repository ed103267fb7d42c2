/// One complete type, parsed from a signature.
@usableFromInline
indirect enum TypeNode: Sendable, Hashable {
    /// A basic type: its type code (`y`, `b`, `n`, `q`, `i`, `u`, `x`, `t`, `d`, `s`, `o`, `g`, `h`).
    case basic(UInt8)
    case variant
    case array(TypeNode)
    /// `a{kv}`: key is a basic type code.
    case dictionary(key: UInt8, value: TypeNode)
    case structure([TypeNode])

    /// The signature of this type: for a single type code, without building its text.
    var signature: Signature {
        switch self {
        case .basic(let code): Signature(typeCode: code)
        case .variant: Signature(typeCode: UInt8(ascii: "v"))
        default: Signature(unchecked: text)
        }
    }

    /// The signature text of this type.
    var text: String {
        var s = ""
        append(to: &s)
        return s
    }

    func append(to s: inout String) {
        switch self {
        case .basic(let c): s.unicodeScalars.append(Unicode.Scalar(c))
        case .variant: s += "v"
        case .array(let e): s += "a"; e.append(to: &s)
        case .dictionary(let k, let v):
            s += "a{"; s.unicodeScalars.append(Unicode.Scalar(k)); v.append(to: &s); s += "}"
        case .structure(let fields):
            s += "("
            for f in fields { f.append(to: &s) }
            s += ")"
        }
    }

    /// Wire alignment of the type.
    @usableFromInline
    var alignment: Int {
        switch self {
        case .basic(let c): return SignatureParser.basicAlignment(c)
        case .variant: return 1
        case .array, .dictionary: return 4
        case .structure: return 8
        }
    }
}

/// Parses and validates signatures by the specification's grammar.
enum SignatureParser {
    static let maximumLength = 255
    static let maximumDepth = 32
    /// Whether `code` is a basic type code (`ybnqiuxtdsogh`); a switch, cheaper than hashing.
    static func isBasic(_ code: UInt8) -> Bool {
        switch code {
        case UInt8(ascii: "y"), UInt8(ascii: "b"), UInt8(ascii: "n"), UInt8(ascii: "q"), UInt8(ascii: "i"),
             UInt8(ascii: "u"), UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"), UInt8(ascii: "s"),
             UInt8(ascii: "o"), UInt8(ascii: "g"), UInt8(ascii: "h"):
            return true
        default:
            return false
        }
    }

    static func basicAlignment(_ code: UInt8) -> Int {
        switch code {
        case UInt8(ascii: "y"), UInt8(ascii: "g"): return 1
        case UInt8(ascii: "n"), UInt8(ascii: "q"): return 2
        case UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"): return 8
        default: return 4
        }
    }

    /// Parses `text` into its complete types.
    static func parse(_ text: String) throws -> [TypeNode] {
        let bytes = Array(text.utf8)
        guard bytes.count <= maximumLength else {
            throw failure(text, "longer than \(maximumLength) bytes")
        }
        var index = 0
        var types: [TypeNode] = []
        while index < bytes.count {
            types.append(try parseOne(bytes, &index, arrays: 0, structs: 0, text: text))
        }
        return types
    }

    /// Parses `text` as exactly one complete type.
    static func parseSingle(_ text: String) throws -> TypeNode {
        let types = try parse(text)
        guard types.count == 1 else { throw failure(text, "not a single complete type") }
        return types[0]
    }

    static func failure(_ text: String, _ why: String) -> DBusError {
        let shown = text.count > 64 ? String(text.prefix(64)) + "…" : text
        return DBusError(.invalidSignature, "invalid signature '\(shown)': \(why)")
    }

    private static func parseOne(_ b: [UInt8], _ i: inout Int, arrays: Int, structs: Int,
                                 text: String) throws -> TypeNode
    {
        guard i < b.count else { throw failure(text, "incomplete type") }
        let c = b[i]
        i += 1
        if isBasic(c) { return .basic(c) }
        switch c {
        case UInt8(ascii: "v"):
            return .variant
        case UInt8(ascii: "a"):
            guard arrays < maximumDepth else {
                throw failure(text, "arrays nested deeper than \(maximumDepth)")
            }
            guard i < b.count else { throw failure(text, "array without an element type") }
            if b[i] == UInt8(ascii: "{") {
                i += 1
                guard structs < maximumDepth else {
                    throw failure(text, "structs and dict entries nested deeper than \(maximumDepth)")
                }
                guard i < b.count else { throw failure(text, "unterminated dict entry") }
                let key = b[i]
                guard isBasic(key) else {
                    throw failure(text, "a dict entry key must be a basic type")
                }
                i += 1
                guard i < b.count, b[i] != UInt8(ascii: "}") else {
                    throw failure(text, "a dict entry needs a value type")
                }
                let value = try parseOne(b, &i, arrays: arrays + 1, structs: structs + 1, text: text)
                guard i < b.count, b[i] == UInt8(ascii: "}") else {
                    throw failure(text, "a dict entry holds exactly one key and one value")
                }
                i += 1
                return .dictionary(key: key, value: value)
            }
            return .array(try parseOne(b, &i, arrays: arrays + 1, structs: structs, text: text))
        case UInt8(ascii: "("):
            guard structs < maximumDepth else {
                throw failure(text, "structs nested deeper than \(maximumDepth)")
            }
            var fields: [TypeNode] = []
            while true {
                guard i < b.count else { throw failure(text, "unterminated struct") }
                if b[i] == UInt8(ascii: ")") {
                    i += 1
                    break
                }
                fields.append(try parseOne(b, &i, arrays: arrays, structs: structs + 1, text: text))
            }
            guard !fields.isEmpty else { throw failure(text, "empty struct") }
            return .structure(fields)
        case UInt8(ascii: "{"):
            throw failure(text, "dict entry outside an array")
        case UInt8(ascii: ")"), UInt8(ascii: "}"):
            throw failure(text, "unbalanced '\(Unicode.Scalar(c))'")
        default:
            throw failure(text, "unknown type code '\(Unicode.Scalar(c))'")
        }
    }
}
