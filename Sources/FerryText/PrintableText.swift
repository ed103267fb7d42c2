/// Text made safe for one line of a terminal or a log, shared by every Ferry module that prints
/// what others sent (FerryModel's `String.printableLine(limit:)` is this).
public enum PrintableText {
    /// `text` with control characters (newlines, tabs, escape sequences), the line and paragraph
    /// separators and the bidirectional controls that could make text read differently from what
    /// it is (U+202E…) shown as `\n`, `\t`, `\r` or `\u{1B}`; with `limit`, at most that many
    /// characters, the last one `…` when cut.
    public static func line(_ text: String, limit: Int? = nil) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            guard mustEscape(scalar.value) else {
                out.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default: out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            }
        }
        if let limit, limit > 0, out.count > limit { return String(out.prefix(limit - 1)) + "…" }
        return out
    }

    /// Unicode's control characters (Cc), line and paragraph separators (Zl, Zp) and
    /// bidirectional formatting characters (marks, embeddings, overrides, isolates). Ranges, not a
    /// set or Unicode property tables: the `ferry` front calls this too, and its start-up counts.
    static func mustEscape(_ value: UInt32) -> Bool {
        switch value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029: true
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}
