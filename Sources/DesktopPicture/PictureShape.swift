import FerryModel

/// An sRGB colour with straight (not premultiplied) alpha, 0–255 per channel.
struct PictureColor: Hashable {
    var red: UInt8
    var green: UInt8
    var blue: UInt8
    var alpha: UInt8 = 255

    /// `0xRRGGBB` with an alpha.
    init(_ rgb: UInt32, alpha: UInt8 = 255) {
        red = UInt8(truncatingIfNeeded: rgb >> 16)
        green = UInt8(truncatingIfNeeded: rgb >> 8)
        blue = UInt8(truncatingIfNeeded: rgb)
        self.alpha = alpha
    }

    var isOpaque: Bool { alpha == 255 }
}

/// An outline drawn on a rectangle's edge.
struct PictureStroke: Hashable {
    var color: PictureColor
    /// Width in points.
    var width: Double
    /// On and off lengths in points; empty for a solid line.
    var dash: [Double] = []
}

/// One line of text, left-aligned at `x` and centred vertically in `line`.
struct PictureText: Hashable {
    var string: String
    var x: Double
    var line: Rect
    /// The font size in points (the height of a line of capitals is about 0.7 of it).
    var size: Double
    var color: PictureColor
    var bold = false
}

/// A primitive both renderers draw.
enum PictureShape: Hashable {
    case rect(Rect, fill: PictureColor?, stroke: PictureStroke?)
    case text(PictureText)
    /// Connected straight segments with round joins and caps (the stroke's dash is ignored).
    case polyline([Point], stroke: PictureStroke)
    /// A disc of `radius` points around `center`, filled and/or outlined.
    case circle(center: Point, radius: Double, fill: PictureColor?, stroke: PictureStroke?)
    /// A PNG image scaled to fill the rectangle (its aspect is the caller's to keep).
    case image(Rect, png: [UInt8])
}

/// A group of shapes drawn together, optionally clipped (an SVG `<g class="…">`).
struct PictureLayer: Hashable {
    /// The SVG class, e.g. `scene foregroundActive`.
    var kind: String
    /// Clips the layer's text.
    var clip: Rect?
    var shapes: [PictureShape]
}
