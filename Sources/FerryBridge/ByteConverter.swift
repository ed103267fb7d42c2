/// Converts a stream of bytes chunk by chunk (``ByteConversion``), keeping across chunks what a
/// chunk boundary may split: a UTF-16 unit, a surrogate pair, a UTF-8 sequence, a line.
package struct ByteConverter: Sendable {
    /// The conversion this converter performs.
    package let conversion: ByteConversion
    private var carry: [UInt8] = []
    private var started = false
    private var bigEndian = false
    private var highSurrogate: UInt32?
    private var firstLine = true

    /// A converter at the start of a stream.
    package init(_ conversion: ByteConversion) { self.conversion = conversion }

    /// Converts `chunk`, appending the output to `output`.
    package mutating func convert(_ chunk: some Collection<UInt8>, into output: inout [UInt8]) {
        switch conversion {
        case .none:
            output.append(contentsOf: chunk)
        case .latin1ToUTF8:
            for byte in chunk { Self.appendUTF8(UInt32(byte), to: &output) }
        case .utf16ToUTF8:
            utf16(chunk, into: &output)
        case .utf8ToLatin1:
            utf8ToLatin1(chunk, into: &output)
        case .gnomeCopiedFilesToURIList, .uriListToGnomeCopiedFiles:
            carry.append(contentsOf: chunk)
            while let newline = carry.firstIndex(of: 0x0A) {
                line(Array(carry[..<newline]), into: &output)
                carry.removeSubrange(...newline)
            }
        }
    }

    /// Ends the stream: appends what was held back (a last line without a newline; a dangling
    /// byte or half sequence as U+FFFD or `?`).
    package mutating func finish(into output: inout [UInt8]) {
        switch conversion {
        case .none, .latin1ToUTF8: break
        case .utf16ToUTF8:
            if !carry.isEmpty || highSurrogate != nil { Self.appendUTF8(0xFFFD, to: &output) }
        case .utf8ToLatin1:
            if !carry.isEmpty { output.append(0x3F) }
        case .gnomeCopiedFilesToURIList, .uriListToGnomeCopiedFiles:
            if !carry.isEmpty { line(carry, into: &output) }
            if conversion == .uriListToGnomeCopiedFiles && firstLine { output.append(contentsOf: Array("copy".utf8)) }
        }
        carry = []
        highSurrogate = nil
    }

    /// Converts a whole buffer at once.
    package static func convert(_ bytes: [UInt8], _ conversion: ByteConversion) -> [UInt8] {
        var converter = ByteConverter(conversion)
        var output: [UInt8] = []
        converter.convert(bytes, into: &output)
        converter.finish(into: &output)
        return output
    }

    private mutating func line(_ raw: [UInt8], into output: inout [UInt8]) {
        var text = raw
        if text.last == 0x0D { text.removeLast() }
        switch conversion {
        case .gnomeCopiedFilesToURIList:
            // The first line is the operation (`copy` or `cut`); the rest are URIs.
            if firstLine { firstLine = false; return }
            guard !text.isEmpty else { return }
            output.append(contentsOf: text)
            output.append(contentsOf: [0x0D, 0x0A])
        default:
            // A URI list's comments and blank lines are left out.
            guard !text.isEmpty, text.first != 0x23 else { return }
            output.append(contentsOf: Array((firstLine ? "copy\n" : "\n").utf8))
            firstLine = false
            output.append(contentsOf: text)
        }
    }

    private mutating func utf16(_ chunk: some Collection<UInt8>, into output: inout [UInt8]) {
        for byte in chunk {
            carry.append(byte)
            guard carry.count == 2 else { continue }
            let (a, b) = (carry[0], carry[1])
            carry = []
            if !started {
                started = true
                if a == 0xFE && b == 0xFF { bigEndian = true; continue }
                if a == 0xFF && b == 0xFE { continue }
            }
            let unit = bigEndian ? UInt32(a) << 8 | UInt32(b) : UInt32(b) << 8 | UInt32(a)
            if let high = highSurrogate {
                highSurrogate = nil
                if (0xDC00...0xDFFF).contains(unit) {
                    Self.appendUTF8(0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00), to: &output)
                    continue
                }
                Self.appendUTF8(0xFFFD, to: &output)
            }
            switch unit {
            case 0xD800...0xDBFF: highSurrogate = unit
            case 0xDC00...0xDFFF: Self.appendUTF8(0xFFFD, to: &output)
            default: Self.appendUTF8(unit, to: &output)
            }
        }
    }

    private mutating func utf8ToLatin1(_ chunk: some Collection<UInt8>, into output: inout [UInt8]) {
        for byte in chunk {
            if carry.isEmpty {
                switch byte {
                case 0..<0x80: output.append(byte)
                case 0xC0..<0xF8: carry.append(byte)
                default: output.append(0x3F)
                }
                continue
            }
            guard byte & 0xC0 == 0x80 else {
                output.append(0x3F)
                carry = []
                convertOne(byte, into: &output)
                continue
            }
            carry.append(byte)
            let lead = carry[0]
            let length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2
            guard carry.count == length else { continue }
            var scalar = UInt32(lead) & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07)
            for continuation in carry.dropFirst() { scalar = scalar << 6 | UInt32(continuation & 0x3F) }
            output.append(scalar < 0x100 ? UInt8(scalar) : 0x3F)
            carry = []
        }
    }

    private mutating func convertOne(_ byte: UInt8, into output: inout [UInt8]) {
        utf8ToLatin1(CollectionOfOne(byte), into: &output)
    }

    static func appendUTF8(_ scalar: UInt32, to output: inout [UInt8]) {
        switch scalar {
        case 0..<0x80:
            output.append(UInt8(scalar))
        case 0x80..<0x800:
            output.append(contentsOf: [UInt8(0xC0 | scalar >> 6), UInt8(0x80 | scalar & 0x3F)])
        case 0x800..<0x10000:
            output.append(contentsOf: [UInt8(0xE0 | scalar >> 12), UInt8(0x80 | scalar >> 6 & 0x3F), UInt8(0x80 | scalar & 0x3F)])
        default:
            output.append(contentsOf: [UInt8(0xF0 | scalar >> 18), UInt8(0x80 | scalar >> 12 & 0x3F),
                                       UInt8(0x80 | scalar >> 6 & 0x3F), UInt8(0x80 | scalar & 0x3F)])
        }
    }
}
