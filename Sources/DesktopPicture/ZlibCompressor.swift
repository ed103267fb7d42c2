/// A zlib stream (RFC 1950) holding one DEFLATE block with the fixed Huffman codes (RFC 1951
/// §3.2.6): greedy LZ77 over a 32 KiB window, trying the last position with the same three
/// bytes and the position one image row back. Deterministic; no dictionary.
enum ZlibCompressor {
    /// Compresses `data`; `rowLength` (the bytes of one image row, 0 for none) is tried as a
    /// match distance at every position.
    static func compress(_ data: [UInt8], rowLength: Int = 0) -> [UInt8] {
        var writer = BitWriter()
        writer.bytes.reserveCapacity(data.count / 16 + 64)
        writer.bytes += [0x78, 0x01]      // deflate, 32 KiB window; FLEVEL 0; (0x7801 % 31 == 0)
        writer.put(1, bits: 1)            // BFINAL
        writer.put(1, bits: 2)            // BTYPE 01: fixed Huffman
        data.withUnsafeBufferPointer { input in
            encode(input, rowLength: rowLength, into: &writer)
        }
        writer.putSymbol(256)             // end of block
        writer.flush()
        let adler = adler32(data)
        writer.bytes += [UInt8(adler >> 24), UInt8(adler >> 16 & 0xFF), UInt8(adler >> 8 & 0xFF), UInt8(adler & 0xFF)]
        return writer.bytes
    }

    static let window = 32768
    static let minMatch = 3
    static let maxMatch = 258
    private static let hashBits = 15

    private static func encode(_ input: UnsafeBufferPointer<UInt8>, rowLength: Int, into writer: inout BitWriter) {
        guard let bytes = input.baseAddress else { return }
        let count = input.count
        var heads = [Int32](repeating: -1, count: 1 << hashBits)
        let rowDistance = rowLength > 0 && rowLength <= window ? rowLength : 0
        heads.withUnsafeMutableBufferPointer { headBuffer in
            guard let head = headBuffer.baseAddress else { return }
            var position = 0
            while position < count {
                var bestLength = 0, bestDistance = 0
                if position + minMatch <= count {
                    let hash = hash3(bytes + position)
                    let candidate = Int(head[hash])
                    head[hash] = Int32(position)
                    if candidate >= 0, position - candidate <= window {
                        bestLength = matchLength(bytes + candidate, bytes + position, limit: min(maxMatch, count - position))
                        bestDistance = position - candidate
                    }
                    if rowDistance > 0, position >= rowDistance, bestLength < maxMatch, rowDistance != bestDistance {
                        let length = matchLength(bytes + position - rowDistance, bytes + position,
                                                 limit: min(maxMatch, count - position))
                        if length > bestLength { bestLength = length; bestDistance = rowDistance }
                    }
                }
                if bestLength >= minMatch {
                    writer.putMatch(length: bestLength, distance: bestDistance)
                    // Remember the match's last position, so a run keeps finding itself.
                    let last = position + bestLength - 1
                    if last + minMatch <= count { head[hash3(bytes + last)] = Int32(last) }
                    position += bestLength
                } else {
                    writer.putSymbol(Int(bytes[position]))
                    position += 1
                }
            }
        }
    }

    @inline(__always)
    private static func hash3(_ bytes: UnsafePointer<UInt8>) -> Int {
        (Int(bytes[0]) << 10 ^ Int(bytes[1]) << 5 ^ Int(bytes[2])) & ((1 << hashBits) - 1)
    }

    /// How many bytes from `position` on equal those from `earlier` (at most `limit`), comparing
    /// eight at a time.
    @inline(__always)
    private static func matchLength(_ earlier: UnsafePointer<UInt8>, _ position: UnsafePointer<UInt8>, limit: Int) -> Int {
        let raw = UnsafeRawPointer(earlier), other = UnsafeRawPointer(position)
        var length = 0
        while length + 8 <= limit {
            let difference = raw.loadUnaligned(fromByteOffset: length, as: UInt64.self)
                ^ other.loadUnaligned(fromByteOffset: length, as: UInt64.self)
            if difference != 0 {
                #if _endian(little)
                return length + difference.trailingZeroBitCount / 8
                #else
                return length + difference.leadingZeroBitCount / 8
                #endif
            }
            length += 8
        }
        while length < limit, earlier[length] == position[length] { length += 1 }
        return length
    }

    /// Adler-32 (RFC 1950 §8.2) of `data`.
    static func adler32(_ data: [UInt8]) -> UInt32 {
        var a: UInt32 = 1, b: UInt32 = 0
        data.withUnsafeBufferPointer { buffer in
            guard var byte = buffer.baseAddress else { return }
            var remaining = buffer.count
            while remaining > 0 {
                // 5552 bytes is the most that can be summed before b could overflow 32 bits.
                let block = min(remaining, 5552)
                var left = block
                while left >= 8 {
                    a &+= UInt32(byte[0]); b &+= a
                    a &+= UInt32(byte[1]); b &+= a
                    a &+= UInt32(byte[2]); b &+= a
                    a &+= UInt32(byte[3]); b &+= a
                    a &+= UInt32(byte[4]); b &+= a
                    a &+= UInt32(byte[5]); b &+= a
                    a &+= UInt32(byte[6]); b &+= a
                    a &+= UInt32(byte[7]); b &+= a
                    byte += 8
                    left -= 8
                }
                while left > 0 {
                    a &+= UInt32(byte.pointee); b &+= a
                    byte += 1
                    left -= 1
                }
                a %= 65521
                b %= 65521
                remaining -= block
            }
        }
        return b << 16 | a
    }
}

