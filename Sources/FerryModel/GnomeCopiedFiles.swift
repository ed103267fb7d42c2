#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An `x-special/gnome-copied-files` selection: how GNOME's file managers (Nautilus, Nemo, Caja)
/// and GTK apps copy or cut files. The first line is the operation, `copy` or `cut`; each
/// following line is one file's URI. GNOME writes lines ending in LF with no newline after the
/// last URI; reading also accepts a trailing newline and CRLF line ends.
public struct GnomeCopiedFiles: Hashable, Sendable {
    /// The MIME type of the selection target.
    public static let mimeType = "x-special/gnome-copied-files"

    /// What the file manager that pasted should do with the files.
    public enum Operation: String, Hashable, Sendable {
        /// Copy the files; the originals stay.
        case copy
        /// Move the files: the originals go once they are pasted.
        case cut
    }

    /// Copy or cut.
    public var operation: Operation
    /// The files' URIs, in order, as written (absolute URIs, normally `file:`).
    public var uris: [String]

    /// Makes a selection from URIs as they are.
    public init(operation: Operation = .copy, uris: [String]) {
        self.operation = operation
        self.uris = uris
    }

    /// Makes a selection of files.
    /// - Throws: `FerryModelError` `.invalidArgument` when a URL is not a `file:` URL.
    public init(operation: Operation = .copy, fileURLs: [URL]) throws(FerryModelError) {
        var uris: [String] = []
        for (index, url) in fileURLs.enumerated() {
            guard url.isFileURL else {
                throw FerryModelError(.invalidArgument, "\(url.absoluteString) is not a file URL", keyPath: "fileURLs[\(index)]")
            }
            uris.append(url.absoluteString)
        }
        self.init(operation: operation, uris: uris)
    }

    /// Reads a selection's bytes.
    /// - Throws: `FerryModelError` `.invalidArgument` naming what is wrong: bytes that are not
    ///   UTF-8, a first line that is neither `copy` nor `cut`, a line that is not an absolute URI.
    public init(data: Data) throws(FerryModelError) {
        guard let text = String(validating: data, as: UTF8.self) else {
            throw FerryModelError(.invalidArgument, "\(Self.mimeType) is not UTF-8")
        }
        // "\r\n" is one Character in Swift, not "\r" followed by "\n": both ends are separators.
        var lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).map { line in
            line.hasSuffix("\r") ? line.dropLast() : line
        }
        if lines.count > 1, lines.last?.isEmpty == true { lines.removeLast() }
        guard let first = lines.first, let operation = Operation(rawValue: String(first)) else {
            let shown = lines.first.map { String($0.prefix(40)).debugDescription } ?? "nothing"
            throw FerryModelError(.invalidArgument, "\(Self.mimeType) starts with \(shown), not copy or cut", keyPath: "line 1")
        }
        var uris: [String] = []
        for (index, line) in lines.enumerated().dropFirst() {
            guard !line.isEmpty, let url = URL(string: String(line)), url.scheme != nil else {
                throw FerryModelError(.invalidArgument, "\(String(line.prefix(80)).debugDescription) is not an absolute URI",
                                      keyPath: "line \(index + 1)")
            }
            uris.append(String(line))
        }
        self.init(operation: operation, uris: uris)
    }

    /// The bytes in GNOME's form: the operation, then one URI a line, LF between lines and none
    /// after the last.
    public var data: Data {
        Data(([operation.rawValue] + uris).joined(separator: "\n").utf8)
    }

    /// The `file:` URIs as URLs (other schemes are left out).
    public var fileURLs: [URL] {
        uris.compactMap { uri in URL(string: uri).flatMap { $0.isFileURL ? $0 : nil } }
    }
}
