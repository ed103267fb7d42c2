/// Lines and discs on the raster, for the drag path: thick polylines with round joins and caps,
/// filled and outlined circles. Coordinates are continuous pixel coordinates (pixel `x` covers
/// `x ..< x + 1`); a pixel is painted when its centre is inside the shape. No anti-aliasing, like
/// the rest of the raster. Shapes are painted span by span, so a translucent colour would blend
/// twice where parts overlap (a polyline's joins): the drag path uses opaque colours.
extension Raster {
    /// A point in continuous pixel coordinates.
    struct Spot: Equatable {
        var x: Double
        var y: Double
    }

    /// Fills the convex polygon `corners` (either winding): every pixel whose centre is inside or
    /// on its edge. Polygons with a non-finite corner or fewer than three corners paint nothing.
    /// Corners should be within a few million pixels of the raster (``strokePolyline(_:thickness:_:)``
    /// clips its segments first), so the arithmetic stays exact.
    mutating func fillConvex(_ corners: [Spot], _ color: PictureColor) {
        guard corners.count >= 3, corners.allSatisfy({ $0.x.isFinite && $0.y.isFinite }) else { return }
        let top = corners.map(\.y).min() ?? 0, bottom = corners.map(\.y).max() ?? 0
        guard let rows = rows(from: top, to: bottom) else { return }
        for row in rows {
            let centre = Double(row) + 0.5
            var left = Double.infinity, right = -Double.infinity
            for index in corners.indices {
                let a = corners[index], b = corners[(index + 1) % corners.count]
                guard min(a.y, b.y) <= centre, centre <= max(a.y, b.y) else { continue }
                if a.y == b.y {
                    left = min(left, a.x, b.x)
                    right = max(right, a.x, b.x)
                } else {
                    let x = a.x + (centre - a.y) / (b.y - a.y) * (b.x - a.x)
                    left = min(left, x)
                    right = max(right, x)
                }
            }
            fillSpan(row: row, from: left, to: right, color)
        }
    }

    /// Fills the disc of `radius` pixels around `center`.
    mutating func fillDisc(center: Spot, radius: Double, _ color: PictureColor) {
        guard center.x.isFinite, center.y.isFinite, radius.isFinite, radius > 0 else { return }
        let center = Self.clamped(center), radius = min(radius, Self.radiusLimit)
        guard let rows = rows(from: center.y - radius, to: center.y + radius) else { return }
        for row in rows {
            let dy = Double(row) + 0.5 - center.y
            let half = (radius * radius - dy * dy).squareRoot()
            guard half.isFinite else { continue }
            fillSpan(row: row, from: center.x - half, to: center.x + half, color)
        }
    }

    /// Outlines a circle: a ring `thickness` pixels wide centred on the circle of `radius`.
    mutating func strokeCircle(center: Spot, radius: Double, thickness: Double, _ color: PictureColor) {
        guard center.x.isFinite, center.y.isFinite, radius.isFinite, thickness.isFinite, radius > 0 else { return }
        let center = Self.clamped(center), thickness = min(max(thickness, 1), Self.radiusLimit)
        let outer = min(radius, Self.radiusLimit) + thickness / 2, inner = max(0, min(radius, Self.radiusLimit) - thickness / 2)
        guard let rows = rows(from: center.y - outer, to: center.y + outer) else { return }
        for row in rows {
            let dy = Double(row) + 0.5 - center.y
            let outerHalf = (outer * outer - dy * dy).squareRoot()
            guard outerHalf.isFinite else { continue }
            let innerSquared = inner * inner - dy * dy
            if innerSquared <= 0 {
                fillSpan(row: row, from: center.x - outerHalf, to: center.x + outerHalf, color)
            } else {
                // Two arcs: the pixels strictly inside the inner circle stay untouched.
                let innerHalf = innerSquared.squareRoot()
                fillSpan(row: row, from: center.x - outerHalf, to: center.x - innerHalf - 1e-9, color)
                fillSpan(row: row, from: center.x + innerHalf + 1e-9, to: center.x + outerHalf, color)
            }
        }
    }

