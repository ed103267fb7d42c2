import FerryModel
import Testing

/// Reading an image's pixel size from its header (`ferry history`'s image rows).
@Suite("ImageDimensions: pixel size from the header")
struct ImageDimensionsTests {
    static func be(_ value: Int, _ size: Int) -> [UInt8] {
        (0..<size).reversed().map { UInt8((value >> ($0 * 8)) & 0xFF) }
    }

    static func le(_ value: Int, _ size: Int) -> [UInt8] {
        Array(be(value, size).reversed())
    }

    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + be(13, 4) + Array("IHDR".utf8)
        + be(1920, 4) + be(1080, 4) + [8, 6, 0, 0, 0]
    static let gif: [UInt8] = Array("GIF89a".utf8) + le(320, 2) + le(200, 2) + [0xF7, 0, 0]
    /// SOI, an APP0 segment of 16 bytes, a DQT of 4, then SOF2 (progressive) with 480 × 640.
    static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + be(16, 2) + Array(repeating: 0, count: 14)
        + [0xFF, 0xDB] + be(4, 2) + [0, 0] + [0xFF, 0xC2] + be(17, 2) + [8] + be(480, 2) + be(640, 2) + [3]
    static let bmp: [UInt8] = Array("BM".utf8) + le(0, 4) + le(0, 4) + le(54, 4) + le(40, 4)
        + le(100, 4) + le(Int(UInt32(bitPattern: -50)), 4) + le(1, 2) + le(24, 2)
    static let webpLossless: [UInt8] = Array("RIFF".utf8) + le(0, 4) + Array("WEBPVP8L".utf8) + le(0, 4)
        + [0x2F] + le((799) | (599 << 14), 4)
    static let webpExtended: [UInt8] = Array("RIFF".utf8) + le(0, 4) + Array("WEBPVP8X".utf8) + le(10, 4)
        + [0, 0, 0, 0] + le(4095, 3) + le(2159, 3)
    static let webpLossy: [UInt8] = Array("RIFF".utf8) + le(0, 4) + Array("WEBPVP8 ".utf8) + le(0, 4)
        + [0, 0, 0] + [0x9D, 0x01, 0x2A] + le(64, 2) + le(48, 2)

    @Test("each known format gives the size its header states")
    func formats() {
        #expect(ImageDimensions(header: Self.png) == ImageDimensions(width: 1920, height: 1080))
        #expect(ImageDimensions(header: Self.gif) == ImageDimensions(width: 320, height: 200))
        #expect(ImageDimensions(header: Self.jpeg) == ImageDimensions(width: 640, height: 480))
        #expect(ImageDimensions(header: Self.bmp) == ImageDimensions(width: 100, height: 50), "top-down rows")
        #expect(ImageDimensions(header: Self.webpLossless) == ImageDimensions(width: 800, height: 600))
        #expect(ImageDimensions(header: Self.webpExtended) == ImageDimensions(width: 4096, height: 2160))
        #expect(ImageDimensions(header: Self.webpLossy) == ImageDimensions(width: 64, height: 48))
    }

    @Test("every truncation of every header gives nil, never a wrong size or a crash")
    func truncated() {
        for header in [Self.png, Self.gif, Self.jpeg, Self.bmp, Self.webpLossless, Self.webpExtended, Self.webpLossy] {
            let full = ImageDimensions(header: header)
            for length in 0..<header.count {
                let found = ImageDimensions(header: header.prefix(length))
                #expect(found == nil || found == full, "\(length) of \(header.count) bytes")
            }
        }
        #expect(ImageDimensions(header: Self.png.prefix(23)) == nil)
        #expect(ImageDimensions(header: Self.jpeg.prefix(Self.jpeg.count - 3)) == nil)
    }

    @Test("text, a zero width and a JPEG whose scan starts before any frame give nil")
    func notImages() {
        #expect(ImageDimensions(header: Array("hello, world".utf8)) == nil)
        #expect(ImageDimensions(header: [UInt8]()) == nil)
        var zero = Self.png
        zero.replaceSubrange(16..<20, with: Self.be(0, 4))
        #expect(ImageDimensions(header: zero) == nil)
        let scanFirst: [UInt8] = [0xFF, 0xD8, 0xFF, 0xDA] + Self.be(8, 2) + Array(repeating: 0, count: 6)
            + [0xFF, 0xC0] + Self.be(17, 2) + [8] + Self.be(10, 2) + Self.be(10, 2)
        #expect(ImageDimensions(header: scanFirst) == nil)
        let endless: [UInt8] = [0xFF, 0xD8] + Array(repeating: 0xFF, count: 1000)
        #expect(ImageDimensions(header: endless) == nil, "fill bytes to the end")
    }
}
