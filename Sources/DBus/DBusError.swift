import CDBus
import FerrySystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An error with a D-Bus error name and a human-readable message.
///
/// The same type describes errors replied by a remote peer and errors raised locally before
/// anything reaches libdbus. Local validation failures use these names:
///
/// | failure | name |
/// |---|---|
/// | a string with NUL or invalid UTF-8, a value that breaks the type system | `org.ferry.DBus.Error.InvalidValue` |
/// | an invalid object path | `org.ferry.DBus.Error.InvalidObjectPath` |
/// | an invalid bus, interface, member or error name | `org.ferry.DBus.Error.InvalidName` |
/// | an invalid signature | `org.freedesktop.DBus.Error.InvalidSignature` |
/// | an array over 64 MiB, a message over 128 MiB, more than 16 fds | `org.freedesktop.DBus.Error.LimitsExceeded` |
/// | a value of the wrong type when decoding | `org.freedesktop.DBus.Error.InvalidArgs` |
/// | a failing system call (fds, pipes, memfds) | `org.ferry.DBus.Error.SystemError` |
///
/// Decoding failures use `InvalidArgs` so that a method handler that throws one replies with the
/// error a D-Bus caller expects.
public struct DBusError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The D-Bus error name, such as `org.freedesktop.DBus.Error.Failed`.
    public var name: ErrorName
    /// The human-readable message; may be empty.
    public var message: String

    /// Creates an error with a name and a message.
    public init(_ name: ErrorName, _ message: String = "") {
        self.name = name
        self.message = message
    }

    /// `name: message`, or just the name when there is no message.
    public var description: String {
        message.isEmpty ? name.rawValue : "\(name.rawValue): \(message)"
    }

    /// `error` itself when it is a `DBusError`, `org.ferry.DBus.Error.SystemError` for a failed
    /// system call of `FerrySystem`, otherwise `org.freedesktop.DBus.Error.Failed` carrying its
    /// description (what a method handler replies for an unexpected error).
    public init(converting error: any Error) {
        if let dbusError = error as? DBusError {
            self = dbusError
        } else if let systemError = error as? SystemCallError {
            self = systemError.dbusError
        } else {
            self.init(.failed, String(describing: error))
        }
    }

    /// Reads a set libdbus `DBusError` and frees it. Returns nil when `error` is not set.
    static func consume(_ error: inout CDBus.DBusError) -> DBusError? {
        guard dbus_error_is_set(&error) != 0 else { return nil }
        defer { dbus_error_free(&error) }
        let rawName = error.name.map { String(cString: $0) } ?? ErrorName.failed.rawValue
        let message = error.message.map { String(cString: $0) } ?? ""
        let name = (try? ErrorName(rawName)) ?? .failed
        return DBusError(name, message)
    }

    /// Runs `body` with a fresh libdbus `DBusError`, and throws it if `body` set it.
    static func check<R>(_ body: (UnsafeMutablePointer<CDBus.DBusError>) throws -> R) throws -> R {
        var error = cdbus_error_init()
        let result = try body(&error)
        if let thrown = consume(&error) { throw thrown }
        return result
    }

    /// A local validation failure of a value.
    static func invalidValue(_ message: String) -> DBusError { DBusError(.invalidValue, message) }
    /// A limit of the protocol or the bus was exceeded.
    static func limitsExceeded(_ message: String) -> DBusError { DBusError(.limitsExceeded, message) }
    /// A decoded value did not have the expected type.
    @usableFromInline
    static func typeMismatch(expected: String, actual: Signature, context: String = "")
        -> DBusError
    {
        let place = context.isEmpty ? "" : " for \(context)"
        return DBusError(.invalidArgs,
                         "expected a value of signature '\(expected)'\(place), got '\(actual.rawValue)'")
    }
    /// A system call failed with `errno`.
    static func system(_ call: String, errno code: Int32) -> DBusError {
        DBusError(.systemError, "\(call) failed: \(String(cString: strerror(code))) (errno \(code))")
    }
}
