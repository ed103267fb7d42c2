/// An image's width and height in pixels, read from its header without decoding it (what
/// `ferry history` shows beside an image's size).
///
/// Known headers: PNG (IHDR), GIF (logical screen), JPEG (the first start-of-frame marker),
/// BMP (BITMAPINFOHEADER and later; a negative height means top-down rows) and WebP (VP8, VP8L,
/// VP8X). Anything else, a truncated header, or a zero dimension gives nil: an unknown size
/// is shown as unknown, never guessed.
public struct ImageDimensions: Sendable, Hashable {
    /// Width in pixels (at least 1).
    public var width: Int
    /// Height in pixels (at least 1).
    public var height: Int

    /// Makes dimensions from known values.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// The dimensions in the header at the start of `bytes` (the first 64 KiB are plenty for
    /// every format here but a JPEG with large metadata before its frame), or nil.
    public init?(header bytes: some Collection<UInt8>) {
        let header = HeaderBytes(Array(bytes))
        guard let found = Self.png(header) ?? Self.gif(header) ?? Self.jpeg(header)
                ?? Self.bmp(header) ?? Self.webp(header),
              found.width > 0, found.height > 0 else { return nil }
        self = found
    }

    private static func png(_ h: HeaderBytes) -> ImageDimensions? {
        guard h.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]),
              h.starts(with: Array("IHDR".utf8), at: 12),
              let width = h.bigEndian(at: 16, size: 4), let height = h.bigEndian(at: 20, size: 4)
        else { return nil }
        return ImageDimensions(width: width, height: height)
    }

    private static func gif(_ h: HeaderBytes) -> ImageDimensions? {
        guard h.starts(with: Array("GIF87a".utf8)) || h.starts(with: Array("GIF89a".utf8)),
              let width = h.littleEndian(at: 6, size: 2), let height = h.littleEndian(at: 8, size: 2)
        else { return nil }
        return ImageDimensions(width: width, height: height)
    }

    /// Walks the marker segments to the first SOFn (C0–CF but C4 DHT, C8 JPG, CC DAC).
    private static func jpeg(_ h: HeaderBytes) -> ImageDimensions? {
        guard h.starts(with: [0xFF, 0xD8]) else { return nil }
        var offset = 2
        while let mark = h.byte(at: offset), mark == 0xFF, let marker = h.byte(at: offset + 1) {
            if marker == 0xFF { offset += 1; continue }  // fill byte
            if marker == 0x01 || (0xD0...0xD7).contains(marker) { offset += 2; continue }  // no length
            guard let length = h.bigEndian(at: offset + 2, size: 2), length >= 2 else { return nil }
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                guard let height = h.bigEndian(at: offset + 5, size: 2),
                      let width = h.bigEndian(at: offset + 7, size: 2) else { return nil }
                return ImageDimensions(width: width, height: height)
            }
            if marker == 0xDA || marker == 0xD9 { return nil }  // scan data or the end before a frame
            offset += 2 + length
        }
        return nil
    }

    private static func bmp(_ h: HeaderBytes) -> ImageDimensions? {
        guard h.starts(with: Array("BM".utf8)), let infoSize = h.littleEndian(at: 14, size: 4), infoSize >= 40,
              let width = h.littleEndian(at: 18, size: 4), let rawHeight = h.littleEndian(at: 22, size: 4)
        else { return nil }
        let signedWidth = Int(Int32(truncatingIfNeeded: UInt32(width)))
        let signedHeight = Int(Int32(truncatingIfNeeded: UInt32(rawHeight)))
        return ImageDimensions(width: signedWidth, height: abs(signedHeight))
    }

    private static func webp(_ h: HeaderBytes) -> ImageDimensions? {
        guard h.starts(with: Array("RIFF".utf8)), h.starts(with: Array("WEBP".utf8), at: 8) else { return nil }
        if h.starts(with: Array("VP8 ".utf8), at: 12) {
            // Key frame: start code 9D 01 2A at 23, then 14-bit width and height.
            guard h.starts(with: [0x9D, 0x01, 0x2A], at: 23),
                  let width = h.littleEndian(at: 26, size: 2), let height = h.littleEndian(at: 28, size: 2)
            else { return nil }
            return ImageDimensions(width: width & 0x3FFF, height: height & 0x3FFF)
        }
        if h.starts(with: Array("VP8L".utf8), at: 12) {
            // Signature 2F, then 14 bits width − 1 and 14 bits height − 1.
            guard h.byte(at: 20) == 0x2F, let bits = h.littleEndian(at: 21, size: 4) else { return nil }
            return ImageDimensions(width: (bits & 0x3FFF) + 1, height: ((bits >> 14) & 0x3FFF) + 1)
        }
        if h.starts(with: Array("VP8X".utf8), at: 12) {
            // 24-bit canvas width − 1 and height − 1 at 24 and 27.
            guard let width = h.littleEndian(at: 24, size: 3), let height = h.littleEndian(at: 27, size: 3)
            else { return nil }
            return ImageDimensions(width: width + 1, height: height + 1)
        }
        return nil
    }
}

/// Bounds-checked reads from the start of a file.
private struct HeaderBytes {
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func byte(at offset: Int) -> UInt8? {
        offset >= 0 && offset < bytes.count ? bytes[offset] : nil
    }

    func starts(with prefix: [UInt8], at offset: Int = 0) -> Bool {
        offset >= 0 && offset + prefix.count <= bytes.count && Array(bytes[offset..<offset + prefix.count]) == prefix
    }

    func bigEndian(at offset: Int, size: Int) -> Int? {
        guard offset >= 0, offset + size <= bytes.count else { return nil }
        return bytes[offset..<offset + size].reduce(0) { $0 << 8 | Int($1) }
    }

    func littleEndian(at offset: Int, size: Int) -> Int? {
        guard offset >= 0, offset + size <= bytes.count else { return nil }
        return bytes[offset..<offset + size].reversed().reduce(0) { $0 << 8 | Int($1) }
    }
}
