#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FerryModel

extension DesktopPicture {
    /// The picture as an SVG 1.1 document: deterministic (the same picture gives the same bytes),
    /// every text XML-escaped, the view box covering ``bounds`` in desktop coordinates.
    public func svg() -> String {
        let bounds = self.bounds
        let layers = self.layers()
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\""
        out += " width=\"\(Self.number(bounds.size.width))\" height=\"\(Self.number(bounds.size.height))\""
        out += " viewBox=\"\(Self.number(bounds.minX)) \(Self.number(bounds.minY)) "
        out += "\(Self.number(bounds.size.width)) \(Self.number(bounds.size.height))\">\n"
        out += "<title>Ferry desktop: \(screens.count) screen\(screens.count == 1 ? "" : "s"), "
        out += "\(scenes.count) scene\(scenes.count == 1 ? "" : "s")"
        if let drag { out += ", the last drag (\(drag.steps.count) step\(drag.steps.count == 1 ? "" : "s"))" }
        out += "</title>\n"

        let clipped = layers.indices.filter { layers[$0].clip != nil }
        if !clipped.isEmpty {
            out += "<defs>\n"
            for index in clipped {
                guard let clip = layers[index].clip else { continue }
                out += "<clipPath id=\"clip\(index)\"><rect" + Self.geometry(clip) + "/></clipPath>\n"
            }
            out += "</defs>\n"
        }
        for (index, layer) in layers.enumerated() {
            out += "<g class=\"\(Self.escaped(layer.kind))\">\n"
            for shape in layer.shapes {
                switch shape {
                case .rect(let rect, let fill, let stroke):
                    out += Self.rectElement(rect, fill: fill, stroke: stroke) + "\n"
                case .text(let text):
                    out += Self.textElement(text, clipID: layer.clip == nil ? nil : "clip\(index)") + "\n"
                case .polyline(let points, let stroke):
                    out += Self.polylineElement(points, stroke: stroke) + "\n"
                case .circle(let center, let radius, let fill, let stroke):
                    out += Self.circleElement(center: center, radius: radius, fill: fill, stroke: stroke) + "\n"
                case .image(let rect, let png):
                    out += Self.imageElement(rect, png: png) + "\n"
                }
            }
            out += "</g>\n"
        }
        out += "</svg>\n"
        return out
    }

    private static func rectElement(_ rect: Rect, fill: PictureColor?, stroke: PictureStroke?) -> String {
        var element = "<rect" + geometry(rect) + paint(fill, attribute: "fill")
        if let stroke {
            element += paint(stroke.color, attribute: "stroke") + " stroke-width=\"\(number(stroke.width))\""
            if !stroke.dash.isEmpty {
                element += " stroke-dasharray=\"\(stroke.dash.map(number).joined(separator: " "))\""
            }
        }
        return element + "/>"
    }

    private static func polylineElement(_ points: [Point], stroke: PictureStroke) -> String {
        let list = points.map { "\(number($0.x)),\(number($0.y))" }.joined(separator: " ")
        return "<polyline points=\"\(list)\" fill=\"none\"" + paint(stroke.color, attribute: "stroke")
            + " stroke-width=\"\(number(stroke.width))\" stroke-linejoin=\"round\" stroke-linecap=\"round\"/>"
    }

    private static func circleElement(center: Point, radius: Double, fill: PictureColor?, stroke: PictureStroke?) -> String {
        var element = "<circle cx=\"\(number(center.x))\" cy=\"\(number(center.y))\" r=\"\(number(max(radius, 0)))\""
        element += paint(fill, attribute: "fill")
        if let stroke { element += paint(stroke.color, attribute: "stroke") + " stroke-width=\"\(number(stroke.width))\"" }
        return element + "/>"
    }

    /// The PNG embedded as a `data:` URL (SVG 1.1's `xlink:href`), stretched to `rect`.
    private static func imageElement(_ rect: Rect, png: [UInt8]) -> String {
        "<image xmlns:xlink=\"http://www.w3.org/1999/xlink\"" + geometry(rect) + " preserveAspectRatio=\"none\""
            + " xlink:href=\"data:image/png;base64," + Data(png).base64EncodedString() + "\"/>"
    }

    /// ` x="…" y="…" width="…" height="…"` (negative sizes as 0).
    private static func geometry(_ rect: Rect) -> String {
        " x=\"\(number(rect.minX))\" y=\"\(number(rect.minY))\""
            + " width=\"\(number(max(rect.size.width, 0)))\" height=\"\(number(max(rect.size.height, 0)))\""
    }

    private static func textElement(_ text: PictureText, clipID: String?) -> String {
        // Centred in its line: the baseline sits about a third of the font size below the middle.
        let baseline = text.line.midY + text.size * 0.35
        var element = "<text x=\"\(number(text.x))\" y=\"\(number(baseline))\""
        element += " font-family=\"DejaVu Sans Mono, monospace\" font-size=\"\(number(text.size))\""
        if text.bold { element += " font-weight=\"bold\"" }
        element += paint(text.color, attribute: "fill")
        if let clipID { element += " clip-path=\"url(#\(clipID))\"" }
        return element + ">" + escaped(text.string) + "</text>"
    }

    /// ` fill="#rrggbb"` (with ` fill-opacity` when translucent), or ` fill="none"`.
    private static func paint(_ color: PictureColor?, attribute: String) -> String {
        guard let color else { return " \(attribute)=\"none\"" }
        var text = " \(attribute)=\"#" + hex(color.red) + hex(color.green) + hex(color.blue) + "\""
        if !color.isOpaque { text += " \(attribute)-opacity=\"\(number(Double(color.alpha) / 255))\"" }
        return text
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
    }

    /// A number for an attribute: at most three decimals, no trailing zeros, no exponent
    /// (`1920`, `0.349`, `-12.5`); 0 for a non-finite value.
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        let clamped = min(max(value, -1e12), 1e12)
        let thousandths = Int64((clamped * 1000).rounded())
        let sign = thousandths < 0 ? "-" : ""
        let magnitude = thousandths.magnitude
        let whole = magnitude / 1000
        var fraction = magnitude % 1000
        guard fraction != 0 else { return sign + String(whole) }
        var digits = 3
        while fraction % 10 == 0 { fraction /= 10; digits -= 1 }
        var fractionText = String(fraction)
        while fractionText.count < digits { fractionText = "0" + fractionText }
        return sign + String(whole) + "." + fractionText
    }

    /// XML-escapes text for element content and attribute values, and replaces characters XML 1.0
    /// does not allow (C0 controls other than tab and newlines, U+FFFE, U+FFFF) with U+FFFD.
    static func escaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
            default:
                if scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF {
                    out += "\u{FFFD}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
