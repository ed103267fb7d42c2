import FerryModel

extension DesktopPicture {
    /// The most pixels a PNG may have (about 64 megapixels).
    public static let maximumPixelCount = 1 << 26
    /// The longest side a PNG may have, in pixels.
    public static let maximumSide = 32768

    /// The picture as a PNG file: 8-bit RGB, ``bounds`` scaled by `scale` (at least 1×1 pixel),
    /// drawn with a built-in bitmap font. Deterministic: the same picture gives the same bytes.
    ///
    /// - Parameter scale: pixels per point; 0.5 draws a 1920×1080 screen as 960×540 pixels.
    /// - Throws: `FerryModelError` `.invalidArgument` for a scale that is not a positive finite
    ///   number or a non-finite screen or scene frame; `.tooLarge` when the image would be larger
    ///   than ``maximumSide`` or ``maximumPixelCount``.
    public func png(scale: Double = 0.5) throws(FerryModelError) -> [UInt8] {
        guard scale.isFinite, scale > 0 else {
            throw FerryModelError(.invalidArgument, "the scale must be a positive number, not \(scale)")
        }
        let finite = { (rect: Rect) in
            rect.minX.isFinite && rect.minY.isFinite && rect.size.width.isFinite && rect.size.height.isFinite
        }
        guard screens.allSatisfy(finite), scenes.allSatisfy({ finite($0.frame) }) else {
            throw FerryModelError(.invalidArgument, "a screen or scene frame has a coordinate that is not finite")
        }
        let bounds = self.bounds
        let width = bounds.size.width * scale, height = bounds.size.height * scale
        guard width <= Double(Self.maximumSide), height <= Double(Self.maximumSide),
              width * height <= Double(Self.maximumPixelCount) else {
            throw FerryModelError(.tooLarge, "a \(Self.integerText(width))×\(Self.integerText(height)) pixel "
                + "picture is too large (at most \(Self.maximumSide) pixels a side, \(Self.maximumPixelCount) in all)")
        }
        var raster = Raster(width: max(1, Int(width.rounded())), height: max(1, Int(height.rounded())),
                            color: PictureStyle.background)
        let mapping = PixelMapping(origin: bounds.origin, scale: scale)
        for layer in layers() {
            let clip = layer.clip.map(mapping.box) ?? raster.all
            for shape in layer.shapes {
                switch shape {
                case .rect(let rect, let fill, let stroke):
                    let box = mapping.box(rect)
                    if let fill { raster.fill(box, fill) }
                    if let stroke {
                        let dash = stroke.dash.count >= 2
                            ? (on: max(1, mapping.length(stroke.dash[0])), off: max(1, mapping.length(stroke.dash[1])))
                            : nil
                        raster.outline(box, thickness: max(1, mapping.length(stroke.width)), dash: dash, stroke.color)
                    }
                case .text(let text):
                    let size = max(1, Int((text.size * scale / 9).rounded()))
                    let middle = mapping.y(text.line.midY)
                    let top = middle - (BitmapFont.capitalHeight * size) / 2
                    raster.text(text.string, x: mapping.x(text.x), top: top, size: size,
                                bold: text.bold, clip: clip, text.color)
                case .polyline(let points, let stroke):
                    raster.strokePolyline(points.map(mapping.spot), thickness: max(1, stroke.width * scale), stroke.color)
                case .circle(let center, let radius, let fill, let stroke):
                    // Marks stay visible when the picture is small: at least 2 pixels across.
                    let pixels = max(radius * scale, 2)
                    if let fill { raster.fillDisc(center: mapping.spot(center), radius: pixels, fill) }
                    if let stroke {
                        raster.strokeCircle(center: mapping.spot(center), radius: pixels, thickness: max(1, stroke.width * scale),
                                            stroke.color)
                    }
                case .image(let rect, let png):
                    raster.drawImage(png, in: mapping.box(rect))
                }
            }
        }
        return try PNGEncoder.encode(raster)
    }
}

/// Desktop points to raster pixels: `(value − origin) × scale`, rounded, clamped to a sane range.
struct PixelMapping {
    var origin: Point
    var scale: Double

    func box(_ rect: Rect) -> Raster.Box {
        Raster.Box(x0: Self.pixel((rect.minX - origin.x) * scale), y0: Self.pixel((rect.minY - origin.y) * scale),
                   x1: Self.pixel((rect.maxX - origin.x) * scale), y1: Self.pixel((rect.maxY - origin.y) * scale))
    }

    func x(_ value: Double) -> Int { Self.pixel((value - origin.x) * scale) }

    func y(_ value: Double) -> Int { Self.pixel((value - origin.y) * scale) }

    func length(_ value: Double) -> Int { Self.pixel(value * scale) }

    /// A point in continuous pixel coordinates (not rounded).
    func spot(_ point: Point) -> Raster.Spot {
        Raster.Spot(x: (point.x - origin.x) * scale, y: (point.y - origin.y) * scale)
    }

    /// Rounds to the nearest pixel; non-finite → 0; kept within ±2²⁰ beyond any raster.
    static func pixel(_ value: Double) -> Int {
        guard value.isFinite else { return 0 }
        return Int(min(max(value, -1_048_576), 1_048_576 + 65536).rounded())
    }
}
