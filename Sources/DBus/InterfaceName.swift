/// A validated D-Bus interface name, such as `org.freedesktop.DBus.Properties`.
///
/// At most 255 bytes, two or more dot-separated elements of `[A-Za-z_][A-Za-z0-9_]*`.
public struct InterfaceName: DBusText {
    /// The name as text.
    public let rawValue: String

    /// Validates `rawValue` as a interface name.
    ///
    /// - Throws: `DBusError` named `org.ferry.DBus.Error.InvalidName` when it breaks the rules.
    public init(_ rawValue: String) throws {
        try NameRules.checkDotted(rawValue, kind: "interface name")
        self.rawValue = rawValue
    }

    /// Wraps a name libdbus has already validated.
    init(unchecked rawValue: String) { self.rawValue = rawValue }
}
