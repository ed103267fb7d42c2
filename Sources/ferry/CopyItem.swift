import FerryModel
import FerryTerminal
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One item `ferry copy` writes: representations in fidelity order, and a suggested name.
struct CopyItem: Sendable {
    var suggestedName: String?
    var representations: [(type: ContentType, source: CopySource)] = []

    /// Large representations beyond the bus's 16 descriptors per message (see `ferry copy`).
    static let descriptorLimit = 16

    /// How many representations travel as descriptors (files and large standard input).
    var descriptorCount: Int {
        representations.count { rep in
            if case .file = rep.source.bytes { return rep.source.size > 1 << 20 } else { return false }
        }
    }

    /// The item as an item provider: bytes in memory and files as they are, or, when `lazy`,
    /// every representation as a loader the broker calls back for (promised).
    /// - Throws: `CLIFailure` (status 64) when a type is given twice.
    func provider(lazy: Bool) throws -> ItemProvider {
        var provider = ItemProvider()
        provider.suggestedName = suggestedName
        for (type, source) in representations {
            let added: Bool
            if lazy {
                added = provider.registerDataRepresentation(for: type, estimatedSize: Int64(source.size)) { _ in try source.load() }
            } else {
                switch source.bytes {
                case .inline(let bytes):
                    added = provider.registerDataRepresentation(for: type, data: Data(bytes))
                case .file(let path, let size):
                    added = provider.register(ItemProvider.Representation(
                        contentType: type, source: .file(URL(fileURLWithPath: path), openInPlace: false),
                        estimatedSize: Int64(size)))
                }
            }
            guard added else { throw CLIFailure(.usage, "the type \(typeName(type)) is given twice for one item") }
        }
        return provider
    }

    /// `public.png (12.3 KiB), public.jpeg (8.0 KiB)`.
    var summary: String {
        representations.map { "\(typeName($0.type)) (\(ProgressBar.size($0.source.size)))" }.joined(separator: ", ")
    }
}

extension CopyItem {
    /// The items `ferry copy FILE…` (or `--text`, or standard input) writes, one per file:
    /// each typed by `type`, else by its name and content (standard input by content, text as
    /// `public.utf8-plain-text`), named after the file without its extension. No files and no
    /// text means standard input; `-` names it among files.
    /// - Parameters:
    ///   - written: the `--type` given, nil for none; `-t image` sniffs and checks each file.
    ///   - verb: what could not be done with a folder ("share" → "cannot share 'x': it is a folder").
    /// - Throws: `CLIFailure`: status 2 for a file that cannot be read, 64 for content that is not
    ///   of the kind `written` asks for.
    static func items(files: [String], text: String?, type written: WrittenType?, verb: String = "copy") throws -> [CopyItem] {
        let type = written?.exact
        if let text {
            try written?.check(.utf8PlainText, of: "--text")
            return [CopyItem(representations: [(type ?? .utf8PlainText, CopySource.text(text))])]
        }
        return try (files.isEmpty ? ["-"] : files).map { path in
            let source = path == "-" ? try CopySource.standardInput(sniff: type == nil)
                                     : try CopySource.file(PathArgument(path), sniff: type == nil, verb: verb)
            try written?.check(source.sniffed, of: path == "-" ? "standard input" : "'\(PathArgument(path).display)'")
            return CopyItem(suggestedName: source.suggestedName, representations: [(type ?? source.sniffed ?? .data, source)])
        }
    }
}
