import FerryModel
import FerryTestSupport
import Foundation
import Testing

/// Walking a PNG's chunks (drag previews are checked with it, `ferry desktop` decodes with it).
@Suite("PNGChunks: a PNG's framing")
struct PNGChunksTests {
    static func chunk(_ type: String, _ body: [UInt8]) -> [UInt8] {
        let length = body.count
        return [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
            + Array(type.utf8) + body + [0, 0, 0, 0]
    }

    static let header = chunk("IHDR", [0, 0, 0, 2, 0, 0, 0, 3, 8, 6, 0, 0, 0])
    static let file = PNGChunks.signature + header + chunk("IDAT", [1, 2, 3]) + chunk("IDAT", [4]) + chunk("IEND", [])

    @Test("the chunks of a real PNG and of a made one, in order, with their bodies")
    func chunks() throws {
        let sample = try Data(contentsOf: TestPaths.fixtures.appendingPathComponent("Payloads/sample.png"))
        let types = try PNGChunks([UInt8](sample)).chunks.map(\.type)
        #expect(types.first == "IHDR" && types.last == "IEND" && types.contains("IDAT"))
        let made = try PNGChunks(Self.file).chunks
        #expect(made.map(\.type) == ["IHDR", "IDAT", "IDAT", "IEND"])
        #expect(made.map { Array($0.body) } == [Array(Self.header[8..<21]), [1, 2, 3], [4], []])
        #expect(PNGChunks.bigEndian(made[0].body.prefix(4)) == 2)
    }

    @Test("malformed framing is named: no signature, cut short, past the end, no IEND, bytes after IEND")
    func malformed() {
        let cases: [([UInt8], String)] = [
            (Array("GIF89a".utf8), "it does not start with the PNG signature"),
            (Array(Self.file.prefix(8 + 25 + 5)), "a chunk is cut short at byte 33"),
            (PNGChunks.signature + Self.header + [0, 0, 1, 0] + Array("IDAT".utf8) + [1, 2, 3, 4, 5, 6, 7, 8], "chunk IDAT runs past the end"),
            (PNGChunks.signature + Self.header, "it has no IEND chunk"),
            (Self.file + [0], "there are bytes after its IEND chunk"),
        ]
        for (bytes, why) in cases {
            #expect(throws: PNGChunks.Malformed.self) { try PNGChunks(bytes) }
            do {
                _ = try PNGChunks(bytes)
            } catch {
                #expect(error.description == why)
            }
        }
    }
}
