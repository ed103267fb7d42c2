import ArgumentParser
import Ferry
import FerryModel
import FerryTerminal

/// A domain error: printed as `ferry: MESSAGE` on stderr, exit status `status` (2 unless given).
/// Described by its message alone, so that wherever it is interpolated (a loader's failure sent
/// to a reader) no internal value shows.
struct CLIFailure: ReportableError, CustomStringConvertible {
    var status: ExitStatus
    var message: String
    init(_ message: String) { self.init(.notFound, message) }
    init(_ status: ExitStatus, _ message: String) {
        self.status = status
        self.message = message
    }

    var description: String { message }
}

/// An error that says itself which exit status and line `ferry` reports for it. A command with
/// errors of its own makes them conform (or throws `CLIFailure`); everything else is mapped in
/// ``describe(_:)``, so commands just throw and the root reports (``Ferry/exit(reporting:arguments:)``).
protocol ReportableError: Error {
    /// The exit status, one of those `ferry --help` documents.
    var status: ExitStatus { get }
    /// The line printed after `ferry: `.
    var message: String { get }
}

extension Ferry {
    /// Ends the process for an error a command's `run()` threw (or parsing did): the one place
    /// errors become what the user sees. A usage error (ArgumentParser's, a `ValidationError`)
    /// is one line ending with the help to read, status 64 (``UsageError``); ArgumentParser's
    /// exits (help, `ExitCode`) go through ArgumentParser untouched; any other error is one line,
    /// `ferry: MESSAGE`, with the status ``describe(_:)`` gives it.
    static func exit(reporting error: any Error, arguments: [String]) -> Never {
        if let line = UsageError.line(for: error, arguments: arguments) {
            printError(line)
            exit(withError: ExitCode.validationFailure)
        }
        if error is ExitCode || error is CleanExit || !isDomainError(error) { exit(withError: error) }
        let (status, message) = describe(error)
        printError(message)
        exit(withError: ExitCode(status.rawValue))
    }

    /// Whether `error` is one of ours rather than ArgumentParser's own (a help request, a
    /// parsing error wrapped for its message): ArgumentParser gives every error it does not know
    /// status 1 (`EXIT_FAILURE`), and its own ones 0 or 64.
    private static func isDomainError(_ error: any Error) -> Bool {
        exitCode(for: error) == .failure
    }
}

/// The exit status and the line to print for an error.
func describe(_ error: any Error) -> (ExitStatus, String) {
    let (status, message) = describeVerbatim(error)
    return (status, withReadableTypes(message))
}

/// `describe` before dynamic types in the message are made readable.
private func describeVerbatim(_ error: any Error) -> (ExitStatus, String) {
    switch error {
    case let error as any ReportableError:
        return (error.status, error.message)
    case let error as FerryModelError:
        return (ExitStatus.of(ferryCode: error.code.rawValue),
                BrokerKeyPath.reworded(error.keyPath.map { "\($0): \(error.message)" } ?? error.message))
    case let error as SniffError:
        return (.notFound, error.description)
    case let error as TypeDatabaseError:
        return (.notFound, error.description)
    default:
        // A D-Bus error that reached a command untyped (through a loader) reads as the library's
        // errors do: one table, one wording.
        if let ferry = ferryErrorDescription(FerryError(dbusError: error) ?? error) { return (ferry.0, BrokerKeyPath.reworded(ferry.1)) }
        return (.failure, String(describing: error))
    }
}
