/// A validated D-Bus member (method, signal or property) name, such as `GetAll`.
///
/// At most 255 bytes of `[A-Za-z_][A-Za-z0-9_]*`, no dots.
public struct MemberName: DBusText {
    /// The name as text.
    public let rawValue: String

    /// Validates `rawValue` as a member (method, signal or property) name.
    ///
    /// - Throws: `DBusError` named `org.ferry.DBus.Error.InvalidName` when it breaks the rules.
    public init(_ rawValue: String) throws {
        try NameRules.checkMember(rawValue)
        self.rawValue = rawValue
    }

    /// Wraps a name libdbus has already validated.
    init(unchecked rawValue: String) { self.rawValue = rawValue }
}
