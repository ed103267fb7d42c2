/// A validated D-Bus interface name, such as `org.freedesktop.DBus.Properties`.
///
/// At most 255 bytes, two or more dot-separated elements of `[A-Za-z_][A-Za-z0-9_]*`.
public struct InterfaceName: Sendable, Hashable, Comparable, RawRepresentable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    /// The name as text.
    public let rawValue: String

    /// Validates `rawValue` as a interface name.
    ///
    /// - Throws: `DBusError` named `org.ferry.DBus.Error.InvalidName` when it breaks the rules.
    ///
    /// Note: with a string *literal* argument, `Type("…")` is a literal (it uses
    /// `init(stringLiteral:)`), which traps when invalid; pass a `String` value to get the
    /// thrown error.
    public init(_ rawValue: String) throws {
        try NameRules.checkDotted(rawValue, kind: "interface name")
        self.rawValue = rawValue
    }

    /// Validates `rawValue`; nil when it is not a valid interface name.
    public init?(rawValue: String) { try? self.init(rawValue) }

    /// A literal interface name. Traps when the literal is invalid (a programmer error).
    public init(stringLiteral value: String) {
        do { try self.init(value) } catch { preconditionFailure("\(error)") }
    }

    /// Wraps a name libdbus has already validated.
    init(unchecked rawValue: String) { self.rawValue = rawValue }

    /// The name as text.
    public var description: String { rawValue }

    /// Orders names by their text.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}
