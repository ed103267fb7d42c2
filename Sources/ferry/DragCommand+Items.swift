import FerryModel
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

extension DragCommand {
    /// The item `--file PATH` drags, built as `ferry copy PATH` builds its item: the file's
    /// content under its type (by name and content), then a `public.file-url` with its absolute
    /// URL — so an edge drop can open it in an app whose document types accept that type.
    /// - Throws: `CLIFailure` (status 2) when the file is missing, unreadable or a folder.
    static func fileItem(_ path: String) throws -> CopyItem {
        let source = try CopySource.file(path, sniff: true, verb: "drag")
        let url = Array(fileURL(absolutePath(path)).utf8)
        return CopyItem(suggestedName: source.suggestedName, representations: [
            (source.sniffed ?? .data, source),
            (.fileURL, CopySource(bytes: .inline(url), sniffed: .fileURL, suggestedName: nil)),
        ])
    }

    /// `path` made absolute against the current directory (not resolving links or `..`).
    static func absolutePath(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return "/" + path }
        let directory = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return (directory.hasSuffix("/") ? directory : directory + "/") + (path.hasPrefix("./") ? String(path.dropFirst(2)) : path)
    }

    /// `file://` and the absolute path, each byte outside RFC 3986's unreserved set and `/`
    /// percent-encoded (`/tmp/a b.txt` → `file:///tmp/a%20b.txt`).
    static func fileURL(_ absolutePath: String) -> String {
        var text = "file://"
        for byte in absolutePath.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                text.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let digits = Array("0123456789ABCDEF")
                text += "%" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 15)])
            }
        }
        return text
    }
}

extension CopyItem {
    /// Representations over this size are promised on a drag pasteboard (the client library's
    /// rule, `DragPromises.threshold`), which needs `ferry` registered as a command-line tool.
    static let dragPromiseThreshold: UInt64 = 1 << 20

    /// Whether dragging this item promises a representation (so `ferry` must register first).
    var needsPromises: Bool {
        representations.contains { $0.source.size > Self.dragPromiseThreshold }
    }
}
