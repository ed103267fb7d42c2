@testable import DesktopPicture
import FerryModel
import FerryTestSupport
import Foundation
import Testing

@Suite("DesktopPicture PNG")
struct DesktopPicturePNGTests {
    @Test("signature, then IHDR with the scaled size (8-bit RGB), IDAT, IEND", arguments: [
        (0.5, 1600, 540), (0.25, 800, 270), (1.0, 3200, 1080), (0.1, 320, 108),
    ])
    func structure(scale: Double, width: Int, height: Int) throws {
        let png = try PictureFixtures.twoScreens.png(scale: scale)
        #expect(Array(png.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        let chunks = try PNGChunks(png)
        #expect(chunks.types == ["IHDR", "IDAT", "IEND"])
        let header = try #require(chunks.data(of: "IHDR"))
        #expect(header.count == 13)
        #expect(PNGChunks.uint32(header, at: 0) == UInt32(width))
        #expect(PNGChunks.uint32(header, at: 4) == UInt32(height))
        #expect(Array(header[8...]) == [8, 2, 0, 0, 0])
    }

    @Test("an independent decoder (Python's zlib) finds correct CRCs, a complete stream and the expected colours")
    func decodedByPython() async throws {
        let png = try PictureFixtures.twoScreens.png(scale: 0.5)
        // Desktop points → pixels at scale 0.5.
        let probes: [(name: String, x: Int, y: Int, rgb: UInt32)] = [
            ("outside every screen (below the shorter one)", 1250, 450, 0x1E1E24),
            ("a bare screen", 750, 500, 0x3A4A5C),
            ("the left edge zone of screen 0", 5, 270, blend(0xFFAA00, alpha: 89, over: 0x3A4A5C)),
            ("the right edge zone of screen 1", 1595, 200, blend(0xFFAA00, alpha: 89, over: 0x3A4A5C)),
            ("the foregroundActive scene's interior", 450, 350, 0xFFFFFF),
            ("the foregroundActive scene's title bar", 470, 152, 0x2F6FDF),
            ("the background scene's interior", 100, 250, 0xA9B1BA),
            ("the foregroundInactive scene's interior", 1100, 200, 0xEEF0F2),
            ("the unattached scene's interior (see-through)", 1500, 350, 0x3A4A5C),
            ("the unattached scene's title bar (ghosted)", 1500, 202, blend(0xFFFFFF, alpha: 38, over: 0x3A4A5C)),
            ("the unattached scene's dashed outline: on", 1149, 300, 0x98A4B0),
            ("the unattached scene's dashed outline: off", 1149, 304, 0x3A4A5C),
        ]
        let decoded = try await PythonPNGCheck.run(png, points: probes.map { ($0.x, $0.y) })
        #expect(decoded.width == 1600 && decoded.height == 540)
        #expect(decoded.badCRCs.isEmpty, "chunks with a wrong CRC: \(decoded.badCRCs)")
        #expect(decoded.decompressedLength == (1 + 3 * 1600) * 540)
        for (probe, pixel) in zip(probes, decoded.pixels) {
            #expect(close(pixel, probe.rgb), "\(probe.name) at (\(probe.x), \(probe.y)): \(hex(pixel)), expected \(hex(probe.rgb))")
        }
        // The active scene's title (white on blue) is drawn: its bar holds white pixels.
        #expect(decoded.titleBarWhitePixels > 100)
    }

    @Test("the same picture gives the same bytes; a 1920×1080 desktop at 0.5 stays small")
    func deterministicAndSmall() throws {
        let first = try PictureFixtures.twoScreens.png()
        #expect(first == (try PictureFixtures.twoScreens.png()))
        let single = DesktopPicture(screens: [Rect(x: 0, y: 0, width: 1920, height: 1080)], edgeZone: 24,
                                    scenes: Array(PictureFixtures.twoScreens.scenes.prefix(2)))
        let png = try single.png(scale: 0.5)
        #expect(png.count < 64 * 1024, "\(png.count) bytes for 960×540 pixels (raw: 1.5 MB)")
    }

