/// The one table from a D-Bus error name to an error code to `ferry`'s exit status (issue #19).
///
/// Every other mapping derives from it: the client library's `FerryError(DBusError)` takes its
/// code from ``code(forErrorName:)``, and the full CLI (`ExitStatus.of`) and the front
/// (`FrontFailure`) take their status from ``status(forCode:)``, so a name gives one answer on
/// every path. No Foundation: the `ferry` front links this module.
public enum ErrorTable {
    /// The prefix of Ferry's own error names on the wire.
    public static let ferryPrefix = "org.ferry.Error."

    /// Every error code, with the exit status `ferry` gives it. The codes are the last element of
    /// an `org.ferry.Error.*` name, and the client library's `FerryError.Code` raw values.
    public static let statuses: [String: ExitStatus] = [
        "InvalidArgument": .usage,
        "NotFound": .notFound,
        "PermissionDenied": .permissionDenied,
        "Unavailable": .unavailable,
        "Cancelled": .unavailable,
        "Timeout": .timeout,
        "TooLarge": .failure,
        // An app whose manifest allows one scene, asked for a second (scene open): an error, not a usage mistake.
        "MultipleScenesNotSupported": .failure,
        // A paste into a scene on the external display (non-interactive): refused, as a declined paste is.
        "NotInteractive": .failure,
        "NoBroker": .noBroker,
        "IO": .failure,
        "Bus": .failure,
    ]

    /// Codes that name a local failure of the client (no bus, a file, any other bus error): an
    /// `org.ferry.Error.*` reply that carries one of these names is some other bus error (`Bus`).
    public static let localCodes: Set<String> = ["NoBroker", "IO", "Bus"]

    /// The other bus error names a code is known for: the bus's own (`org.freedesktop.DBus.Error.*`)
    /// and the D-Bus layer's local ones (`org.ferry.DBus.Error.*`).
    public static let busNames: [String: String] = [
        // Nobody owns org.ferry.Broker and it cannot be activated, or there is no bus to reach.
        "org.freedesktop.DBus.Error.ServiceUnknown": "NoBroker",
        "org.freedesktop.DBus.Error.NameHasNoOwner": "NoBroker",
        "org.freedesktop.DBus.Error.NoServer": "NoBroker",
        "org.freedesktop.DBus.Error.FileNotFound": "NoBroker",
        "org.freedesktop.DBus.Error.BadAddress": "NoBroker",
        "org.freedesktop.DBus.Error.NoNetwork": "NoBroker",
        "org.freedesktop.DBus.Error.Disconnected": "NoBroker",
        // An object the broker no longer exports: a named pasteboard removed meanwhile, a drag
        // session that ended.
        "org.freedesktop.DBus.Error.UnknownObject": "NotFound",
        "org.freedesktop.DBus.Error.AccessDenied": "PermissionDenied",
        "org.freedesktop.DBus.Error.AuthFailed": "PermissionDenied",
        "org.freedesktop.DBus.Error.NoReply": "Timeout",
        "org.freedesktop.DBus.Error.Timeout": "Timeout",
        "org.freedesktop.DBus.Error.TimedOut": "Timeout",
        "org.freedesktop.DBus.Error.InvalidArgs": "InvalidArgument",
        "org.freedesktop.DBus.Error.InvalidSignature": "InvalidArgument",
        "org.freedesktop.DBus.Error.LimitsExceeded": "TooLarge",
        "org.ferry.DBus.Error.InvalidValue": "InvalidArgument",
        "org.ferry.DBus.Error.InvalidObjectPath": "InvalidArgument",
        "org.ferry.DBus.Error.InvalidName": "InvalidArgument",
        "org.ferry.DBus.Error.SystemError": "IO",
    ]

    /// The code for a D-Bus error name: the `org.ferry.Error.*` suffix when it is a known code
    /// the wire may carry, the bus name's entry, `NoBroker` for a failed activation
    /// (`org.freedesktop.DBus.Error.Spawn.*`), and `Bus` for anything else.
    public static func code(forErrorName name: String) -> String {
        if name.hasPrefix(ferryPrefix) {
            let code = String(name.dropFirst(ferryPrefix.utf8.count))
            return statuses[code] != nil && !localCodes.contains(code) ? code : "Bus"
        }
        if let code = busNames[name] { return code }
        return name.hasPrefix("org.freedesktop.DBus.Error.Spawn.") ? "NoBroker" : "Bus"
    }

    /// The exit status for a code; `failure` for a code the table does not know.
    public static func status(forCode code: String) -> ExitStatus {
        statuses[code] ?? .failure
    }

    /// The exit status for a D-Bus error name: the status of its ``code(forErrorName:)``.
    public static func status(forErrorName name: String) -> ExitStatus {
        status(forCode: code(forErrorName: name))
    }
}
