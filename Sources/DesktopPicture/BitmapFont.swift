/// A built-in 5×9 bitmap font for printable ASCII (Ferry's own glyph table), for the PNG's labels.
///
/// Each glyph is 9 rows of 5 pixels: rows 0–6 stand on the baseline (capitals are 7 rows tall),
/// rows 7–8 hold descenders. Row `r` is bits `5r ..< 5r+5` of the glyph's value, the row's
/// leftmost pixel its highest bit. A character cell is 6×10 (one column and one row of spacing).
enum BitmapFont {
    static let glyphWidth = 5
    static let glyphHeight = 9
    static let capitalHeight = 7
    static let cellWidth = 6

    /// Whether pixel (`column`, `row`) of `glyph` is set.
    @inline(__always)
    static func isSet(_ glyph: UInt64, column: Int, row: Int) -> Bool {
        (glyph >> UInt64(5 * row + 4 - column)) & 1 == 1
    }

    /// The glyph drawn for a character: printable ASCII from the table, a few look-alikes
    /// (`×` as `x`, `–` as `-`, `·` as a raised dot, `—` as a full-width dash), `?` for the rest.
    static func glyph(for character: Character) -> UInt64 {
        if let ascii = character.asciiValue, ascii >= 32, ascii < 127 { return table[Int(ascii) - 32] }
        switch character {
        case "—": return emDash
        case "–", "−": return table[Int(UInt8(ascii: "-")) - 32]
        case "×": return table[Int(UInt8(ascii: "x")) - 32]
        case "·", "•": return middleDot
        case "\u{2018}", "\u{2019}": return table[Int(UInt8(ascii: "'")) - 32]
        case "\u{201C}", "\u{201D}": return table[Int(UInt8(ascii: "\"")) - 32]
        default: return table[Int(UInt8(ascii: "?")) - 32]
        }
    }

    /// Row 3 filled edge to edge; drawn with the spacing column filled too, so dashes join. Bit 63
    /// tells it apart from the hyphen.
    static let emDash: UInt64 = 1 << 63 | 0x1F << 15
    /// A 2×2 dot in the middle.
    static let middleDot: UInt64 = (0x0C << 10) | (0x0C << 15)

    /// Printable ASCII, U+0020 to U+007E.
    static let table: [UInt64] = [
        0x000000000000, // space
        0x000100421084, // !
        0x00000000294A, // "
        0x000295F57D4A, // #
        0x00013C5751E4, // $
        0x0000E6820B38, // %
        0x00036554524C, // &
        0x000000001084, // '
        0x000088842082, // (
        0x000208210888, // )
        0x000009575480, // *
        0x0000084F9080, // +
        0x000208C00000, // ,
        0x0000000F8000, // -
        0x000318000000, // .
        0x000020820820, // /
        0x0003A39ACE2E, // 0
        0x000388421184, // 1
        0x0007D041062E, // 2
        0x0003A211105F, // 3
        0x000085F928C2, // 4
        0x0003A210FA1F, // 5
        0x0003A31F4106, // 6
        0x00021082083F, // 7
        0x0003A317462E, // 8
        0x00030417C62E, // 9
        0x000018C03180, // :
        0x000208C03180, // ;
        0x000088882082, // <
        0x000001F07C00, // =
        0x000208208888, // >
        0x00010041062E, // ?
        0x0003AB56862E, // @
        0x000463F8C62E, // A
        0x0007A31F463E, // B
        0x0003A308422E, // C
        0x00072518C65C, // D
        0x0007E10F421F, // E
        0x0004210F421F, // F
        0x0003E31BC22E, // G
        0x0004631FC631, // H
        0x00038842108E, // I
        0x000324210847, // J
        0x0004654C5251, // K
        0x0007E1084210, // L
        0x0004631AD771, // M
        0x0004633AE631, // N
        0x0003A318C62E, // O
        0x0004210F463E, // P
        0x00036558C62E, // Q
        0x0004654F463E, // R
        0x00078217420F, // S
        0x00010842109F, // T
        0x0003A318C631, // U
        0x00011518C631, // V
        0x0002AB5AC631, // W
        0x000462A22A31, // X
        0x000108454631, // Y
        0x0007E082083F, // Z
        0x00039084210E, // [
        0x000002222200, // backslash
        0x00038421084E, // ]
        0x000000004544, // ^
        0x1F0000000000, // _
        0x000000000888, // `
        0x0003E2F0B800, // a
        0x0007A31CDA10, // b
        0x0003A3083800, // c
        0x0003E319B421, // d
        0x0003A1F8B800, // e
        0x0002108E2126, // f
        0x0E0B6718BC00, // g
        0x0004631CDA10, // h
        0x000388423004, // i
        0x0C9084211802, // j
        0x0004A98A4A10, // k
        0x00038842108C, // l
        0x0004635AE800, // m
        0x0004631CD800, // n
        0x0003A318B800, // o
        0x1085B318F800, // p
        0x010B6718BC00, // q
        0x0004210CD800, // r
        0x000782E83C00, // s
        0x000192847108, // t
        0x00036718C400, // u
        0x00011518C400, // v
        0x0002AB58C400, // w
        0x000454454400, // x
        0x0E0B6718C400, // y
        0x0007D0417C00, // z
        0x0000C8441083, // {
        0x000108421084, // |
        0x000608411098, // }
        0x0000002AA000, // ~
    ]
}