    @Test("a bad scale or a non-finite frame is a named error; an enormous picture is tooLarge")
    func errors() {
        for scale in [0, -1, Double.nan, Double.infinity] {
            #expect(throws: FerryModelError.self) { try PictureFixtures.twoScreens.png(scale: scale) }
            do {
                _ = try PictureFixtures.twoScreens.png(scale: scale)
            } catch {
                #expect(error.code == .invalidArgument)
            }
        }
        do {
            _ = try PictureFixtures.twoScreens.png(scale: 100)
            Issue.record("a 320000-pixel-wide picture was drawn")
        } catch {
            #expect(error.code == .tooLarge)
        }
        var broken = PictureFixtures.twoScreens
        broken.scenes[0].frame.origin.x = .nan
        do {
            _ = try broken.png()
            Issue.record("a NaN frame was drawn")
        } catch {
            #expect(error.code == .invalidArgument)
        }
        #expect(broken.svg().contains("<svg"), "the SVG still draws (a NaN coordinate as 0)")
    }

    @Test("an empty desktop is a 1×1 picture; odd characters in titles draw")
    func edgeCases() throws {
        let empty = DesktopPicture(screens: [], edgeZone: 24, scenes: [])
        let chunks = try PNGChunks(try empty.png(scale: 0.5))
        let header = try #require(chunks.data(of: "IHDR"))
        #expect(PNGChunks.uint32(header, at: 0) == 1 && PNGChunks.uint32(header, at: 4) == 1)
        let odd = DesktopPicture(screens: PictureFixtures.screens, edgeZone: 5000, scenes: [
            .init(frame: Rect(x: -50, y: -50, width: 4000, height: 3), appName: "🚀 app", title: "naïve — ünïcödé\u{0}\t",
                  configuration: "日本", state: .foregroundActive),
        ])
        #expect(try odd.png(scale: 0.25).count > 100)
    }

    @Test("a dashed outline far larger than the raster keeps its phase and draws only what shows")
    func hugeDashedOutlines() throws {
        var raster = Raster(width: 100, height: 20, color: PictureColor(0x000000))
        raster.outline(Raster.Box(x0: -1003, y0: 5, x1: 90, y1: 15), thickness: 1, dash: (on: 3, off: 4), PictureColor(0xFFFFFF))
        // The top band is row 4 from x = -1004: a pixel is set where (x + 1004) mod 7 < 3.
        for x in 0..<91 {
            #expect((raster.rgb(x: x, y: 4) == 0xFFFFFF) == ((x + 1004) % 7 < 3), "x = \(x)")
        }
        #expect(raster.rgb(x: 95, y: 4) == 0, "nothing past the right edge")

        // Two hundred unattached (dashed) scenes ten million points a side, as an app may ask
        // for: drawn in about the time of small ones, not one dash at a time across them.
        let scenes = (0..<200).map { i in
            DesktopPicture.Scene(frame: Rect(x: -5_000_000 + Double(i), y: -5_000_000, width: 10_000_000, height: 10_000_000),
                                 appName: "app", title: "huge", configuration: "Default", state: .unattached)
        }
        let picture = DesktopPicture(screens: [Rect(x: 0, y: 0, width: 1920, height: 1080)], edgeZone: 24, scenes: scenes)
        let start = ContinuousClock.now
        _ = try picture.png()
        let elapsed = ContinuousClock.now - start
        #expect(elapsed < .seconds(5), "\(elapsed) (before clipping the dashes: about 17 s)")
    }

    private func blend(_ source: UInt32, alpha: UInt32, over destination: UInt32) -> UInt32 {
        var result: UInt32 = 0
        for shift: UInt32 in [16, 8, 0] {
            let s = (source >> shift) & 0xFF, d = (destination >> shift) & 0xFF
            result |= ((s * alpha + d * (255 - alpha) + 127) / 255) << shift
        }
        return result
    }

