#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A kind of content a pasteboard item's text may hold, found without handing the text to the
/// asker (Apple's `UIPasteboard.DetectionPattern`).
///
/// Detection looks at text only; it is not a paste. The raw values are the names used on the bus
/// (`org.ferry.Pasteboard1.DetectPatterns`).
public enum DetectionPattern: String, Sendable, Hashable, CaseIterable {
    /// The whole text is a web URL someone would open: `https://example.com/a?b`, `http://localhost:8080`,
    /// or a bare domain with a known-looking top-level domain (`example.com/path`, `www.example.org`).
    case probableWebURL
    /// The text is something someone would type into a search field: one short line that is not a URL.
    case probableWebSearch
    /// The whole text is a number: `42`, `-3.5`, `1e6`, `1,234.5`, `1.234,5`, `+7`.
    case number
    /// The text contains an email address (`someone@example.com`).
    case emailAddress
    /// The text contains a plausible phone number: 7–15 digits with an optional leading `+`,
    /// spaces, dashes, dots and one pair of parentheses (`+1 (555) 123-4567`, `030 1234567`).
    case phoneNumber
}

extension DetectionPattern {
    /// How much of a text detection looks at: the first 64 KiB of its UTF-8. Longer texts are
    /// judged on that prefix (and are then never a URL, a number or a web search, which must be
    /// the whole text).
    public static let scanLimit = 64 * 1024

    /// The longest text, in Unicode scalars, that still counts as a web search.
    public static let webSearchLimit = 256

    /// The patterns among `patterns` that `text` matches.
    ///
    /// Apple's semantics: `probableWebURL` — the trimmed text is a single http(s) URL or a bare
    /// domain; `probableWebSearch` — the trimmed text is one line of at most 256 characters with a
    /// letter or digit in it, and not a URL; `number` — the whole trimmed text is a number
    /// (locale-independent: `42`, `-3.5`, `1e6`, `1,234.5`, `1.234,5`); `emailAddress` /
    /// `phoneNumber` — the text contains one. Linear in the text's length, looking at its first
    /// `scanLimit` bytes only.
    ///
    /// - Parameters:
    ///   - patterns: the patterns to look for; others are not computed.
    ///   - text: the text to classify.
    /// - Returns: the subset of `patterns` that `text` matches.
    public static func detect(_ patterns: Set<DetectionPattern>, in text: String) -> Set<DetectionPattern> {
        guard !patterns.isEmpty else { return [] }
        let utf8 = text.utf8
        let truncated = utf8.count > scanLimit
        var bytes = Array(utf8.prefix(scanLimit))
        if truncated {
            // Do not end in the middle of a scalar: drop continuation bytes and their lead byte.
            while let last = bytes.last, last & 0xC0 == 0x80 { bytes.removeLast() }
            if let last = bytes.last, last >= 0xC0 { bytes.removeLast() }
        }
        return bytes.withUnsafeBufferPointer { buffer in
            detect(patterns, in: buffer, truncated: truncated)
        }
    }

    /// The patterns among `patterns` found in UTF-8 `bytes` (see `detect(_:in:)`).
    ///
    /// - Parameters:
    ///   - patterns: the patterns to look for.
    ///   - bytes: UTF-8 text; ill-formed sequences are treated as non-ASCII letters.
    ///   - truncated: true when `bytes` is only the start of the text, so whole-text patterns
    ///     (URL, web search, number) cannot match.
    static func detect(_ patterns: Set<DetectionPattern>, in bytes: UnsafeBufferPointer<UInt8>,
                       truncated: Bool) -> Set<DetectionPattern> {
        var found: Set<DetectionPattern> = []
        let trimmed = TextScanner.trimmed(bytes)
        let wholeText = !truncated && !trimmed.isEmpty
        var isURL = false
        if wholeText && (patterns.contains(.probableWebURL) || patterns.contains(.probableWebSearch)) {
            isURL = TextScanner.isProbableWebURL(bytes[trimmed])
            if isURL && patterns.contains(.probableWebURL) { found.insert(.probableWebURL) }
        }
        if wholeText && !isURL && patterns.contains(.probableWebSearch)
            && TextScanner.isProbableWebSearch(bytes[trimmed], limit: webSearchLimit) {
            found.insert(.probableWebSearch)
        }
        if wholeText && patterns.contains(.number) && TextScanner.isNumber(bytes[trimmed]) {
            found.insert(.number)
        }
        if patterns.contains(.emailAddress) && TextScanner.containsEmailAddress(bytes) {
            found.insert(.emailAddress)
        }
        if patterns.contains(.phoneNumber) && TextScanner.containsPhoneNumber(bytes) {
            found.insert(.phoneNumber)
        }
        return found
    }
}
