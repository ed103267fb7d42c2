/// Text checked against one of the D-Bus specification's rules: object paths, signatures, and
/// bus, interface, member and error names.
///
/// A conforming type supplies the checking `init(_:) throws`; the rest comes from here: a
/// failable `init?(rawValue:)`, string literals (a literal that breaks the rule is a programmer
/// error and traps), `description`, ordering by text, and `Codable` as a plain string that is
/// validated on decode. (As D-Bus values, paths and signatures are the types `o` and `g`,
/// through `DBusRepresentable`.)
///
/// With a string *literal* argument, `Type("…")` is a literal (it uses `init(stringLiteral:)`)
/// and traps when invalid; pass a `String` value to get the thrown error.
public protocol DBusText: RawRepresentable<String>, Sendable, Hashable, Comparable, CustomStringConvertible,
    ExpressibleByStringLiteral, Codable where StringLiteralType == String
{
    /// Validates `rawValue`.
    ///
    /// - Throws: `DBusError` naming the rule `rawValue` breaks.
    init(_ rawValue: String) throws
}

extension DBusText {
    /// Validates `rawValue`; nil when it breaks the rule.
    public init?(rawValue: String) { try? self.init(rawValue) }

    /// A literal value. Traps when the literal breaks the rule (a programmer error).
    public init(stringLiteral value: String) {
        do { try self.init(value) } catch { preconditionFailure("\(error)") }
    }

    /// The text.
    public var description: String { rawValue }

    /// Orders values by their text.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Decodes from a string, validating it.
    public init(from decoder: any Decoder) throws {
        try self.init(try decoder.singleValueContainer().decode(String.self))
    }

    /// Encodes as a string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