    /// Each channel within 1 (rounding).
    private func close(_ a: UInt32, _ b: UInt32) -> Bool {
        [16, 8, 0].allSatisfy { shift in abs(Int((a >> UInt32(shift)) & 0xFF) - Int((b >> UInt32(shift)) & 0xFF)) <= 1 }
    }

    private func hex(_ rgb: UInt32) -> String { String(rgb, radix: 16) }
}

/// A PNG's chunks, read without checking CRCs (Python does that independently).
struct PNGChunks {
    var chunks: [(type: String, data: [UInt8])] = []
    var types: [String] { chunks.map(\.type) }

    struct Malformed: Error {}

    init(_ png: [UInt8]) throws {
        var offset = 8
        while offset < png.count {
            guard offset + 12 <= png.count else { throw Malformed() }
            let length = Int(Self.uint32(png, at: offset))
            guard offset + 12 + length <= png.count else { throw Malformed() }
            let type = String(decoding: png[(offset + 4)..<(offset + 8)], as: UTF8.self)
            chunks.append((type, Array(png[(offset + 8)..<(offset + 8 + length)])))
            offset += 12 + length
        }
    }

    func data(of type: String) -> [UInt8]? { chunks.first { $0.type == type }?.data }

    static func uint32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | UInt32($1) }
    }
}

/// Decodes a PNG with `/usr/bin/python3`'s zlib (CRC-32 and inflate not ours): checks every
/// chunk's CRC, inflates the IDATs, undoes the row filters and reads pixels.
enum PythonPNGCheck {
    struct Result: Decodable {
        var width: Int
        var height: Int
        var badCRCs: [String]
        var decompressedLength: Int
        var pixels: [UInt32]
        var titleBarWhitePixels: Int
    }

    struct Failure: Error, CustomStringConvertible { var description: String }

    static let script = #"""
    import json, struct, sys, zlib
    data = sys.stdin.buffer.read()
    assert data[:8] == b'\x89PNG\r\n\x1a\n', 'signature'
    offset, idat, bad = 8, b'', []
    while offset < len(data):
        length, = struct.unpack('>I', data[offset:offset + 4])
        kind = data[offset + 4:offset + 8]
        body = data[offset + 8:offset + 8 + length]
        crc, = struct.unpack('>I', data[offset + 8 + length:offset + 12 + length])
        if zlib.crc32(kind + body) & 0xffffffff != crc:
            bad.append(kind.decode())
        if kind == b'IHDR':
            width, height = struct.unpack('>II', body[:8])
        if kind == b'IDAT':
            idat += body
        offset += 12 + length
    raw = zlib.decompress(idat)
    stride = 3 * width
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - 3] if i >= 3 else 0
            b = previous[i]
            c = previous[i - 3] if i >= 3 else 0
            if kind == 1: line[i] = (line[i] + a) & 255
            elif kind == 2: line[i] = (line[i] + b) & 255
            elif kind == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            else: assert kind == 0, 'filter %d' % kind
        rows.append(line)
        previous = line
    def rgb(x, y):
        r, g, b = rows[y][3 * x:3 * x + 3]
        return r << 16 | g << 8 | b
    points = [tuple(map(int, p.split(','))) for p in sys.argv[1:]]
    white = sum(1 for y in range(150, 162) for x in range(202, 680) if rgb(x, y) == 0xffffff)
    print(json.dumps({'width': width, 'height': height, 'badCRCs': bad, 'decompressedLength': len(raw),
                      'pixels': [rgb(x, y) for x, y in points], 'titleBarWhitePixels': white}))
    """#

    static func run(_ png: [UInt8], points: [(Int, Int)]) async throws -> Result {
        let result = try await ChildProcess.run("/usr/bin/python3", ["-c", script] + points.map { "\($0.0),\($0.1)" },
                                                standardInput: Data(png))
        guard result.succeeded else {
            throw Failure(description: "python3 failed: \(result.stderr)")
        }
        return try JSONDecoder().decode(Result.self, from: result.standardOutput)
    }
}