    /// Draws connected segments `thickness` pixels wide with round joins and caps. One point
    /// draws a dot; non-finite points are skipped.
    mutating func strokePolyline(_ points: [Spot], thickness: Double, _ color: PictureColor) {
        let points = points.filter { $0.x.isFinite && $0.y.isFinite }
        let half = min(max(thickness.isFinite ? thickness : 1, 1), Self.radiusLimit) / 2
        for (start, end) in zip(points, points.dropFirst()) {
            // Only the part near the raster is drawn, so far-away points cost nothing and the
            // arithmetic stays exact.
            guard let (a, b) = clip(start, end, margin: half + 2) else { continue }
            let dx = b.x - a.x, dy = b.y - a.y
            let length = (dx * dx + dy * dy).squareRoot()
            guard length > 0 else { continue }
            let nx = -dy / length * half, ny = dx / length * half
            fillConvex([Spot(x: a.x + nx, y: a.y + ny), Spot(x: b.x + nx, y: b.y + ny),
                        Spot(x: b.x - nx, y: b.y - ny), Spot(x: a.x - nx, y: a.y - ny)], color)
        }
        for point in points { fillDisc(center: point, radius: half, color) }
    }

    /// The part of segment `a`–`b` inside the raster widened by `margin` on every side
    /// (Liang–Barsky), nil when none of it is. A clipped end is computed on the side it was cut
    /// at (x there is that side's x, y follows the slope), so a segment between points far away
    /// keeps its course where it crosses the raster.
    func clip(_ a: Spot, _ b: Spot, margin: Double) -> (Spot, Spot)? {
        let dx = b.x - a.x, dy = b.y - a.y
        guard dx.isFinite, dy.isFinite else { return nil }
        let sides = [-margin, Double(width) + margin, -margin, Double(height) + margin]
        let limits = [(-dx, a.x - sides[0]), (dx, sides[1] - a.x), (-dy, a.y - sides[2]), (dy, sides[3] - a.y)]
        var enter = (t: 0.0, side: -1), leave = (t: 1.0, side: -1)
        for (side, (p, q)) in limits.enumerated() {
            if p == 0 {
                if q < 0 { return nil }
                continue
            }
            let t = q / p
            if p < 0 {
                if t > enter.t { enter = (t, side) }
            } else if t < leave.t {
                leave = (t, side)
            }
            if enter.t > leave.t { return nil }
        }
        func point(_ cut: (t: Double, side: Int), otherwise end: Spot) -> Spot {
            switch cut.side {
            case 0, 1: return Spot(x: sides[cut.side], y: a.y + (sides[cut.side] - a.x) * (dy / dx))
            case 2, 3: return Spot(x: a.x + (sides[cut.side] - a.y) * (dx / dy), y: sides[cut.side])
            default: return end
            }
        }
        return (point(enter, otherwise: a), point(leave, otherwise: b))
    }

    /// The rows whose pixel centres lie in `top ... bottom`, within the raster; nil for none.
    private func rows(from top: Double, to bottom: Double) -> ClosedRange<Int>? {
        guard top.isFinite, bottom.isFinite else { return nil }
        let first = max(0, (max(top, -1) - 0.5).rounded(.up))
        let last = min(Double(height - 1), (min(bottom, Double(height) + 1) - 0.5).rounded(.down))
        guard first <= last else { return nil }
        return Int(first)...Int(last)
    }

    /// Paints the pixels of `row` whose centres lie in `left ... right`.
    private mutating func fillSpan(row: Int, from left: Double, to right: Double, _ color: PictureColor) {
        guard left <= right, left.isFinite, right.isFinite else { return }
        let x0 = max(0, Int((max(left, -1) - 0.5).rounded(.up)))
        let x1 = min(width, Int((min(right, Double(width) + 1) - 0.5).rounded(.down)) + 1)
        guard x0 < x1 else { return }
        fill(Box(x0: x0, y0: row, x1: x1, y1: row + 1), color)
    }

    /// Radii and thicknesses beyond this are drawn as this (it covers any raster many times over).
    static let radiusLimit = 1e12

    /// A disc's centre moved no closer than 1e13 from the origin on each axis: a disc of at most
    /// ``radiusLimit`` that far away misses the raster wherever exactly it is, so the picture is
    /// unchanged while the arithmetic stays exact.
    private static func clamped(_ spot: Spot) -> Spot {
        Spot(x: min(max(spot.x, -1e13), 1e13), y: min(max(spot.y, -1e13), 1e13))
    }
}
