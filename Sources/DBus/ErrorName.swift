/// A validated D-Bus error name, such as `org.freedesktop.DBus.Error.Failed`.
///
/// Error names follow the interface-name rules: at most 255 bytes, two or more dot-separated
/// elements of `[A-Za-z_][A-Za-z0-9_]*`.
public struct ErrorName: DBusText {
    /// The name as text.
    public let rawValue: String

    /// Validates `rawValue` as an error name.
    ///
    /// - Throws: `DBusError` named `org.ferry.DBus.Error.InvalidName` when it breaks the rules.
    public init(_ rawValue: String) throws {
        try NameRules.checkDotted(rawValue, kind: "error name")
        self.rawValue = rawValue
    }

    init(unchecked rawValue: String) { self.rawValue = rawValue }
}

extension ErrorName {
    /// `org.freedesktop.DBus.Error.Failed`: a generic failure.
    public static let failed = ErrorName(unchecked: "org.freedesktop.DBus.Error.Failed")
    /// `org.freedesktop.DBus.Error.UnknownMethod`.
    public static let unknownMethod = ErrorName(unchecked: "org.freedesktop.DBus.Error.UnknownMethod")
    /// `org.freedesktop.DBus.Error.UnknownObject`.
    public static let unknownObject = ErrorName(unchecked: "org.freedesktop.DBus.Error.UnknownObject")
    /// `org.freedesktop.DBus.Error.UnknownInterface`.
    public static let unknownInterface = ErrorName(
        unchecked: "org.freedesktop.DBus.Error.UnknownInterface")
    /// `org.freedesktop.DBus.Error.UnknownProperty`.
    public static let unknownProperty = ErrorName(
        unchecked: "org.freedesktop.DBus.Error.UnknownProperty")
    /// `org.freedesktop.DBus.Error.PropertyReadOnly`.
    public static let propertyReadOnly = ErrorName(
        unchecked: "org.freedesktop.DBus.Error.PropertyReadOnly")
    /// `org.freedesktop.DBus.Error.InvalidArgs`; also used for local decoding failures.
    public static let invalidArgs = ErrorName(unchecked: "org.freedesktop.DBus.Error.InvalidArgs")
    /// `org.freedesktop.DBus.Error.InvalidSignature`; also used for local signature validation.
    public static let invalidSignature = ErrorName(
        unchecked: "org.freedesktop.DBus.Error.InvalidSignature")
    /// `org.freedesktop.DBus.Error.NoReply`.
    public static let noReply = ErrorName(unchecked: "org.freedesktop.DBus.Error.NoReply")
    /// `org.freedesktop.DBus.Error.Timeout`.
    public static let timeout = ErrorName(unchecked: "org.freedesktop.DBus.Error.Timeout")
    /// `org.freedesktop.DBus.Error.ServiceUnknown`.
    public static let serviceUnknown = ErrorName(
        unchecked: "org.freedesktop.DBus.Error.ServiceUnknown")
    /// `org.freedesktop.DBus.Error.NameHasNoOwner`.
    public static let nameHasNoOwner = ErrorName(
        unchecked: "org.freedesktop.DBus.Error.NameHasNoOwner")
    /// `org.freedesktop.DBus.Error.AccessDenied`.
    public static let accessDenied = ErrorName(unchecked: "org.freedesktop.DBus.Error.AccessDenied")
    /// `org.freedesktop.DBus.Error.LimitsExceeded`; also used for local size and fd limits.
    public static let limitsExceeded = ErrorName(
        unchecked: "org.freedesktop.DBus.Error.LimitsExceeded")
    /// `org.freedesktop.DBus.Error.Disconnected`.
    public static let disconnected = ErrorName(unchecked: "org.freedesktop.DBus.Error.Disconnected")
    /// `org.freedesktop.DBus.Error.NotSupported`.
    public static let notSupported = ErrorName(unchecked: "org.freedesktop.DBus.Error.NotSupported")
    /// `org.freedesktop.DBus.Error.NoServer`: nobody listens at a peer-to-peer address.
    public static let noServer = ErrorName(unchecked: "org.freedesktop.DBus.Error.NoServer")
    /// `org.freedesktop.DBus.Error.AuthFailed`: the server or the client refused the other.
    public static let authFailed = ErrorName(unchecked: "org.freedesktop.DBus.Error.AuthFailed")
    /// `org.freedesktop.DBus.Error.AddressInUse`: something is already at a server's address.
    public static let addressInUse = ErrorName(unchecked: "org.freedesktop.DBus.Error.AddressInUse")
    /// `org.freedesktop.DBus.Error.BadAddress`: an address this library cannot use.
    public static let badAddress = ErrorName(unchecked: "org.freedesktop.DBus.Error.BadAddress")
    /// `org.freedesktop.DBus.Error.NoMemory`.
    public static let noMemory = ErrorName(unchecked: "org.freedesktop.DBus.Error.NoMemory")

    /// `org.ferry.DBus.Error.InvalidValue`: a local value failed validation (NUL in a string,
    /// invalid UTF-8, a value that does not match its declared type).
    public static let invalidValue = ErrorName(unchecked: "org.ferry.DBus.Error.InvalidValue")
    /// `org.ferry.DBus.Error.InvalidObjectPath`: a local object path failed validation.
    public static let invalidObjectPath = ErrorName(
        unchecked: "org.ferry.DBus.Error.InvalidObjectPath")
    /// `org.ferry.DBus.Error.InvalidName`: a local bus, interface, member or error name failed
    /// validation.
    public static let invalidName = ErrorName(unchecked: "org.ferry.DBus.Error.InvalidName")
    /// `org.ferry.DBus.Error.SystemError`: a system call failed (the message carries errno).
    public static let systemError = ErrorName(unchecked: "org.ferry.DBus.Error.SystemError")
}
