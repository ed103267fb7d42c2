import FerryTerminal
import FerryText
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
    /// `ferryErrorDescription` turn it into a status and a message: the status from the one
    /// `ErrorTable` (a test holds the two equal), a dynamic type the broker names (`dyn.…`) by
    /// the MIME type it came from.
    init(busErrorName name: String, message text: String) {
        let message = text.isEmpty ? name : DynamicTypeText.readable(text)
        let status = ExitStatus.of(errorName: name)
        let noBroker = status == .noBroker && !message.contains("connect")
        let hint = noBroker ? StateLockHolder.startFailureHint().map { ": " + $0 } ?? "" : ""
        self.init(status: status.rawValue,
                  message: noBroker ? "the Ferry broker is not running and cannot be started (" + message + ")" + hint : message)
    }

    /// Writes `ferry: MESSAGE` to standard error in one write and returns the status.
    func report() -> Int32 {
        StandardError.report(message)
        return status
    }
}
