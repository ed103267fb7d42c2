/// An RGB raster being painted: opaque pixels, filled rectangles (opaque or alpha-blended),
/// outlines, and text in the ``BitmapFont``.
struct Raster {
    let width: Int
    let height: Int
    /// Row-major pixels, `0x00BBGGRR` (red in the low byte).
    var pixels: [UInt32]

    /// A raster filled with one colour (its alpha ignored).
    init(width: Int, height: Int, color: PictureColor) {
        self.width = width
        self.height = height
        pixels = [UInt32](repeating: Raster.packed(color), count: width * height)
    }

    /// A pixel's colour, `0xRRGGBB`.
    func rgb(x: Int, y: Int) -> UInt32 {
        let pixel = pixels[y * width + x]
        return (pixel & 0xFF) << 16 | (pixel & 0xFF00) | (pixel >> 16) & 0xFF
    }

    static func packed(_ color: PictureColor) -> UInt32 {
        UInt32(color.red) | UInt32(color.green) << 8 | UInt32(color.blue) << 16
    }

    /// A rectangle of whole pixels, half-open, already inside the raster.
    struct Box {
        var x0: Int, y0: Int, x1: Int, y1: Int
        var isEmpty: Bool { x0 >= x1 || y0 >= y1 }

        func intersection(_ other: Box) -> Box {
            Box(x0: max(x0, other.x0), y0: max(y0, other.y0), x1: min(x1, other.x1), y1: min(y1, other.y1))
        }
    }

    var all: Box { Box(x0: 0, y0: 0, x1: width, y1: height) }

    /// Fills `box` (clipped to the raster) with `color`, blending when it is translucent.
    mutating func fill(_ box: Box, _ color: PictureColor) {
        let box = box.intersection(all)
        guard !box.isEmpty, color.alpha > 0 else { return }
        let source = Raster.packed(color)
        let width = self.width
        pixels.withUnsafeMutableBufferPointer { buffer in
            if color.isOpaque {
                for y in box.y0..<box.y1 {
                    let row = y * width
                    UnsafeMutableBufferPointer(rebasing: buffer[(row + box.x0)..<(row + box.x1)]).update(repeating: source)
                }
                return
            }
            // Red and blue in two 16-bit lanes of one word, green alone: out = (s·a + d·(255−a)) / 255.
            let alpha = UInt32(color.alpha), inverse = 255 - alpha
            let sourceRB = (source & 0x00FF00FF) &* alpha, sourceG = (source & 0x0000FF00) &* alpha
            // Runs of one colour are the rule here: blend each new colour once.
            var lastPixel: UInt32 = 0xFFFF_FFFF, lastResult: UInt32 = 0   // no pixel has a high byte
            for y in box.y0..<box.y1 {
                let row = y * width
                for index in (row + box.x0)..<(row + box.x1) {
                    let pixel = buffer[index]
                    if pixel != lastPixel {
                        var rb = sourceRB &+ (pixel & 0x00FF00FF) &* inverse &+ 0x00800080
                        rb = ((rb &+ ((rb >> 8) & 0x00FF00FF)) >> 8) & 0x00FF00FF
                        var g = sourceG &+ (pixel & 0x0000FF00) &* inverse &+ 0x00008000
                        g = ((g &+ ((g >> 8) & 0x0000FF00)) >> 8) & 0x0000FF00
                        lastPixel = pixel
                        lastResult = rb | g
                    }
                    buffer[index] = lastResult
                }
            }
        }
    }

    /// Draws an outline `thickness` pixels wide centred on `box`'s edges; dashed when `dash` (on,
    /// off lengths in pixels) is given, each edge's pattern starting at its corner.
    mutating func outline(_ box: Box, thickness: Int, dash: (on: Int, off: Int)?, _ color: PictureColor) {
        let thickness = max(1, thickness)
        let inner = thickness / 2, outer = thickness - inner
        let x0 = box.x0 - outer, x1 = box.x1 + outer, y0 = box.y0 - outer, y1 = box.y1 + outer
        // Top and bottom bands span the full outer width; left and right the height between them.
        let horizontal = [Box(x0: x0, y0: y0, x1: x1, y1: box.y0 + inner),
                          Box(x0: x0, y0: box.y1 - inner, x1: x1, y1: y1)]
        let vertical = [Box(x0: x0, y0: box.y0 + inner, x1: box.x0 + inner, y1: box.y1 - inner),
                        Box(x0: box.x1 - inner, y0: box.y0 + inner, x1: x1, y1: box.y1 - inner)]
        guard let dash, dash.on > 0 else {
            for band in horizontal + vertical { fill(band, color) }
            return
        }
        let period = dash.on + max(dash.off, 0)
        // Only the dashes over the raster are drawn: whole periods before it are skipped (the
        // pattern keeps its phase), so a huge frame costs no more than one the raster's size.
        func firstDash(from origin: Int) -> Int { origin >= 0 ? origin : origin + (-origin) / period * period }
        for band in horizontal {
            var start = firstDash(from: band.x0)
            while start < min(band.x1, width) {
                fill(Box(x0: start, y0: band.y0, x1: min(start + dash.on, band.x1), y1: band.y1), color)
                start += period
            }
        }
        for band in vertical {
            var start = firstDash(from: band.y0)
            while start < min(band.y1, height) {
                fill(Box(x0: band.x0, y0: start, x1: band.x1, y1: min(start + dash.on, band.y1)), color)
                start += period
            }
        }
    }

    /// Draws one line of text with its capitals' top-left corner at (`x`, `top`), each font pixel
    /// `size` raster pixels square, clipped to `clip`.
    mutating func text(_ string: String, x: Int, top: Int, size: Int, bold: Bool, clip: Box, _ color: PictureColor) {
        let clip = clip.intersection(all)
        guard !clip.isEmpty, size > 0 else { return }
        let cell = BitmapFont.cellWidth * size
        var left = x
        for character in string {
            if left >= clip.x1 { break }
            if left + cell + size > clip.x0 {
                let glyph = BitmapFont.glyph(for: character)
                let columns = glyph == BitmapFont.emDash ? BitmapFont.cellWidth : BitmapFont.glyphWidth
                for row in 0..<BitmapFont.glyphHeight {
                    for column in 0..<columns {
                        let set = glyph == BitmapFont.emDash ? row == 3 : BitmapFont.isSet(glyph, column: column, row: row)
                        guard set else { continue }
                        let px = left + column * size, py = top + row * size
                        fill(Box(x0: px, y0: py, x1: px + size + (bold ? size : 0), y1: py + size).intersection(clip), color)
                    }
                }
            }
            left += cell
        }
    }
}
