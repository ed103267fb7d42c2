import ArgumentParser
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

/// A domain error: printed as `ferry: MESSAGE` on stderr, exit status 2.
struct CLIFailure: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

/// Runs a command body, turning `CLIFailure` into one stderr line and exit status 2.
func reportingFailures(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let failure as CLIFailure {
        printError(failure.message)
        throw ExitCode(2)
    }
}

func printError(_ message: String) {
    let line = Array("ferry: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

/// One line of JSON with sorted keys and unescaped slashes.
func printJSON(_ value: some Encodable) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    let data = try encoder.encode(value)
    print(String(decoding: data, as: UTF8.self))
}
