import ArgumentParser
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

/// Writes `ferry: MESSAGE` and a newline to standard error in one write; control characters in
/// the message (an app's or the broker's text) are escaped, so an error is always one line, and
/// bytes of an argument that were not UTF-8 show as U+FFFD (`RawArguments.lossy`).
func printError(_ message: String) {
    StandardError.report(RawArguments.lossy(message))
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
