import FerryModel

/// A drag preview's PNG painted into the raster.
///
/// The previews ferryd passes on are checked PNGs of at most 1024 pixels a side; this decodes
/// the common kind — 8 bits per sample, not interlaced, any colour type — and scales it into
/// its box by nearest neighbour, blending by its alpha. Another kind (16-bit, fewer than 8 bits,
/// Adam7), or bytes that do not decode, draw the box as a plain placeholder.
extension Raster {
    /// Draws `png` stretched to `box` (clipped to the raster).
    mutating func drawImage(_ png: [UInt8], in box: Box) {
        let target = box.intersection(all)
        guard !target.isEmpty else { return }
        guard let image = DecodedImage(png: png) else {
            fill(box, PictureStyle.previewImagePlaceholder)
            return
        }
        let boxWidth = box.x1 - box.x0, boxHeight = box.y1 - box.y0
        for y in target.y0..<target.y1 {
            let sourceY = min(image.height - 1, (y - box.y0) * image.height / boxHeight)
            for x in target.x0..<target.x1 {
                let sourceX = min(image.width - 1, (x - box.x0) * image.width / boxWidth)
                let rgba = image.pixels[sourceY * image.width + sourceX]
                let alpha = UInt32(rgba >> 24)
                guard alpha > 0 else { continue }
                let index = y * width + x
                let destination = pixels[index]
                var mixed: UInt32 = 0
                for shift in [UInt32(0), 8, 16] {
                    let source = (rgba >> shift) & 0xFF, under = (destination >> shift) & 0xFF
                    mixed |= ((source * alpha + under * (255 - alpha) + 127) / 255) << shift
                }
                pixels[index] = mixed
            }
        }
    }
}

/// A PNG decoded to straight-alpha pixels, `0xAABBGGRR` (red in the low byte, as the raster).
struct DecodedImage {
    let width: Int
    let height: Int
    let pixels: [UInt32]

    /// Decodes an 8-bit, non-interlaced PNG; nil for anything else or anything malformed.
    init?(png bytes: [UInt8]) {
        guard let file = try? PNGChunks(bytes) else { return nil }
        var header: [UInt8] = [], palette: [UInt8] = [], transparency: [UInt8] = [], data: [UInt8] = []
        for chunk in file.chunks {
            switch chunk.type {
            case "IHDR": header = Array(chunk.body)
            case "PLTE": palette = Array(chunk.body)
            case "tRNS": transparency = Array(chunk.body)
            case "IDAT": data += chunk.body
            default: break
            }
        }
        guard header.count == 13 else { return nil }
        let width = PNGChunks.bigEndian(header[0..<4]), height = PNGChunks.bigEndian(header[4..<8])
        let depth = header[8], colorType = header[9], interlace = header[12]
        let channels: Int
        switch colorType {
        case 0, 3: channels = 1
        case 2: channels = 3
        case 4: channels = 2
        case 6: channels = 4
        default: return nil
        }
        guard depth == 8, interlace == 0, (1...4096).contains(width), (1...4096).contains(height),
              colorType != 3 || !palette.isEmpty else { return nil }
        let stride = width * channels
        guard let raw = Zlib.uncompress(data, size: height * (stride + 1)),
              let rows = Self.unfiltered(raw, stride: stride, height: height, bytesPerPixel: channels) else { return nil }
        var pixels = [UInt32](repeating: 0, count: width * height)
        for index in 0..<(width * height) {
            let base = index * channels
            let (red, green, blue, alpha): (UInt8, UInt8, UInt8, UInt8)
            switch colorType {
            case 0:
                let gray = rows[base]
                (red, green, blue, alpha) = (gray, gray, gray, 255)
            case 2: (red, green, blue, alpha) = (rows[base], rows[base + 1], rows[base + 2], 255)
            case 3:
                let entry = Int(rows[base])
                guard entry * 3 + 2 < palette.count else { return nil }
                let opacity = entry < transparency.count ? transparency[entry] : 255
                (red, green, blue, alpha) = (palette[entry * 3], palette[entry * 3 + 1], palette[entry * 3 + 2], opacity)
            case 4: (red, green, blue, alpha) = (rows[base], rows[base], rows[base], rows[base + 1])
            default: (red, green, blue, alpha) = (rows[base], rows[base + 1], rows[base + 2], rows[base + 3])
            }
            pixels[index] = UInt32(red) | UInt32(green) << 8 | UInt32(blue) << 16 | UInt32(alpha) << 24
        }
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// The scanlines with their filters undone (PNG's None, Sub, Up, Average, Paeth), filter
    /// bytes dropped; nil for an unknown filter.
    private static func unfiltered(_ raw: [UInt8], stride: Int, height: Int, bytesPerPixel: Int) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: stride * height)
        for row in 0..<height {
            let filter = raw[row * (stride + 1)]
            let input = row * (stride + 1) + 1, output = row * stride
            for column in 0..<stride {
                let value = raw[input + column]
                let left = column >= bytesPerPixel ? Int(out[output + column - bytesPerPixel]) : 0
                let up = row > 0 ? Int(out[output - stride + column]) : 0
                let upLeft = row > 0 && column >= bytesPerPixel ? Int(out[output - stride + column - bytesPerPixel]) : 0
                let predicted: Int
                switch filter {
                case 0: predicted = 0
                case 1: predicted = left
                case 2: predicted = up
                case 3: predicted = (left + up) / 2
                case 4:
                    let estimate = left + up - upLeft
                    let toLeft = abs(estimate - left), toUp = abs(estimate - up), toUpLeft = abs(estimate - upLeft)
                    predicted = toLeft <= toUp && toLeft <= toUpLeft ? left : toUp <= toUpLeft ? up : upLeft
                default: return nil
                }
                out[output + column] = value &+ UInt8(truncatingIfNeeded: predicted)
            }
        }
        return out
    }
}
