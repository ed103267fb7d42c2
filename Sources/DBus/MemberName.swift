/// A validated D-Bus member (method, signal or property) name, such as `GetAll`.
///
/// At most 255 bytes of `[A-Za-z_][A-Za-z0-9_]*`, no dots.
public struct MemberName: Sendable, Hashable, Comparable, RawRepresentable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    /// The name as text.
    public let rawValue: String

    /// Validates `rawValue` as a member (method, signal or property) name.
    ///
    /// - Throws: `DBusError` named `org.ferry.DBus.Error.InvalidName` when it breaks the rules.
    ///
    /// Note: with a string *literal* argument, `Type("…")` is a literal (it uses
    /// `init(stringLiteral:)`), which traps when invalid; pass a `String` value to get the
    /// thrown error.
    public init(_ rawValue: String) throws {
        try NameRules.checkMember(rawValue)
        self.rawValue = rawValue
    }

    /// Validates `rawValue`; nil when it is not a valid member (method, signal or property) name.
    public init?(rawValue: String) { try? self.init(rawValue) }

    /// A literal member (method, signal or property) name. Traps when the literal is invalid (a programmer error).
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
