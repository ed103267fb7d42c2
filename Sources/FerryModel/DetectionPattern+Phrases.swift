/// The phrase-level recognisers of iOS 15's patterns: calendar events, postal addresses and
/// money amounts. They look at runs of words on one line (a postal address may take its
/// locality from the next line).
extension TextScanner {
    // MARK: Calendar event

    /// English month names and their three-letter (and `Sept`) abbreviations, by month.
    private static let months: [String: Int] = {
        let names = ["january", "february", "march", "april", "may", "june", "july", "august", "september",
                     "october", "november", "december"]
        var months: [String: Int] = ["sept": 9]
        for (index, name) in names.enumerated() {
            months[name] = index + 1
            months[String(name.prefix(3))] = index + 1
        }
        return months
    }()

    /// Days that a time can follow (`tomorrow at 3pm`, `Friday at 10:00`).
    private static let days: Set<String> = ["today", "tonight", "tomorrow", "monday", "tuesday", "wednesday", "thursday",
                                            "friday", "saturday", "sunday"]

    /// The calendar events in `text`, as written: a date, with a time after it when there is one
    /// (`at 15:30`, `3:30 PM`, `at 3pm`), or a day name with a time (`tomorrow at 3pm`). Dates:
    /// `2026-11-26` (and `2026-11-26T15:30`), `26.11.2026`, `11/26/2026` (month first),
    /// `November 26`, `Nov 26, 2026`, `26 November 2026`, `26. November 2026`; the day must exist
    /// in that month. Month names are English only; relative phrases (`next week`) and time
    /// ranges are not recognised.
    static func calendarEvents(in text: String) -> [String] {
        var found: [String] = []
        for line in text.split(whereSeparator: \.isNewline) {
            let lineWords = line.split(whereSeparator: { $0.isWhitespace })
            let plain = lineWords.map { stripped($0) }
            var index = 0
            while index < lineWords.count {
                if let length = dateLength(plain, at: index) {
                    var end = index + length
                    end += timeLength(plain, at: end) ?? 0
                    found.append(phrase(lineWords, index..<end))
                    index = end
                } else if plain[index].count <= 9, days.contains(plain[index].lowercased()),
                          let time = timeLength(plain, at: index + 1) {
                    found.append(phrase(lineWords, index..<(index + 1 + time)))
                    index += 1 + time
                } else {
                    index += 1
                }
            }
        }
        return found
    }

    /// The words of `range` as written, joined by single spaces, without the leading and
    /// trailing punctuation of the whole.
    private static func phrase(_ words: [Substring], _ range: Range<Int>) -> String {
        String(stripped(Substring(words[range].joined(separator: " "))))
    }

    /// How many words from `index` make a date, nil when none does.
    private static func dateLength(_ words: [Substring], at index: Int) -> Int? {
        let word = words[index]
        guard let first = word.utf8.first else { return nil }
        if isDigit(first), let numeric = numericDate(word),
           isValidDate(year: numeric.year, month: numeric.month, day: numeric.day) {
            return 1
        }
        // November 26[, 2026]
        if isLetter(first), word.count <= 10, let month = months[word.lowercased().replacing(".", with: "")], index + 1 < words.count,
           let day = dayNumber(words[index + 1]), isValidDate(year: 2000, month: month, day: day) {
            return index + 2 < words.count && year(words[index + 2]) != nil ? 3 : 2
        }
        // 26 November[ 2026], 26. November 2026
        if isDigit(first), let day = dayNumber(word), index + 1 < words.count,
           let month = months[words[index + 1].lowercased().replacing(".", with: "")],
           isValidDate(year: 2000, month: month, day: day) {
            return index + 2 < words.count && year(words[index + 2]) != nil ? 3 : 2
        }
        return nil
    }

