/// A validated D-Bus type signature: zero or more complete types, such as `a{sv}` or `sia(ii)`.
///
/// Validation follows the specification's grammar: known type codes only, at most 255 bytes,
/// arrays nested at most 32 deep and structs at most 32 deep, dict entries only directly inside
/// an array with a basic key type and exactly one value type, no empty structs.
public struct Signature: DBusText {
    /// The signature as text.
    public let rawValue: String

    /// Validates `rawValue` as a signature (any number of complete types, including none).
    ///
    /// - Throws: `DBusError` named `org.freedesktop.DBus.Error.InvalidSignature`.
    public init(_ rawValue: String) throws {
        _ = try SignatureParser.parse(rawValue)
        self.rawValue = rawValue
    }

    /// Wraps text that is known to be valid (built from valid parts, or checked by libdbus).
    init(unchecked rawValue: String) { self.rawValue = rawValue }

    /// The signature's complete types in order: `sia(ii)` gives `s`, `i`, `a(ii)`.
    public var completeTypes: [Signature] {
        ((try? SignatureParser.parse(rawValue)) ?? []).map(\.signature)
    }

    /// True when the signature is exactly one complete type (what an array element, a variant
    /// or a property holds).
    public var isSingleCompleteType: Bool {
        ((try? SignatureParser.parse(rawValue))?.count ?? 0) == 1
    }

    /// True for the empty signature (no values).
    public var isEmpty: Bool { rawValue.isEmpty }

    /// The signature of an array of `element`: `a` + element.
    ///
    /// - Throws: `InvalidSignature` when `element` is not a single complete type or the result
    ///   breaks the length or nesting limits.
    public static func array(of element: Signature) throws -> Signature {
        try single(element, "array element")
        return try Signature("a" + element.rawValue)
    }

    /// The signature of a dictionary `a{kv}`.
    ///
    /// - Throws: `InvalidSignature` when `key` is not a basic type, `value` not a single
    ///   complete type, or the result breaks the limits.
    public static func dictionary(key: Signature, value: Signature) throws -> Signature {
        try single(value, "dictionary value")
        return try Signature("a{" + key.rawValue + value.rawValue + "}")
    }

    /// The signature of a struct holding `fields` in order: `(` + fields + `)`.
    ///
    /// - Throws: `InvalidSignature` when `fields` is empty or the result breaks the limits.
    public static func structure(_ fields: [Signature]) throws -> Signature {
        try Signature("(" + fields.map(\.rawValue).joined() + ")")
    }

    /// The concatenation of signatures (for example a method's argument list).
    ///
    /// - Throws: `InvalidSignature` when the result is longer than 255 bytes.
    public static func sequence(_ parts: [Signature]) throws -> Signature {
        try Signature(parts.map(\.rawValue).joined())
    }

    private static func single(_ s: Signature, _ role: String) throws {
        guard s.isSingleCompleteType else {
            throw DBusError(.invalidSignature, "\(role) '\(s.rawValue)' is not a single complete type")
        }
    }

    /// The signature of one type code, a basic type or `v`. The common codes need no text built:
    /// every dictionary key and most array elements read from a message pass here, and making
    /// the text from a byte with `String(decoding:as:)` went through a dynamic cast each time.
    init(typeCode code: UInt8) {
        switch code {
        case UInt8(ascii: "s"): self = Signature(unchecked: "s")
        case UInt8(ascii: "v"): self = Signature(unchecked: "v")
        case UInt8(ascii: "y"): self = Signature(unchecked: "y")
        case UInt8(ascii: "u"): self = Signature(unchecked: "u")
        case UInt8(ascii: "o"): self = Signature(unchecked: "o")
        case UInt8(ascii: "b"): self = Signature(unchecked: "b")
        case UInt8(ascii: "i"): self = Signature(unchecked: "i")
        case UInt8(ascii: "t"): self = Signature(unchecked: "t")
        case UInt8(ascii: "x"): self = Signature(unchecked: "x")
        default: self = Signature(unchecked: String(Character(Unicode.Scalar(code))))
        }
    }

    /// `y`.
    public static let byte = Signature(unchecked: "y")
    /// `b`.
    public static let boolean = Signature(unchecked: "b")
    /// `n`.
    public static let int16 = Signature(unchecked: "n")
    /// `q`.
    public static let uint16 = Signature(unchecked: "q")
    /// `i`.
    public static let int32 = Signature(unchecked: "i")
    /// `u`.
    public static let uint32 = Signature(unchecked: "u")
    /// `x`.
    public static let int64 = Signature(unchecked: "x")
    /// `t`.
    public static let uint64 = Signature(unchecked: "t")
    /// `d`.
    public static let double = Signature(unchecked: "d")
    /// `s`.
    public static let string = Signature(unchecked: "s")
    /// `o`.
    public static let objectPath = Signature(unchecked: "o")
    /// `g`.
    public static let signature = Signature(unchecked: "g")
    /// `h`.
    public static let unixFD = Signature(unchecked: "h")
    /// `v`.
    public static let variant = Signature(unchecked: "v")
    /// `ay`.
    public static let bytes = Signature(unchecked: "ay")
    /// `a{sv}`, the conventional extensible dictionary.
    public static let variantDictionary = Signature(unchecked: "a{sv}")
    /// The empty signature.
    public static let empty = Signature(unchecked: "")
}
