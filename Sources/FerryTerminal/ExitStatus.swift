/// The exit statuses of `ferry`, as `ferry --help` and the README document them. Every error
/// becomes one of these in `ExitStatus.of(_:)` (the full CLI) and `FrontFailure` (the front),
/// both through the one ``ErrorTable``.
public enum ExitStatus: Int32, Sendable, CaseIterable {
    /// Success (for `type conforms`: the type conforms).
    case success = 0
    /// An error: the bus or the daemon failed, reading or writing failed (for `type conforms`:
    /// the type does not conform).
    case failure = 1
    /// Not found: nothing on the pasteboard, nothing conforming to the type asked for, no such
    /// item, history entry or pasteboard; an unknown or invalid type; a file that cannot be read.
    case notFound = 2
    /// The broker refused: the paste policy or another user's broker.
    case permissionDenied = 3
    /// Unavailable: the app that promised the data went away before handing it over.
    case unavailable = 4
    /// Timeout: the source delivered nothing for too long.
    case timeout = 5
    /// Usage: bad or missing arguments, a bad pasteboard name, an argument the broker rejects.
    case usage = 64
    /// No broker: no bus to connect to, or `org.ferry.Broker` is neither running nor activatable.
    case noBroker = 69

    /// The status for a `org.ferry.Error.<suffix>` error, or for another D-Bus error name
    /// (``ErrorTable``).
    public static func of(errorName name: String) -> ExitStatus {
        ErrorTable.status(forErrorName: name)
    }

    /// The status for an error code (the name's last element: `NotFound`), from ``ErrorTable``.
    public static func of(ferryCode code: String) -> ExitStatus {
        ErrorTable.status(forCode: code)
    }
}
