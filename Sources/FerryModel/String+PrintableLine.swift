import FerryText

extension String {
    /// The text made safe for one line of a terminal or a log: control characters (newlines,
    /// tabs, escape sequences), line separators and the bidirectional controls that could make
    /// text read differently from what it is (U+202E…) shown as `\n`, `\t`, `\r` or `\u{1B}`; with
    /// `limit`, at most that many characters, the last one `…` when cut. Apps' titles and names,
    /// and messages from the bus, go through it before the CLI or a demo app prints them
    /// (``PrintableText/line(_:limit:)``, which the `ferry` front uses too).
    public func printableLine(limit: Int? = nil) -> String {
        PrintableText.line(self, limit: limit)
    }
}
