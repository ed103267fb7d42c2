/// JSON written straight to UTF-8, exactly as ``jsonLine(_:)`` writes the same values
/// (`JSONEncoder`: sorted keys, slashes unescaped, integral doubles without `.0`), for output too
/// large for the encoder's generic path: `ferry scenes --json` of 1,000 sessions spent 7 of its
/// 45 ms in `JSONEncoder`. The caller gives each object's keys in sorted order and only finite
/// doubles (`JSONEncoder` refuses the others; a caller that may hold one uses it instead).
struct JSONText {
    private(set) var utf8: [UInt8] = []
    /// A value was written last at this level, so the next one needs a comma.
    private var afterValue = false

    init(capacity: Int = 256) { utf8.reserveCapacity(capacity) }

    /// The text, with a newline, as ``jsonLine(_:)`` gives it.
    var line: String { String(decoding: utf8 + [UInt8(ascii: "\n")], as: UTF8.self) }

    mutating func beginObject() { open(UInt8(ascii: "{")) }
    mutating func endObject() { close(UInt8(ascii: "}")) }
    mutating func beginArray() { open(UInt8(ascii: "[")) }
    mutating func endArray() { close(UInt8(ascii: "]")) }

    /// An object's key; its value follows.
    mutating func key(_ name: String) {
        separate()
        quoted(name)
        utf8.append(UInt8(ascii: ":"))
        afterValue = false
    }

    mutating func string(_ text: String?) {
        separate()
        if let text { quoted(text) } else { utf8.append(contentsOf: "null".utf8) }
        afterValue = true
    }

    mutating func integer(_ value: Int) {
        separate()
        utf8.append(contentsOf: String(value).utf8)
        afterValue = true
    }

    /// A finite double: its shortest form, an integral one without `.0`.
    mutating func number(_ value: Double) {
        precondition(value.isFinite, "JSONText writes finite doubles only")
        separate()
        let text = value.description
        utf8.append(contentsOf: text.hasSuffix(".0") ? text.utf8.dropLast(2) : text.utf8[...])
        afterValue = true
    }

    private mutating func open(_ bracket: UInt8) {
        separate()
        utf8.append(bracket)
        afterValue = false
    }

    private mutating func close(_ bracket: UInt8) {
        utf8.append(bracket)
        afterValue = true
    }

    private mutating func separate() {
        if afterValue { utf8.append(UInt8(ascii: ",")) }
    }

    /// A string in quotes: `"` and `\` escaped, control characters as `\b \t \n \f \r` or `\u00XX`.
    /// The bytes between escapes are appended a run at a time (a byte at a time was a twentieth
    /// of `ferry scenes --json` over 1,000 sessions).
    private mutating func quoted(_ text: String) {
        utf8.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            var start = 0
            for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 {
                utf8.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
                escape(byte)
                start = index + 1
            }
            utf8.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...]))
        }
        utf8.append(UInt8(ascii: "\""))
    }

    /// `"`, `\` or a control character, escaped.
    private mutating func escape(_ byte: UInt8) {
        switch byte {
        case 0x08: utf8.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
        case 0x09: utf8.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
        case 0x0A: utf8.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
        case 0x0C: utf8.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
        case 0x0D: utf8.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
        case 0..<0x20:
            let hex = Array("0123456789abcdef".utf8)
            utf8.append(contentsOf: Array(#"\u00"#.utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
        default: utf8.append(contentsOf: [UInt8(ascii: "\\"), byte])
        }
    }
}
