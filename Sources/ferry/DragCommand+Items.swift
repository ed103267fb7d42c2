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

extension DragCommand {
    /// The item `--file PATH` drags, built as `ferry copy PATH` builds its item: the file's
    /// content under its type (by name and content), then a `public.file-url` with its absolute
    /// URL — so an edge drop can open it in an app whose document types accept that type.
    /// - Throws: `CLIFailure` (status 2) when the file is missing, unreadable or a folder.
    static func fileItem(_ path: String) throws -> CopyItem {
        let argument = PathArgument(path)
        let source = try CopySource.file(argument, sniff: true, verb: "drag")
        let url = Array(fileURL(absolutePath(argument.bytes)).utf8)
        return CopyItem(suggestedName: source.suggestedName, representations: [
            (source.sniffed ?? .data, source),
            (.fileURL, CopySource(bytes: .inline(url), sniffed: .fileURL, suggestedName: nil)),
        ])
    }

    /// `path` made absolute against the current directory (not resolving links or `..`), as
    /// bytes: a name that is not UTF-8 stays exact.
    static func absolutePath(_ path: [UInt8]) -> [UInt8] {
        let slash = UInt8(ascii: "/")
        if path.first == slash { return path }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return [slash] + path }
        let directory = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        let relative = path.starts(with: [UInt8(ascii: "."), slash]) ? Array(path.dropFirst(2)) : path
        return (directory.last == slash ? directory : directory + [slash]) + relative
    }

    /// `file://` and the absolute path, each byte outside RFC 3986's unreserved set and `/`
    /// percent-encoded (`/tmp/a b.txt` → `file:///tmp/a%20b.txt`).
    static func fileURL(_ absolutePath: [UInt8]) -> String {
        var text = "file://"
        for byte in absolutePath {
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

extension DragCommand {
    /// The first item's preview that `--preview-title` and `--preview-image` give, nil for none.
    /// - Throws: `CLIFailure`: status 2 for an image file that cannot be read, 64 for one that
    ///   is not a preview PNG or is too large.
    func readPreview() throws -> DragPreview? {
        guard previewTitle != nil || previewImage != nil else { return nil }
        var image: Data?
        if let previewImage {
            let argument = PathArgument(previewImage)
            let source = try CopySource.file(argument, sniff: false, verb: "show")
            guard source.size <= UInt64(DragPreview.imageLimit) else {
                throw CLIFailure(.usage, "--preview-image '\(argument.display)': a preview image has at most "
                                 + "\(DragPreview.imageLimit / 1024) KiB (this one \(source.size) bytes)")
            }
            do { image = try source.load() } catch let error as FerryModelError {
                throw CLIFailure(.notFound, "cannot read '\(argument.display)': \(error.message)")
            }
        }
        do {
            return try DragPreview(title: previewTitle, image: image)
        } catch {
            let option = error.keyPath == "title" ? "--preview-title" : "--preview-image"
            throw CLIFailure(.usage, "\(option)\(option == "--preview-image" ? " '\(previewImage ?? "")'" : ""): \(error.message)")
        }
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
