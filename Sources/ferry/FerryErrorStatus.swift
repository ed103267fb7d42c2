import Ferry
import FerryTerminal

extension ExitStatus {
    /// The status for a client-library error code, from the one `ErrorTable`.
    static func of(_ code: FerryError.Code) -> ExitStatus {
        ErrorTable.status(forCode: code.rawValue)
    }
}

/// The exit status and message for an error of the `Ferry` client library, nil for other errors.
func ferryErrorDescription(_ error: any Error) -> (ExitStatus, String)? {
    guard let error = error as? FerryError else { return nil }
    let status = ExitStatus.of(error.code)
    if status == .noBroker, !error.message.contains("connect") {
        // The usual cause, a ferryd of another session bus holding the state directory, is
        // otherwise only in the bus's log.
        let hint = StateLockHolder.startFailureHint().map { ": \($0)" } ?? ""
        return (status, "the Ferry broker is not running and cannot be started (\(error.message))\(hint)")
    }
    return (status, error.message)
}
