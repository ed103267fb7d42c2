import ArgumentParser
import Ferry
import FerryModel
import FerryTerminal

/// `ferry detect`: which detection patterns the items' text matches, or (`--values`) their values.
struct DetectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "detect",
        abstract: "Detect patterns in the items' text (not a paste), or their values (a paste).",
        discussion: """
            PATTERN is one of probableWebURL, probableWebSearch, number, link, phoneNumber, \
            emailAddress, postalAddress, calendarEvent, shipmentTrackingNumber, flightNumber, \
            moneyAmount; without any, all of them. The broker looks at each item's first \
            plain-text or URL representation (its first 64 KiB); docs/pasteboards.md says what \
            each pattern recognises.

            Without --values one line per item: its index and the patterns found ('-' for \
            none); the text is not handed over and this is not a paste. With --values one line \
            per value: the item's index, the pattern and the value (each match of a pattern on \
            a line of its own, a money amount as 'AMOUNT CURRENCY'). --values is a paste: the \
            paste policy decides and the broker logs it for each item whose values it hands over.

            JSON keys: pasteboard (string), items (array of objects with index and patterns \
            (array of names), or with --values index and values (object from pattern name to \
            the trimmed text, a number, an array of matches, or for moneyAmount an array of \
            objects with amount and currency)).
            """)

    @Argument(help: ArgumentHelp("The patterns to look for (default: all).", valueName: "pattern"))
    var patterns: [String] = []

    @Flag(name: .long, help: "Print the values found (a paste) instead of the patterns.")
    var values = false

    @OptionGroup var pasteboard: ExistingPasteboardOption

    @Flag(name: .long, help: "Print one JSON object (keys are listed in the discussion).")
    var json = false

    @OptionGroup var bus: BusOptions

    func validate() throws {
        for name in patterns where DetectionPattern(rawValue: name) == nil {
            let known = DetectionPattern.allCases.map(\.rawValue).joined(separator: ", ")
            throw ValidationError("Unknown pattern '\(name)' (known: \(known)).")
        }
    }

    func run() async throws {
        try pasteboard.check()
        let asked = patterns.isEmpty ? Set(DetectionPattern.allCases) : Set(patterns.compactMap(DetectionPattern.init(rawValue:)))
        let client = try await bus.connect()
        let board = try await pasteboard.resolve(on: client)
        if values {
            let found = try await board.detectValues(asked, userAction: true)
            if json { return try printJSON(ValuesReport(pasteboard: board.name, found)) }
            try writeOut(Self.valueLines(found))
        } else {
            let found = try await board.detectPatterns(asked)
            if json { return try printJSON(PatternsReport(pasteboard: board.name, found)) }
            try writeOut(Self.patternLines(found))
        }
    }

    /// The patterns of `found` in the order `DetectionPattern` lists them.
    static func ordered<T>(_ found: some Collection<DetectionPattern>, _ body: (DetectionPattern) -> T) -> [T] {
        DetectionPattern.allCases.filter(found.contains).map(body)
    }

    /// `0  link calendarEvent` lines, `1  -` for an item without any.
    static func patternLines(_ found: [Set<DetectionPattern>]) -> String {
        found.enumerated().map { index, patterns in
            "\(index)  " + (patterns.isEmpty ? "-" : ordered(patterns, \.rawValue).joined(separator: " ")) + "\n"
        }.joined()
    }

    /// `0  flightNumber  LH 400` lines, one per value (each match of a pattern on its own line).
    static func valueLines(_ found: [[DetectionPattern: DetectedValue]]) -> String {
        var text = ""
        for (index, values) in found.enumerated() {
            for pattern in DetectionPattern.allCases {
                guard let value = values[pattern] else { continue }
                let shown: [String] = switch value {
                case .text(let string): [string]
                case .number(let number): [number.formatted]
                case .matches(let matches): matches
                case .moneyAmounts(let amounts): amounts.map { "\($0.amount.formatted) \($0.currency)" }
                }
                for line in shown { text += "\(index)  \(pattern.rawValue)  \(line.printableLine())\n" }
            }
        }
        return text
    }
}

/// `ferry detect --json`.
private struct PatternsReport: Encodable {
    struct Item: Encodable {
        var index: Int
        var patterns: [String]
    }

    var pasteboard: String
    var items: [Item]

    init(pasteboard: String, _ found: [Set<DetectionPattern>]) {
        self.pasteboard = pasteboard
        items = found.enumerated().map { Item(index: $0.offset, patterns: DetectCommand.ordered($0.element, \.rawValue)) }
    }
}

/// `ferry detect --values --json`.
private struct ValuesReport: Encodable {
    struct Money: Encodable {
        var amount: Double
        var currency: String
    }

    enum Value: Encodable {
        case text(String), number(Double), matches([String]), money([Money])

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .text(let text): try container.encode(text)
            case .number(let number): try container.encode(number)
            case .matches(let matches): try container.encode(matches)
            case .money(let amounts): try container.encode(amounts)
            }
        }
    }

    struct Item: Encodable {
        var index: Int
        var values: [String: Value]
    }

    var pasteboard: String
    var items: [Item]

    init(pasteboard: String, _ found: [[DetectionPattern: DetectedValue]]) {
        self.pasteboard = pasteboard
        items = found.enumerated().map { index, values in
            var entries: [String: Value] = [:]
            for (pattern, value) in values {
                entries[pattern.rawValue] = switch value {
                case .text(let text): .text(text)
                case .number(let number): .number(number)
                case .matches(let matches): .matches(matches)
                case .moneyAmounts(let amounts): .money(amounts.map { Money(amount: $0.amount, currency: $0.currency) })
                }
            }
            return Item(index: index, values: entries)
        }
    }
}

extension Double {
    /// `120` for a whole number, `12.5` otherwise.
    fileprivate var formatted: String {
        if self == rounded(), abs(self) < 1e15 { return String(Int64(self)) }
        return String(self)
    }
}