    /// `2026-11-26` (optionally `T15:30…`), `26.11.2026`, `11/26/2026`.
    private static func numericDate(_ word: Substring) -> (year: Int, month: Int, day: Int)? {
        let date = word.split(separator: "T", maxSplits: 1).first ?? word
        for (separator, order) in [("-", [0, 1, 2]), (".", [2, 1, 0]), ("/", [2, 0, 1])] {
            let parts = date.split(separator: Character(separator), omittingEmptySubsequences: false)
            guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy(isDigit) }) else { continue }
            let yearPart = parts[order[0]]
            guard yearPart.count == 4, parts[order[1]].count <= 2, parts[order[2]].count <= 2,
                  let year = Int(yearPart), let month = Int(parts[order[1]]), let day = Int(parts[order[2]]) else { continue }
            return (year, month, day)
        }
        return nil
    }

    /// A day of the month: 1–31, optionally followed by `.`, `,`, `st`, `nd`, `rd` or `th`.
    private static func dayNumber(_ word: Substring) -> Int? {
        var digits = word
        for suffix in ["st", "nd", "rd", "th"] where digits.lowercased().hasSuffix(suffix) {
            digits = digits.dropLast(2)
            break
        }
        while let last = digits.last, last == "." || last == "," { digits = digits.dropLast() }
        guard (1...2).contains(digits.count), digits.utf8.allSatisfy(isDigit), let day = Int(digits),
              (1...31).contains(day) else { return nil }
        return day
    }

    /// A four-digit year from 1900 to 2199.
    private static func year(_ word: Substring) -> Int? {
        guard word.count == 4, word.utf8.allSatisfy(isDigit), let year = Int(word), (1900...2199).contains(year) else { return nil }
        return year
    }

    private static func isValidDate(year: Int, month: Int, day: Int) -> Bool {
        guard (1...12).contains(month), day >= 1 else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        return day <= lengths[month - 1]
    }

    /// How many words from `index` make a time (`at` optional before it): `15:30`, `3:30 PM`,
    /// `3pm`, `3 pm`. Nil when none does.
    private static func timeLength(_ words: [Substring], at index: Int) -> Int? {
        var start = index
        if start < words.count, words[start].lowercased() == "at" { start += 1 }
        guard start < words.count else { return nil }
        let word = words[start].lowercased()
        let meridiem = ["am", "pm", "a.m", "p.m"]
        if let suffix = meridiem.first(where: { word.hasSuffix($0) }), isClock(word.dropLast(suffix.count), twelveHour: true) {
            return start + 1 - index
        }
        guard isClock(Substring(word), twelveHour: false) || (start + 1 < words.count && isClock(Substring(word), twelveHour: true)
                && meridiem.contains(words[start + 1].lowercased())) else { return nil }
        let withMeridiem = start + 1 < words.count && meridiem.contains(words[start + 1].lowercased())
        return start + (withMeridiem ? 2 : 1) - index
    }

    /// `15:30` (24-hour), or with `twelveHour` `3`, `3:30` (1–12).
    private static func isClock(_ word: Substring, twelveHour: Bool) -> Bool {
        let parts = word.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), parts.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy(isDigit) }),
              parts[0].count <= 2, let hour = Int(parts[0]) else { return false }
        if parts.count == 2 {
            guard parts[1].count == 2, let minute = Int(parts[1]), minute < 60 else { return false }
        }
        return twelveHour ? (1...12).contains(hour) : parts.count == 2 && hour < 24
    }

    // MARK: Postal address

    /// Street words that end an English or French street name, or start a French one.
    private static let streetSuffixes: Set<String> = [
        "street", "st", "avenue", "ave", "road", "rd", "boulevard", "blvd", "lane", "ln", "drive", "dr", "way",
        "court", "ct", "place", "pl", "square", "sq", "terrace", "parkway", "pkwy", "highway", "hwy", "loop", "row",
    ]
    private static let frenchStreets: Set<String> = ["rue", "avenue", "boulevard", "place", "chemin", "allée", "quai"]
    /// Endings of a German street word (`Hauptstraße`, `Am Weg`, `Marktplatz`).
    private static let germanEndings = ["straße", "strasse", "str.", "weg", "gasse", "platz", "allee", "ring", "damm",
                                        "ufer", "steig"]

    /// The postal addresses in `text`: a street with its house number — `1 Infinite Loop`,
    /// `221B Baker Street` (number, at most four words, an English street word), `12 rue de la
    /// Paix` (number, a French street word, words), `Hauptstraße 5`, `Am Lindenweg 7` (a word
    /// ending in a German street word, then the number) — with what follows it on
    /// the line after a comma (`, Cupertino, CA 95014`), and the next line when that starts with
    /// a postcode (`10115 Berlin`). Streets without such a word and addresses without a house
    /// number are not recognised.
    static func postalAddresses(in text: String) -> [String] {
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
        var found: [String] = []
        for (lineIndex, line) in lines.enumerated() {
            let lineWords = line.split(whereSeparator: { $0.isWhitespace })
            guard let street = streetStart(lineWords) else { continue }
            var address = lineWords[street...].joined(separator: " ")
            while let last = address.last, ".;:!?".contains(last) { address.removeLast() }
            if lineIndex + 1 < lines.count, let next = lines[lineIndex + 1].split(whereSeparator: { $0.isWhitespace }).first,
               (4...5).contains(next.count), next.utf8.allSatisfy(isDigit) {
                address += ", " + lines[lineIndex + 1].trimmingWhitespace()
            }
            found.append(address)
        }
        return found
    }

    /// Where a street with a house number starts in a line's words, nil when none does.
    private static func streetStart(_ words: [Substring]) -> Int? {
        for (index, word) in words.enumerated() where isHouseNumber(word) {
            // 1 Infinite Loop, 221B Baker Street: up to four words, the last a street word.
            for length in 1...4 where index + length < words.count {
                let last = words[index + length]
                if streetSuffixes.contains(String(last.lowercased().trimmingSuffix(",."))) && last.first?.isUppercase == true {
                    return index
                }
            }
            if index + 1 < words.count, frenchStreets.contains(words[index + 1].lowercased()) { return index }
            // Hauptstraße 5: the number follows a German street word.
            if index > 0 {
                let before = words[index - 1].lowercased()
                if germanEndings.contains(where: { before.hasSuffix($0) }) && words[index - 1].first?.isUppercase == true {
                    return index - 1
                }
            }
        }
        return nil
    }

    /// 1–5 digits, optionally one letter (`221B`, `5a`), optionally a trailing comma.
    private static func isHouseNumber(_ word: Substring) -> Bool {
        var word = word.trimmingSuffix(",")
        if let last = word.last, last.isLetter, last.isASCII { word = word.dropLast() }
        return (1...5).contains(word.count) && word.utf8.allSatisfy(isDigit)
    }

    // MARK: Money amount

    /// Currency symbols and the ISO 4217 code each stands for (`$` is taken as US dollars).
    private static let currencySymbols: [String: String] = [
        "$": "USD", "US$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR", "₩": "KRW", "₽": "RUB", "₺": "TRY",
        "CHF": "CHF", "Fr.": "CHF", "kr": "SEK", "zł": "PLN", "Kč": "CZK",
    ]
    /// The ISO 4217 codes recognised as words.
    private static let currencyCodes: Set<String> = [
        "USD", "EUR", "GBP", "JPY", "CHF", "CAD", "AUD", "NZD", "CNY", "HKD", "SGD", "SEK", "NOK", "DKK", "PLN",
        "CZK", "HUF", "INR", "KRW", "BRL", "MXN", "ZAR", "TRY", "RUB",
    ]

    /// The money amounts in `text`: an amount (a number as ``isNumber(_:)`` reads it, no exponent)
    /// with a currency symbol or ISO code right before or after it, with or without a space
    /// (`$12.50`, `12,50 €`, `EUR 1.234,56`, `1,299 USD`). The amount's last `.` or `,` is its
    /// decimal mark unless exactly three digits follow it (then it groups thousands). A number without a currency is not money.
    static func moneyAmounts(in text: String) -> [MoneyAmount] {
        var found: [MoneyAmount] = []
        for line in text.split(whereSeparator: \.isNewline) {
            let lineWords = line.split(whereSeparator: { $0.isWhitespace }).map { stripped($0) }
            var index = 0
            while index < lineWords.count {
                let word = lineWords[index]
                let hasDigit = word.utf8.contains(where: isDigit)
                if hasDigit, let (amount, currency) = glued(word) {
                    found.append(MoneyAmount(amount: amount, currency: currency))
                } else if !hasDigit, word.count <= 3, let currency = currency(word), index + 1 < lineWords.count,
                          let amount = amount(lineWords[index + 1]) {
                    found.append(MoneyAmount(amount: amount, currency: currency))
                    index += 1
                } else if hasDigit, let amount = amount(word), index + 1 < lineWords.count,
                          let currency = currency(lineWords[index + 1]) {
                    found.append(MoneyAmount(amount: amount, currency: currency))
                    index += 1
                }
                index += 1
            }
        }
        return found
    }

    private static func currency(_ word: Substring) -> String? {
        if currencyCodes.contains(String(word)) { return String(word) }
        return currencySymbols[String(word)]
    }

    /// A symbol glued to its amount: `$12.50`, `12,50€`.
    private static func glued(_ word: Substring) -> (Double, String)? {
        for (symbol, code) in currencySymbols where symbol.first?.isLetter == false {
            if word.hasPrefix(symbol), let amount = amount(word.dropFirst(symbol.count)) { return (amount, code) }
            if word.hasSuffix(symbol), let amount = amount(word.dropLast(symbol.count)) { return (amount, code) }
        }
        return nil
    }

    /// The value of an amount: digits with `,` `.` `'` grouping and a decimal mark.
    static func amount(_ word: Substring) -> Double? {
        let text = word.hasSuffix(",-") || word.hasSuffix(".-") ? word.dropLast(2) : word
        guard !text.isEmpty, text.first != "+", !text.contains(where: { $0 == "e" || $0 == "E" || $0 == " " }),
              withBytes(text, { isNumber($0[...]) }) else { return nil }
        var digits = String(text)
        if let mark = text.lastIndex(where: { $0 == "." || $0 == "," }) {
            let after = text[text.index(after: mark)...].count
            let isDecimal = after != 3
            var cleaned = ""
            for index in text.indices where text[index].isNumber || text[index] == "-" || (index == mark && isDecimal) {
                cleaned.append(index == mark ? "." : text[index])
            }
            digits = cleaned
        }
        return Double(digits.replacing("'", with: ""))
    }
}

extension Substring {
    /// Without the characters of `characters` at its end.
    fileprivate func trimmingSuffix(_ characters: String) -> Substring {
        var result = self
        while let last = result.last, characters.contains(last) { result = result.dropLast() }
        return result
    }

    /// Without white space at either end.
    fileprivate func trimmingWhitespace() -> Substring {
        var result = self
        while let first = result.first, first.isWhitespace { result = result.dropFirst() }
        while let last = result.last, last.isWhitespace { result = result.dropLast() }
        return result
    }
}

extension String {
    /// Without the characters of `characters` at its end.
    fileprivate func trimmingSuffix(_ characters: String) -> Substring { self[...].trimmingSuffix(characters) }
}
