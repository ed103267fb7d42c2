/// One element of a D-Bus object path made from any string: bytes outside `[A-Za-z0-9]` become
/// `_xx` (lower-case hex), so `"0F3A-9"` is `0F3A_2d9` and the mapping is reversible.
/// Pasteboard names and scene persistent identifiers name their objects this way.
public enum ObjectPathElement {
    /// The escaped element for `text` (empty for an empty string).
    public static func escape(_ text: String) -> String {
        var element = ""
        for byte in text.utf8 {
            if isAlphanumeric(byte) {
                element.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                element += "_" + String(byte >> 4, radix: 16) + String(byte & 0xF, radix: 16)
            }
        }
        return element
    }

    /// The string whose ``escape(_:)`` is `element`, nil when `element` is not one (a stray `_`,
    /// upper-case hex, bytes that are not UTF-8, or another spelling of the same string).
    public static func unescape(_ element: Substring) -> String? {
        var bytes: [UInt8] = []
        var rest = Array(element.utf8)[...]
        while let byte = rest.popFirst() {
            if isAlphanumeric(byte) { bytes.append(byte); continue }
            guard byte == 0x5F, rest.count >= 2,
                  let value = UInt8(String(decoding: rest.prefix(2), as: UTF8.self), radix: 16) else { return nil }
            rest = rest.dropFirst(2)
            bytes.append(value)
        }
        guard let text = String(validating: bytes, as: UTF8.self), escape(text) == element else { return nil }
        return text
    }

    /// Whether `byte` is an ASCII letter or digit.
    public static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A)
    }
}