/// Writes DEFLATE's bit stream: least significant bit first, Huffman codes most significant bit
/// first (so they are stored bit-reversed).
struct BitWriter {
    var bytes: [UInt8] = []
    private var buffer: UInt64 = 0
    private var count = 0

    @inline(__always)
    mutating func put(_ value: UInt32, bits: Int) {
        buffer |= UInt64(value) << UInt64(count)
        count += bits
        if count >= 32 {
            bytes.append(UInt8(truncatingIfNeeded: buffer))
            bytes.append(UInt8(truncatingIfNeeded: buffer >> 8))
            bytes.append(UInt8(truncatingIfNeeded: buffer >> 16))
            bytes.append(UInt8(truncatingIfNeeded: buffer >> 24))
            buffer >>= 32
            count -= 32
        }
    }

    /// Pads to a whole byte and writes what is left.
    mutating func flush() {
        while count > 0 {
            bytes.append(UInt8(truncatingIfNeeded: buffer))
            buffer >>= 8
            count = max(count - 8, 0)
        }
        buffer = 0
    }

    /// A literal/length symbol (0–285) in the fixed code.
    @inline(__always)
    mutating func putSymbol(_ symbol: Int) {
        let code = FixedHuffman.literalCodes[symbol]
        put(UInt32(code.bits), bits: Int(code.length))
    }

    mutating func putMatch(length: Int, distance: Int) {
        let lengthCode = FixedHuffman.lengthCodes[length]
        putSymbol(Int(lengthCode.symbol))
        if lengthCode.extraBits > 0 { put(UInt32(lengthCode.extra), bits: Int(lengthCode.extraBits)) }
        let distanceCode = FixedHuffman.distanceCode(distance)
        put(UInt32(FixedHuffman.reversed(UInt32(distanceCode.symbol), length: 5)), bits: 5)
        if distanceCode.extraBits > 0 { put(UInt32(distanceCode.extra), bits: Int(distanceCode.extraBits)) }
    }
}

/// The fixed Huffman code's tables (RFC 1951 §3.2.5–3.2.6).
enum FixedHuffman {
    struct Code { var bits: UInt16; var length: UInt8 }
    struct Extra { var symbol: UInt16; var extraBits: UInt8; var extra: UInt16 }

    /// Literal/length symbols 0–287, bit-reversed for the LSB-first stream.
    static let literalCodes: [Code] = (0..<288).map { symbol in
        let (base, first, length): (UInt32, Int, Int) = switch symbol {
        case 0...143: (0x30, 0, 8)
        case 144...255: (0x190, 144, 9)
        case 256...279: (0x00, 256, 7)
        default: (0xC0, 280, 8)
        }
        return Code(bits: UInt16(reversed(base + UInt32(symbol - first), length: length)), length: UInt8(length))
    }

    static let lengthBases: [Int] = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59,
                                      67, 83, 99, 115, 131, 163, 195, 227, 258]
    static let lengthExtraBits: [Int] = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3,
                                          4, 4, 4, 4, 5, 5, 5, 5, 0]
    static let distanceBases: [Int] = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513,
                                        769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577]

    /// Indexed by match length 0–258 (entries below 3 unused).
    static let lengthCodes: [Extra] = (0...258).map { length in
        guard length >= 3 else { return Extra(symbol: 0, extraBits: 0, extra: 0) }
        let index = lengthBases.lastIndex { $0 <= length } ?? 0
        return Extra(symbol: UInt16(257 + index), extraBits: UInt8(lengthExtraBits[index]),
                     extra: UInt16(length - lengthBases[index]))
    }

    /// The distance symbol and extra bits for a distance 1–32768.
    @inline(__always)
    static func distanceCode(_ distance: Int) -> Extra {
        // Symbols 2k and 2k+1 have k−1 extra bits (k ≥ 1); 0–3 have none.
        guard distance > 4 else { return Extra(symbol: UInt16(distance - 1), extraBits: 0, extra: 0) }
        let value = distance - 1
        let highBit = Int.bitWidth - 1 - value.leadingZeroBitCount       // ≥ 2
        let extraBits = highBit - 1
        let symbol = 2 * highBit + ((value >> extraBits) & 1)
        return Extra(symbol: UInt16(symbol), extraBits: UInt8(extraBits),
                     extra: UInt16(distance - distanceBases[symbol]))
    }

    static func reversed(_ value: UInt32, length: Int) -> UInt32 {
        var result: UInt32 = 0, value = value
        for _ in 0..<length {
            result = result << 1 | (value & 1)
            value >>= 1
        }
        return result
    }
}
