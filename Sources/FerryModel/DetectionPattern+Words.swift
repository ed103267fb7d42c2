#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The word-level recognisers of iOS 15's patterns: links, email addresses, shipment tracking
/// numbers, flight numbers. They look at the text's whitespace-separated words, each with its
/// surrounding punctuation removed.
extension TextScanner {
    /// A word of a line: its text without surrounding brackets, quotes and sentence punctuation.
    static func words(_ line: Substring) -> [Substring] {
        line.split(whereSeparator: { $0.isWhitespace }).map(stripped).filter { !$0.isEmpty }
    }

    /// `word` without leading `( < [ " '` and trailing `) > ] " ' . , ; : ! ?`.
    static func stripped(_ word: Substring) -> Substring {
        var word = word
        while let first = word.first, "(<[\"'“‘".contains(first) { word = word.dropFirst() }
        while let last = word.last, ")>]\"'”’.,;:!?".contains(last) { word = word.dropLast() }
        return word
    }

    /// Runs `body` over a word's UTF-8 bytes.
    static func withBytes<T>(_ word: Substring, _ body: (UnsafeBufferPointer<UInt8>) -> T) -> T {
        Array(word.utf8).withUnsafeBufferPointer(body)
    }

    // MARK: Link

    /// The links in `text`, as written: words that are an `http`/`https` URL or a bare domain
    /// (as `probableWebURL` judges a whole text), an `ftp://` URL with a host, or `mailto:` an
    /// email address. A plain email address is not a link (it is an `emailAddress`).
    static func links(in text: String) -> [String] {
        var found: [String] = []
        for line in text.split(whereSeparator: \.isNewline) {
            // A link has a dot or a colon: most words are passed over without lowercasing them.
            for word in words(line) where word.utf8.contains(where: { $0 == 0x2E || $0 == 0x3A }) {
                let lower = word.lowercased()
                if lower.hasPrefix("mailto:") {
                    if emailAddress(in: word.dropFirst(7)) != nil { found.append(String(word)) }
                } else if lower.hasPrefix("ftp://") {
                    if URL(string: String(word))?.host?.isEmpty == false { found.append(String(word)) }
                } else if !word.contains("@"), withBytes(word, { isProbableWebURL($0[...]) }) {
                    found.append(String(word))
                }
            }
        }
        return found
    }

    // MARK: Email address

    /// The email addresses in `text`: each word (a `mailto:` prefix removed) that is one.
    static func emailAddresses(in text: String) -> [String] {
        var found: [String] = []
        for line in text.split(whereSeparator: \.isNewline) {
            for word in words(line) where word.utf8.contains(0x40) {
                let address = word.lowercased().hasPrefix("mailto:") ? word.dropFirst(7) : word
                if let address = emailAddress(in: address) { found.append(address) }
            }
        }
        return found
    }

    /// `word` when the whole of it is an email address (`containsEmailAddress` on a word with
    /// exactly one `@`, neither first nor last).
    private static func emailAddress(in word: Substring) -> String? {
        guard word.count(where: { $0 == "@" }) == 1, word.first != "@", word.last != "@",
              withBytes(word, containsEmailAddress) else { return nil }
        return String(word)
    }

    // MARK: Shipment tracking number

    /// The shipment tracking numbers in `text`, as written: a UPS number (`1Z`, then 15 letters
    /// or digits, the last a valid check digit) or a UPU S10 number of international post (two
    /// letters, eight digits, a valid check digit, a two-letter country: `RR123456785DE`). Other
    /// carriers' numbers, which are bare digits without a published check, are not recognised.
    static func shipmentTrackingNumbers(in text: String) -> [String] {
        var found: [String] = []
        for line in text.split(whereSeparator: \.isNewline) {
            for word in words(line) where isUPSTrackingNumber(word) || isS10TrackingNumber(word) {
                found.append(String(word))
            }
        }
        return found
    }

    /// `1Z` and 16 uppercase letters or digits whose last is the UPS check digit: the others
    /// (letters as `(ASCII − 63) mod 10`) summed, those in even places doubled.
    static func isUPSTrackingNumber(_ word: Substring) -> Bool {
        let bytes = Array(word.utf8)
        guard bytes.count == 18, bytes[0] == 0x31, bytes[1] == 0x5A,
              bytes.allSatisfy({ isDigit($0) || ($0 >= 0x41 && $0 <= 0x5A) }), isDigit(bytes[17]) else { return false }
        var sum = 0
        for (place, byte) in bytes[2..<17].enumerated() {
            let value = isDigit(byte) ? Int(byte - 0x30) : (Int(byte) - 63) % 10
            sum += place % 2 == 1 ? 2 * value : value
        }
        return (10 - sum % 10) % 10 == Int(bytes[17] - 0x30)
    }

    /// Two uppercase letters, eight digits, the S10 check digit (weights 8 6 4 2 3 5 9 7, then
    /// 11 − sum mod 11, with 10 → 0 and 11 → 5) and two uppercase letters.
    static func isS10TrackingNumber(_ word: Substring) -> Bool {
        let bytes = Array(word.utf8)
        func isUpper(_ c: UInt8) -> Bool { c >= 0x41 && c <= 0x5A }
        guard bytes.count == 13, isUpper(bytes[0]), isUpper(bytes[1]), isUpper(bytes[11]), isUpper(bytes[12]),
              bytes[2..<11].allSatisfy(isDigit) else { return false }
        let weights = [8, 6, 4, 2, 3, 5, 9, 7]
        let sum = zip(bytes[2..<10], weights).reduce(0) { $0 + Int($1.0 - 0x30) * $1.1 }
        let check = switch 11 - sum % 11 {
        case 10: 0
        case 11: 5
        case let digit: digit
        }
        return check == Int(bytes[10] - 0x30)
    }

    // MARK: Flight number

    /// Words that say a flight number follows (English, German, French, Spanish, Italian).
    private static let flightWords: Set<String> = ["flight", "flights", "flug", "vol", "vuelo", "volo"]

    /// The flight numbers in `text`, as written (`LH 400`, `BA2490`): an IATA airline designator
    /// (two uppercase letters or digits, at least one a letter) and 1–4 digits, on a line that
    /// names a flight (`flight`, `Flug`, `vol`, `vuelo`, `volo`) before it. Without that word a
    /// designator and a number are too often something else (`A4 paper`, `GT 500`); airlines'
    /// three-letter ICAO codes are not recognised.
    static func flightNumbers(in text: String) -> [String] {
        var found: [String] = []
        for line in text.split(whereSeparator: \.isNewline) {
            let lineWords = words(line)
            var named = false
            var index = 0
            while index < lineWords.count {
                let word = lineWords[index]
                if flightWords.contains(word.lowercased()) {
                    named = true
                } else if named {
                    if isAirline(word.prefix(2)), word.count > 2, isFlightDigits(word.dropFirst(2)) {
                        found.append(String(word))
                    } else if word.count == 2, isAirline(word), index + 1 < lineWords.count,
                              isFlightDigits(lineWords[index + 1]) {
                        found.append("\(word) \(lineWords[index + 1])")
                        index += 1
                    }
                }
                index += 1
            }
        }
        return found
    }

    private static func isAirline(_ code: Substring) -> Bool {
        let bytes = Array(code.utf8)
        return bytes.count == 2 && bytes.allSatisfy { isDigit($0) || ($0 >= 0x41 && $0 <= 0x5A) } && !bytes.allSatisfy(isDigit)
    }

    private static func isFlightDigits(_ number: Substring) -> Bool {
        (1...4).contains(number.count) && number.utf8.allSatisfy(isDigit)
    }
}
