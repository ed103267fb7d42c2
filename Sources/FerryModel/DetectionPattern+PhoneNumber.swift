extension TextScanner {
    /// A byte that may continue a phone number: digits, space, `-`, `.`, `(`, `)`.
    private static func isPhoneByte(_ c: UInt8) -> Bool {
        isDigit(c) || c == 0x20 || c == 0x2D || c == 0x2E || c == 0x28 || c == 0x29
    }

    /// `s` contains a plausible phone number (see ``phoneNumberRanges(_:first:)``).
    static func containsPhoneNumber(_ s: UnsafeBufferPointer<UInt8>) -> Bool {
        !phoneNumberRanges(s, first: true).isEmpty
    }

    /// Where `s` holds plausible phone numbers (see `isPhoneNumber`), in order; only the first
    /// when `first`. A candidate starts at a digit, `+` or `(` that does not follow a letter or
    /// digit, and runs over phone bytes; when the whole run is not a phone number, each of its
    /// space-free pieces is tried (`2024-01-15 555-1234`).
    static func phoneNumberRanges(_ s: UnsafeBufferPointer<UInt8>, first: Bool = false) -> [Range<Int>] {
        var found: [Range<Int>] = []
        var i = 0
        while i < s.count {
            let c = s[i]
            guard isDigit(c) || c == 0x2B || c == 0x28, i == 0 || !(isAlphanumeric(s[i - 1]) || s[i - 1] == 0x5F) else {
                i += 1
                continue
            }
            var end = i + 1
            while end < s.count && isPhoneByte(s[end]) { end += 1 }
            var last = end  // trim to the last digit
            while last > i && !isDigit(s[last - 1]) { last -= 1 }
            let glued = last == end && end < s.count && (isAlphanumeric(s[end]) || s[end] == 0x5F)
            if !glued {
                if isPhoneNumber(s[i..<last]) {
                    found.append(i..<last)
                } else {
                    var piece = i
                    while piece < last {
                        var pieceEnd = piece
                        while pieceEnd < last && s[pieceEnd] != 0x20 { pieceEnd += 1 }
                        if pieceEnd - piece < last - i && isPhoneNumber(s[piece..<pieceEnd]) { found.append(piece..<pieceEnd) }
                        piece = pieceEnd + 1
                    }
                }
                if first && !found.isEmpty { return found }
            }
            i = end
        }
        return found
    }

    /// `s` is a phone number: an optional leading `+`, 7–15 digits in groups separated by at most
    /// three of space, `-`, `.`, with at most one parenthesised group of 2–4 digits; every group
    /// but the first (the first two after `+`) has two or more digits; with dots, no group is
    /// longer than four digits; and it is not shaped like a date (`2024-01-15`, `15.01.2024`).
    static func isPhoneNumber(_ s: Bytes) -> Bool {
        var i = s.startIndex
        let international = i < s.endIndex && s[i] == 0x2B
        if international { i += 1 }
        var groups: [Int] = []
        var current = 0, separatorRun = 0
        var parenOpen = false, parenUsed = false, hasDot = false
        var separatorKinds: Set<UInt8> = []
        func closeGroup() {
            if current > 0 { groups.append(current) }
            current = 0
        }
        while i < s.endIndex {
            let c = s[i]
            i += 1
            if isDigit(c) {
                current += 1
                separatorRun = 0
                continue
            }
            switch c {
            case 0x28:
                guard current == 0, !parenUsed else { return false }
                parenOpen = true
                parenUsed = true
            case 0x29:
                guard parenOpen, (2...4).contains(current) else { return false }
                parenOpen = false
                closeGroup()
            case 0x20, 0x2D, 0x2E:
                closeGroup()
                separatorRun += 1
                guard separatorRun <= 3 else { return false }
                if c != 0x20 { separatorKinds.insert(c) }
                if c == 0x2E { hasDot = true }
            default:
                return false
            }
        }
        closeGroup()
        guard !parenOpen else { return false }
        let digits = groups.reduce(0, +)
        // After a country code, one digit may stand alone (+33 1 23 45 67 89).
        let shortGroupsAllowed = international ? 2 : 1
        guard (7...15).contains(digits),
              groups.enumerated().allSatisfy({ $0.offset < shortGroupsAllowed || $0.element >= 2 }) else { return false }
        if hasDot && groups.contains(where: { $0 > 4 }) { return false }
        if groups.count == 3 && separatorKinds.count == 1 && (groups == [4, 2, 2] || groups == [2, 2, 4]) {
            return false
        }
        return true
    }
}
