/// The hand-written scanners behind `DetectionPattern.detect(_:in:)`. Each works on UTF-8 bytes,
/// in one pass (or a bounded number of passes) over its input, and allocates little.
enum TextScanner {
    typealias Bytes = Slice<UnsafeBufferPointer<UInt8>>

    // MARK: Characters

    static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }
    static func isLetter(_ c: UInt8) -> Bool { (c | 0x20) >= 0x61 && (c | 0x20) <= 0x7A }
    static func isAlphanumeric(_ c: UInt8) -> Bool { isDigit(c) || isLetter(c) }
    static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || (c >= 0x09 && c <= 0x0D) }
    static func lower(_ c: UInt8) -> UInt8 { isLetter(c) ? c | 0x20 : c }

    /// The range of `bytes` without leading and trailing white space (ASCII white space and
    /// U+00A0 NO-BREAK SPACE).
    static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>) -> Range<Int> {
        var start = 0, end = bytes.count
        while start < end {
            if isSpace(bytes[start]) { start += 1 }
            else if start + 1 < end, bytes[start] == 0xC2, bytes[start + 1] == 0xA0 { start += 2 }
            else { break }
        }
        while end > start {
            if isSpace(bytes[end - 1]) { end -= 1 }
            else if end - 2 >= start, bytes[end - 2] == 0xC2, bytes[end - 1] == 0xA0 { end -= 2 }
            else { break }
        }
        return start..<end
    }

    // MARK: Web search

    /// One line, at most `limit` Unicode scalars, with at least one letter or digit (any
    /// non-ASCII scalar counts as a letter).
    static func isProbableWebSearch(_ s: Bytes, limit: Int) -> Bool {
        var scalars = 0, hasWordCharacter = false
        for c in s {
            if c == 0x0A || c == 0x0D { return false }
            if c & 0xC0 != 0x80 { scalars += 1 }
            if scalars > limit { return false }
            if isAlphanumeric(c) || c >= 0x80 { hasWordCharacter = true }
        }
        return hasWordCharacter
    }

    // MARK: Number

    /// A separator inside a number: `,` `.` `'` space, U+00A0, U+202F, U+2009.
    private static func numberSeparator(_ s: Bytes, at i: Int) -> (kind: UInt8, length: Int)? {
        let c = s[i]
        switch c {
        case 0x2C, 0x2E, 0x27, 0x20: return (c, 1)
        case 0xC2 where i + 1 < s.endIndex && s[i + 1] == 0xA0: return (0x20, 2)
        case 0xE2 where i + 2 < s.endIndex && s[i + 1] == 0x80 && (s[i + 2] == 0xAF || s[i + 2] == 0x89):
            return (0x20, 3)
        default: return nil
        }
    }

    /// The whole of `s` is a number: an optional sign (`+`, `-`, U+2212), digits with optional
    /// thousands grouping (`,` `.` `'` or a space, then groups of exactly three digits), an optional
    /// decimal part after `.` or `,`, an optional exponent (`e-3`).
    static func isNumber(_ s: Bytes) -> Bool {
        var i = s.startIndex
        let end = s.endIndex
        if i < end && (s[i] == 0x2B || s[i] == 0x2D) { i += 1 }
        else if i + 2 < end && s[i] == 0xE2 && s[i + 1] == 0x88 && s[i + 2] == 0x92 { i += 3 }

        var groups: [Int] = [0]
        var separators: [UInt8] = []
        while i < end {
            if isDigit(s[i]) {
                groups[groups.count - 1] += 1
                i += 1
            } else if let (kind, length) = numberSeparator(s, at: i) {
                separators.append(kind)
                groups.append(0)
                i += length
            } else {
                break
            }
        }
        if i < end && (s[i] == 0x65 || s[i] == 0x45) {  // exponent
            i += 1
            if i < end && (s[i] == 0x2B || s[i] == 0x2D) { i += 1 }
            let digitsStart = i
            while i < end && isDigit(s[i]) { i += 1 }
            guard i > digitsStart else { return false }
        }
        guard i == end else { return false }
        return isValidMantissa(groups: groups, separators: separators)
    }

    private static func isValidMantissa(groups: [Int], separators: [UInt8]) -> Bool {
        let decimalMarks: Set<UInt8> = [0x2C, 0x2E]
        guard let last = separators.last else { return groups[0] > 0 }
        guard groups.dropFirst().allSatisfy({ $0 > 0 }) else { return false }
        if groups[0] == 0 {  // ".5"
            return separators.count == 1 && decimalMarks.contains(last)
        }
        func isGrouped(_ count: Int) -> Bool {  // groups[0..<count] are "1–3 digits, then 3s"
            groups[0] <= 3 && groups[1..<count].allSatisfy { $0 == 3 }
        }
        if separators.count == 1 {
            return decimalMarks.contains(last) || isGrouped(2)
        }
        let grouping = separators[0]
        if separators.allSatisfy({ $0 == grouping }) { return isGrouped(groups.count) }
        // Grouping then one decimal mark of another kind: 1,234.5 or 1.234,5 or 1 234,5.
        return decimalMarks.contains(last) && last != grouping
            && separators.dropLast().allSatisfy { $0 == grouping } && isGrouped(groups.count - 1)
    }

    // MARK: Email address

    /// A byte allowed in an email address's local part (RFC 5322 atext, and `.`).
    private static func isLocalPartByte(_ c: UInt8) -> Bool {
        if isAlphanumeric(c) { return true }
        switch c {
        case 0x21, 0x23, 0x24, 0x25, 0x26, 0x27, 0x2A, 0x2B, 0x2D, 0x2E, 0x2F, 0x3D, 0x3F,
             0x5E, 0x5F, 0x60, 0x7B, 0x7C, 0x7D, 0x7E: return true
        default: return false
        }
    }

    /// `s` contains `local@domain.tld`: a local part without leading, trailing or doubled dots,
    /// and a domain of at least two labels with a top-level domain of two or more letters.
    static func containsEmailAddress(_ s: UnsafeBufferPointer<UInt8>) -> Bool {
        var at = 0
        while at < s.count {
            defer { at += 1 }
            guard s[at] == 0x40 else { continue }
            // Local part: the run before "@" (it stops at the previous "@", so each byte is
            // looked at a bounded number of times).
            var start = at
            while start > 0 && isLocalPartByte(s[start - 1]) { start -= 1 }
            while start < at && s[start] == 0x2E { start += 1 }
            guard start < at, s[at - 1] != 0x2E, !hasDoubleDot(s, start..<at) else { continue }
            var end = at + 1
            while end < s.count && (isAlphanumeric(s[end]) || s[end] == 0x2D || s[end] == 0x2E || s[end] >= 0x80) {
                end += 1
            }
            while end > at + 1 && (s[end - 1] == 0x2E || s[end - 1] == 0x2D) { end -= 1 }  // "… a@b.com."
            if isDomain(s[(at + 1)..<end], minimumLabels: 2) { return true }
        }
        return false
    }

    private static func hasDoubleDot(_ s: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        range.dropFirst().contains { s[$0] == 0x2E && s[$0 - 1] == 0x2E }
    }

    /// Labels of letters, digits, `-` (not at either end) and non-ASCII, 1–63 bytes, separated by
    /// single dots; at least `minimumLabels`; when more than one, the last has two or more
    /// letters (or is `xn--…`, or non-ASCII) and no digit.
    static func isDomain(_ s: Bytes, minimumLabels: Int) -> Bool {
        guard !s.isEmpty else { return false }
        var labels = 0, labelStart = s.startIndex
        var i = s.startIndex
        while i <= s.endIndex {
            if i == s.endIndex || s[i] == 0x2E {
                guard isLabel(s[labelStart..<i]) else { return false }
                labels += 1
                labelStart = i + 1
            }
            i += 1
        }
        guard labels >= minimumLabels else { return false }
        return labels == 1 || isTopLevelDomainShaped(s[topLevelDomainStart(s)..<s.endIndex])
    }

    private static func isLabel(_ label: Bytes) -> Bool {
        guard !label.isEmpty, label.count <= 63,
              label.first != 0x2D, label.last != 0x2D else { return false }
        return label.allSatisfy { isAlphanumeric($0) || $0 == 0x2D || $0 >= 0x80 }
    }

    static func topLevelDomainStart(_ s: Bytes) -> Int {
        var i = s.endIndex
        while i > s.startIndex && s[i - 1] != 0x2E { i -= 1 }
        return i
    }

    private static func isTopLevelDomainShaped(_ tld: Bytes) -> Bool {
        if tld.count > 4 && lower(tld[tld.startIndex]) == 0x78 && lower(tld[tld.startIndex + 1]) == 0x6E
            && tld[tld.startIndex + 2] == 0x2D && tld[tld.startIndex + 3] == 0x2D { return true }  // xn--
        if tld.allSatisfy({ $0 >= 0x80 }) { return true }
        return tld.count >= 2 && tld.allSatisfy(isLetter)
    }
}
