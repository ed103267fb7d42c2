extension String {
    /// The text made safe for one line of a terminal or a log: control characters (newlines,
    /// tabs, escape sequences), line separators and the bidirectional controls that could make
    /// text read differently from what it is (U+202E…) shown as `\n`, `\t`, `\r` or `\u{1B}`; with
    /// `limit`, at most that many characters, the last one `…` when cut. Apps' titles and names,
    /// and messages from the bus, go through it before the CLI or a demo app prints them.
    public func printableLine(limit: Int? = nil) -> String {
        var out = ""
        for scalar in unicodeScalars {
            let isBidiControl = Self.bidiControls.contains(scalar.value)
            switch scalar.properties.generalCategory {
            case _ where isBidiControl, .control, .lineSeparator, .paragraphSeparator:
                switch scalar {
                case "\n": out += "\\n"
                case "\t": out += "\\t"
                case "\r": out += "\\r"
                default: out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
                }
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        if let limit, limit > 0, out.count > limit { return String(out.prefix(limit - 1)) + "…" }
        return out
    }

    /// Unicode's bidirectional formatting characters: marks, embeddings, overrides, isolates.
    private static let bidiControls: Set<UInt32> = [0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E,
                                                     0x2066, 0x2067, 0x2068, 0x2069]
}
