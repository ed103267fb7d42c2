#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A `text/uri-list` (RFC 2483): one URI a line, lines ending in CRLF (a bare LF is accepted),
/// `#` lines are comments. File managers copy files this way.
public struct URIList: Hashable, Sendable {
    /// The URIs, in order, as written (absolute URIs only).
    public var uris: [String]

    /// The URIs of a list's bytes; lines that are not absolute URIs are skipped.
    /// Returns nil when the bytes are not UTF-8.
    public init?(data: Data) {
        guard let text = String(validating: data, as: UTF8.self) else { return nil }
        uris = text.split(whereSeparator: \.isNewline).compactMap { line in
            let uri = line.trimmingASCIIWhitespace()
            guard !uri.isEmpty, !uri.hasPrefix("#"), let url = URL(string: uri), url.scheme != nil else { return nil }
            return uri
        }
    }

    /// The type a single URI of the list is as a representation of its own: `public.file-url`
    /// for a `file:` URI, `public.url` for any other.
    public static func contentType(of uri: String) -> ContentType {
        URL(string: uri)?.isFileURL == true ? .fileURL : .url
    }
}

private extension Substring {
    func trimmingASCIIWhitespace() -> String {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        return String(drop(while: blank).reversed().drop(while: blank).reversed())
    }
}
