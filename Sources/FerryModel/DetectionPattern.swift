#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A kind of content a pasteboard item's text may hold, found without handing the text to the
/// asker (Apple's `UIPasteboard.DetectionPattern`, iOS 14's three and iOS 15's eight).
///
/// Detecting patterns looks at text only and is not a paste; detecting values
/// (``detectValues(_:in:)``) hands the values over and is one. The raw values are the names used
/// on the bus (`org.ferry.Pasteboard1.DetectPatterns`, `DetectValues`).
///
/// Foundation's `NSDataDetector`, which Apple's data detection is built on, is not part of
/// swift-corelibs-foundation on Linux; these are small recognisers of Ferry's own, whose limits
/// each case states. They favour missing a value over reporting a wrong one.
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
    /// The text contains a link: a word that is an http(s) URL or a bare domain, an `ftp://`
    /// URL, or `mailto:` an address (`see https://example.com/a.`).
    case link
    /// The text contains a street address with a house number (`1 Infinite Loop, Cupertino,
    /// CA 95014`, `Hauptstraße 5` and a next line `10115 Berlin`, `12 rue de la Paix`).
    case postalAddress
    /// The text contains a date, with a time when one follows (`2026-11-26 at 15:30`,
    /// `Nov 26, 2026 3:30 PM`, `26.11.2026`), or a day name with a time (`tomorrow at 3pm`).
    case calendarEvent
    /// The text contains a UPS (`1Z…`) or UPU S10 (`RR123456785DE`) tracking number whose check
    /// digit is right.
    case shipmentTrackingNumber
    /// The text contains a flight number (`LH 400`) on a line that names a flight before it.
    case flightNumber
    /// The text contains an amount of money: a number with a currency symbol or ISO code
    /// (`$12.50`, `12,50 €`, `EUR 1.234,56`).
    case moneyAmount
}

/// An amount of money the `moneyAmount` pattern found (Apple's `DDMatchMoneyAmount`).
public struct MoneyAmount: Sendable, Hashable {
    /// The amount, `12.5` for `$12.50`.
    public var amount: Double
    /// The ISO 4217 code of its currency (`USD` for `$`).
    public var currency: String

    /// An amount of `currency`.
    public init(amount: Double, currency: String) {
        self.amount = amount
        self.currency = currency
    }
}

/// What ``DetectionPattern/detectValues(_:in:)`` found for one pattern (Apple's
/// `UIPasteboard.DetectedValues`).
public enum DetectedValue: Sendable, Hashable {
    /// The whole text, trimmed (`probableWebURL`, `probableWebSearch`).
    case text(String)
    /// The number the whole text is (`number`).
    case number(Double)
    /// Every match, as written, in order (`link`, `phoneNumber`, `emailAddress`,
    /// `postalAddress`, `calendarEvent`, `shipmentTrackingNumber`, `flightNumber`).
    case matches([String])
    /// Every amount, in order (`moneyAmount`).
    case moneyAmounts([MoneyAmount])
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
    /// `phoneNumber` and iOS 15's patterns (`link`, `postalAddress`, `calendarEvent`,
    /// `shipmentTrackingNumber`, `flightNumber`, `moneyAmount`) — the text contains one (see each
    /// case for what is recognised). Looks at the text's first `scanLimit` bytes only.
    ///
    /// - Parameters:
    ///   - patterns: the patterns to look for; others are not computed.
    ///   - text: the text to classify.
    /// - Returns: the subset of `patterns` that `text` matches.
    public static func detect(_ patterns: Set<DetectionPattern>, in text: String) -> Set<DetectionPattern> {
        guard !patterns.isEmpty else { return [] }
        let (bytes, truncated) = scanned(text)
        var found = bytes.withUnsafeBufferPointer { buffer in
            detect(patterns, in: buffer, truncated: truncated)
        }
        let words = patterns.subtracting([.probableWebURL, .probableWebSearch, .number, .emailAddress, .phoneNumber])
        if !words.isEmpty {
            let prefix = String(decoding: bytes, as: UTF8.self)
            for pattern in words where !matches(pattern, in: prefix).isEmpty { found.insert(pattern) }
        }
        return found
    }

    /// The values `text` holds for each of `patterns` it matches (Apple's
    /// `detectValues(for:)`): the trimmed text for `probableWebURL` and `probableWebSearch`,
    /// the number for `number`, every match for the others. The same recognisers as
    /// ``detect(_:in:)``, on the same first ``scanLimit`` bytes.
    /// - Parameters:
    ///   - patterns: the patterns to look for.
    ///   - text: the text to look in.
    /// - Returns: a value for each pattern of `patterns` that `text` matches.
    public static func detectValues(_ patterns: Set<DetectionPattern>, in text: String) -> [DetectionPattern: DetectedValue] {
        let found = detect(patterns, in: text)
        guard !found.isEmpty else { return [:] }
        let (bytes, _) = scanned(text)
        let prefix = String(decoding: bytes, as: UTF8.self)
        let trimmed = bytes.withUnsafeBufferPointer { String(decoding: $0[TextScanner.trimmed($0)], as: UTF8.self) }
        var values: [DetectionPattern: DetectedValue] = [:]
        for pattern in found {
            switch pattern {
            case .probableWebURL, .probableWebSearch:
                values[pattern] = .text(trimmed)
            case .number:
                if let number = TextScanner.amount(Substring(trimmed.replacing("\u{2212}", with: "-")))
                    ?? Double(trimmed.replacing("\u{2212}", with: "-")) {
                    values[pattern] = .number(number)
                }
            case .moneyAmount:
                values[pattern] = .moneyAmounts(TextScanner.moneyAmounts(in: prefix))
            default:
                values[pattern] = .matches(matches(pattern, in: prefix))
            }
        }
        return values
    }

    /// Every match of a pattern found anywhere in the text (not `probableWebURL`,
    /// `probableWebSearch` or `number`, which are the whole text).
    static func matches(_ pattern: DetectionPattern, in text: String) -> [String] {
        switch pattern {
        case .probableWebURL, .probableWebSearch, .number: []
        case .emailAddress: TextScanner.emailAddresses(in: text)
        case .phoneNumber:
            Array(text.utf8).withUnsafeBufferPointer { buffer in
                TextScanner.phoneNumberRanges(buffer).map { String(decoding: buffer[$0], as: UTF8.self) }
            }
        case .link: TextScanner.links(in: text)
        case .postalAddress: TextScanner.postalAddresses(in: text)
        case .calendarEvent: TextScanner.calendarEvents(in: text)
        case .shipmentTrackingNumber: TextScanner.shipmentTrackingNumbers(in: text)
        case .flightNumber: TextScanner.flightNumbers(in: text)
        case .moneyAmount: TextScanner.moneyAmounts(in: text).map { "\($0.amount) \($0.currency)" }
        }
    }

    /// The first ``scanLimit`` bytes of `text`'s UTF-8, not ending inside a scalar, and
    /// whether that is less than the whole.
    private static func scanned(_ text: String) -> (bytes: [UInt8], truncated: Bool) {
        let utf8 = text.utf8
        let truncated = utf8.count > scanLimit
        var bytes = Array(utf8.prefix(scanLimit))
        if truncated {
            // Do not end in the middle of a scalar: drop continuation bytes and their lead byte.
            while let last = bytes.last, last & 0xC0 == 0x80 { bytes.removeLast() }
            if let last = bytes.last, last >= 0xC0 { bytes.removeLast() }
        }
        return (bytes, truncated)
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
