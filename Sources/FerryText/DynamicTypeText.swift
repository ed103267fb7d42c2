/// Dynamic type identifiers (`dyn.…`) in messages, shown as a person reads them: by the MIME
/// type (or `.extension`) they stand for. Kept here, without the type database, so that the
/// front (`ferry paste`, which links no FerryModel) names them as the full CLI does; FerryModel's
/// dynamic types use the same base-32 code.
public enum DynamicTypeText {
    /// The lower-case RFC 4648 base-32 alphabet, no padding.
    private static let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567".utf8)

    /// `bytes` in lower-case base 32 without padding.
    public static func base32(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 8 + 4) / 5)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                out.append(alphabet[Int((buffer >> UInt32(bits)) & 31)])
            }
        }
        if bits > 0 { out.append(alphabet[Int((buffer << UInt32(5 - bits)) & 31)]) }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes lower-case base 32 without padding; nil for another character or leftover bits
    /// that are not zero padding.
    public static func unbase32(_ chars: [UInt8]) -> [UInt8]? {
        var out: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for c in chars {
            let value: UInt32
            switch c {
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = UInt32(c - UInt8(ascii: "a"))
            case UInt8(ascii: "2")...UInt8(ascii: "7"): value = UInt32(c - UInt8(ascii: "2") + 26)
            default: return nil
            }
            buffer = (buffer << 5) | value
            bits += 5
            if bits >= 8 {
                bits -= 8
                out.append(UInt8((buffer >> UInt32(bits)) & 0xFF))
            }
        }
        // Leftover bits must be zero padding, fewer than 5 of them.
        guard bits < 5, buffer & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return out
    }

    /// How a person reads dynamic identifier `identifier`: its MIME type (`m=` code) or
    /// `.extension` (`e=` code); nil when it is no canonical code of either class (other tag
    /// classes, and words that only look like one, are left to the caller).
    public static func name(ofDynamic identifier: String) -> String? {
        let utf8 = Array(identifier.utf8)
        guard utf8.count > 4, utf8.prefix(4).map({ $0 | 0x20 }) == Array("dyn.".utf8) else { return nil }
        let code = utf8.dropFirst(4).map { $0 | 0x20 }
        guard let bytes = unbase32(code), base32(bytes) == String(decoding: code, as: UTF8.self),
              let text = String(validating: bytes, as: UTF8.self),
              let equals = text.firstIndex(of: "="), let colon = text.lastIndex(of: ":"), equals < colon else { return nil }
        let tag = text[text.index(after: equals)..<colon]
        guard !tag.isEmpty, tag.allSatisfy({ $0.isASCII && !$0.isUppercase && $0 != " " && $0 != "\n" }) else { return nil }
        switch text[..<equals] {
        case "m": return String(tag)
        case "e": return "." + tag
        default: return nil
        }
    }

    /// `text` with every dynamic type identifier in it shown by ``name(ofDynamic:)``; a `dyn.`
    /// word that is no such code stays as it is, as does one inside a longer word.
    public static func readable(_ text: String) -> String {
        guard text.contains("dyn.") else { return text }
        func isWordCharacter(_ c: Character) -> Bool { c.isLetter || c.isNumber || c == "." || c == "_" || c == "-" }
        var result = ""
        var rest = Substring(text)
        while let start = rest.firstRange(of: "dyn.") {
            let before = rest[..<start.lowerBound]
            result += before
            let word = rest[start.lowerBound...].prefix { $0.isASCII && isWordCharacter($0) }
            let atWordStart = before.last.map { !isWordCharacter($0) } ?? true
            if atWordStart, let name = name(ofDynamic: String(word)) {
                result += name
            } else {
                result += word
            }
            rest = rest[word.endIndex...]
        }
        return result + rest
    }
}
