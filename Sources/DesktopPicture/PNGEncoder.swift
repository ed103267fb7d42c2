import FerryModel

/// Writes a truecolour PNG (ISO/IEC 15948): 8-bit RGB, no interlace, filter type 0 ("None") on
/// every row, one IDAT chunk holding a stream of the system zlib (``Zlib``).
enum PNGEncoder {
    /// Encodes `raster` as a PNG file.
    /// - Throws: `FerryModelError` `.io` when zlib cannot compress it.
    static func encode(_ raster: Raster) throws(FerryModelError) -> [UInt8] {
        let rowLength = 1 + 3 * raster.width
        var scanlines = [UInt8](repeating: 0, count: rowLength * raster.height)
        scanlines.withUnsafeMutableBytes { out in
            raster.pixels.withUnsafeBytes { pixels in
                // Pixels are 0x00BBGGRR words: in memory (little-endian) R, G, B, 0.
                guard var target = out.baseAddress?.assumingMemoryBound(to: UInt8.self),
                      var source = pixels.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
                for _ in 0..<raster.height {
                    target.pointee = 0      // filter: None
                    target += 1
                    for _ in 0..<raster.width {
                        #if _endian(little)
                        target.update(from: source, count: 3)
                        #else
                        target[0] = source[3]; target[1] = source[2]; target[2] = source[1]
                        #endif
                        target += 3
                        source += 4
                    }
                }
            }
        }
        var header: [UInt8] = []
        append(UInt32(raster.width), to: &header)
        append(UInt32(raster.height), to: &header)
        header += [8, 2, 0, 0, 0]   // bit depth 8, colour type 2 (RGB), deflate, adaptive filtering, no interlace

        var file = PNGChunks.signature
        appendChunk("IHDR", header, to: &file)
        appendChunk("IDAT", try Zlib.compress(scanlines), to: &file)
        appendChunk("IEND", [], to: &file)
        return file
    }

    private static func appendChunk(_ type: String, _ data: [UInt8], to file: inout [UInt8]) {
        append(UInt32(data.count), to: &file)
        let typeAndData = Array(type.utf8) + data
        file += typeAndData
        append(Zlib.crc32(typeAndData), to: &file)
    }

    private static func append(_ value: UInt32, to bytes: inout [UInt8]) {
        bytes += [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}
