extension String {
    /// The text made safe for one line of a terminal or a log: control characters (newlines,
    /// tabs, escape sequences) and line separators shown as `\n`, `\t`, `\r` or `\u{1B}`; with
    /// `limit`, at most that many characters, the last one `…` when cut. Apps' titles and names,
    /// and messages from the bus, go through it before the CLI or a demo app prints them.
    public func printableLine(limit: Int? = nil) -> String {
        var out = ""
        for scalar in unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .lineSeparator, .paragraphSeparator:
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
}
