import ArgumentParser
import DBus
import FerryModel
import FerryTerminal
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A domain error: printed as `ferry: MESSAGE` on stderr, exit status `status` (2 unless given).
/// Described by its message alone, so that wherever it is interpolated (a loader's failure sent
/// to a reader) no internal value shows.
struct CLIFailure: Error, CustomStringConvertible {
    var status: ExitStatus
    var message: String
    init(_ message: String) { self.init(.notFound, message) }
    init(_ status: ExitStatus, _ message: String) {
        self.status = status
        self.message = message
    }

    var description: String { message }
}

/// Runs a command body, turning its errors into one stderr line and the documented exit status.
func reportingFailures(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch {
        throw reported(error)
    }
}

/// Runs a command body, turning its errors into one stderr line and the documented exit status.
func reportingFailures(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch {
        throw reported(error)
    }
}

/// Prints `error` as one line and returns the `ExitCode` to throw; ArgumentParser's own exits
/// pass through untouched. This is the one place errors become exit statuses.
func reported(_ error: any Error) -> any Error {
    if error is ExitCode || error is CleanExit { return error }
    let (status, message) = describe(error)
    printError(message)
    return ExitCode(status.rawValue)
}

/// The exit status and the line to print for an error.
func describe(_ error: any Error) -> (ExitStatus, String) {
    let (status, message) = describeVerbatim(error)
    return (status, withReadableTypes(message))
}

/// `describe` before dynamic types in the message are made readable.
private func describeVerbatim(_ error: any Error) -> (ExitStatus, String) {
    switch error {
    case let failure as CLIFailure:
        return (failure.status, failure.message)
    case let error as DBusError:
        return (ExitStatus.of(errorName: error.name.rawValue), message(BrokerKeyPath.reworded(error.message), name: error.name.rawValue))
    case let error as FerryModelError:
        return (ExitStatus.of(ferryCode: error.code.rawValue),
                BrokerKeyPath.reworded(error.keyPath.map { "\($0): \(error.message)" } ?? error.message))
    case let error as SniffError:
        return (.notFound, error.description)
    case let error as TypeDatabaseError:
        return (.notFound, error.description)
    default:
        if let ferry = ferryErrorDescription(error) { return (ferry.0, BrokerKeyPath.reworded(ferry.1)) }
        return (.failure, String(describing: error))
    }
}

private func message(_ text: String, name: String) -> String {
    let short = name.split(separator: ".").last.map(String.init) ?? name
    if text.isEmpty { return short }
    return ExitStatus.of(errorName: name) == .noBroker ? "cannot reach the Ferry broker: \(text)" : text
}

/// Writes `ferry: MESSAGE` and a newline to standard error in one write; control characters in
/// the message (an app's or the broker's text) are escaped, so an error is always one line, and
/// bytes of an argument that were not UTF-8 show as U+FFFD (`RawArguments.lossy`).
func printError(_ message: String) {
    let line = Array("ferry: \(RawArguments.lossy(message).printableLine())\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

/// Writes `text` to standard output at once (unbuffered, so every line of `watch` is out before
/// the next change).
func writeOut(_ text: String) throws {
    try OutputFile.standardOutput.write(Array(text.utf8))
}

/// One line of JSON with sorted keys and unescaped slashes.
func printJSON(_ value: some Encodable) throws {
    try writeOut(jsonLine(value))
}

/// One line of JSON with sorted keys and unescaped slashes, newline included.
func jsonLine(_ value: some Encodable) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    let data = try encoder.encode(value)
    return String(decoding: data, as: UTF8.self) + "\n"
}
