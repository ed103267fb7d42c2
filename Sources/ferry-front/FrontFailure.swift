import FerryTerminal
#if canImport(Glibc)
import Glibc
#endif

/// A paste that failed after the broker delivered (so the full CLI must not read again): the
/// exit status and the line the full CLI would print for the same failure.
struct FrontFailure: Error, Equatable {
    var status: Int32
    var message: String

    init(status: Int32, message: String) {
        self.status = status
        self.message = message
    }

    /// A D-Bus error reply, as the client library's `FerryError(DBusError)` and the full CLI's
    /// `ferryErrorDescription` turn it into a status and a message (a test holds the two equal).
    init(busErrorName name: String, message text: String) {
        let message = text.isEmpty ? name : text
        let status: ExitStatus
        if name.hasPrefix("org.ferry.Error."), !["org.ferry.Error.NoBroker", "org.ferry.Error.Bus", "org.ferry.Error.IO"].contains(name) {
            status = ExitStatus.of(errorName: name)
        } else {
            switch name {
            case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner",
                 _ where name.hasPrefix("org.freedesktop.DBus.Error.Spawn."):
                status = .noBroker
            case "org.freedesktop.DBus.Error.UnknownObject": status = .notFound  // a named pasteboard removed meanwhile
            case "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout": status = .timeout
            case "org.freedesktop.DBus.Error.InvalidArgs": status = .usage
            default: status = .failure
            }
        }
        let noBroker = status == .noBroker && !message.contains("connect")
        let hint = noBroker ? StateLockHolder.startFailureHint().map { ": " + $0 } ?? "" : ""
        self.init(status: status.rawValue,
                  message: noBroker ? "the Ferry broker is not running and cannot be started (" + message + ")" + hint : message)
    }

    /// Writes `ferry: MESSAGE` to standard error in one write and returns the status.
    func report() -> Int32 {
        let line = Array(("ferry: " + PrintableText.line(message) + "\n").utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        return status
    }
}
