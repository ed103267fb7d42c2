/// A validated D-Bus bus name, unique or well-known, such as `org.freedesktop.DBus`.
///
/// Unique names start with `:` (`:1.42`); well-known names (`org.example.App`) have elements that do not start with a digit. At most 255 bytes, two or more dot-separated elements of `[A-Za-z0-9_-]`.
public struct BusName: DBusText {
    /// The name as text.
    public let rawValue: String

    /// Validates `rawValue` as a bus name, unique or well-known.
    ///
    /// - Throws: `DBusError` named `org.ferry.DBus.Error.InvalidName` when it breaks the rules.
    public init(_ rawValue: String) throws {
        try NameRules.checkBusName(rawValue)
        self.rawValue = rawValue
    }

    /// Wraps a name libdbus has already validated.
    init(unchecked rawValue: String) { self.rawValue = rawValue }
}

extension BusName {
    /// True for a unique connection name such as `:1.42`.
    public var isUnique: Bool { rawValue.utf8.first == 0x3A }

    /// `org.freedesktop.DBus`, the message bus itself.
    public static let bus = BusName(unchecked: "org.freedesktop.DBus")
}
