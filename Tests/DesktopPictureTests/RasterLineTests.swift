@testable import DesktopPicture
import Testing

@Suite("Raster: lines and discs for the drag path")
struct RasterLineTests {
    private static let black = PictureColor(0x000000), white = PictureColor(0xFFFFFF)

    private func painted(_ raster: Raster) -> Set<[Int]> {
        var set: Set<[Int]> = []
        for y in 0..<raster.height {
            for x in 0..<raster.width where raster.rgb(x: x, y: y) == 0xFFFFFF { set.insert([x, y]) }
        }
        return set
    }

    @Test("a horizontal line 2 pixels thick covers exactly its two rows between its ends, with round caps")
    func horizontal() {
        var raster = Raster(width: 40, height: 20, color: Self.black)
        raster.strokePolyline([Raster.Spot(x: 5, y: 10), Raster.Spot(x: 30, y: 10)], thickness: 2, Self.white)
        let set = painted(raster)
        for x in 5..<30 {
            #expect(set.contains([x, 9]) && set.contains([x, 10]), "x = \(x)")
        }
        #expect(!set.contains { $0[1] < 9 || $0[1] > 10 }, "nothing above or below the line")
        #expect(!set.contains { $0[0] < 4 || $0[0] > 30 }, "the caps reach one pixel (the half thickness) past the ends")
    }

    @Test("a diagonal line paints the pixels within half its thickness of the segment, and only those")
    func diagonal() {
        var raster = Raster(width: 50, height: 50, color: Self.black)
        let a = Raster.Spot(x: 5, y: 5), b = Raster.Spot(x: 45, y: 35)
        raster.strokePolyline([a, b], thickness: 3, Self.white)
        let length = ((b.x - a.x) * (b.x - a.x) + (b.y - a.y) * (b.y - a.y)).squareRoot()
        for y in 0..<50 {
            for x in 0..<50 {
                let px = Double(x) + 0.5 - a.x, py = Double(y) + 0.5 - a.y
                let along = (px * (b.x - a.x) + py * (b.y - a.y)) / length
                let across = abs(px * (b.y - a.y) - py * (b.x - a.x)) / length
                let set = raster.rgb(x: x, y: y) == 0xFFFFFF
                // Clearly inside the body of the line, or clearly outside its capsule.
                if along > 0, along < length, across < 1.4 { #expect(set, "(\(x), \(y)) is on the line") }
                let outsideCaps = ((px * px + py * py).squareRoot() > 1.6) && ((pow2(Double(x) + 0.5 - b.x) + pow2(Double(y) + 0.5 - b.y)).squareRoot() > 1.6)
                if across > 1.6, outsideCaps { #expect(!set, "(\(x), \(y)) is off the line") }
            }
        }
    }

    @Test("a polyline joins its segments; a disc and a ring paint what their radii say")
    func joinsDiscsRings() {
        var raster = Raster(width: 40, height: 40, color: Self.black)
        raster.strokePolyline([Raster.Spot(x: 5, y: 5), Raster.Spot(x: 30, y: 5), Raster.Spot(x: 30, y: 30)], thickness: 2, Self.white)
        #expect(raster.rgb(x: 30, y: 5) == 0xFFFFFF && raster.rgb(x: 29, y: 4) == 0xFFFFFF, "the corner is filled")
        #expect(raster.rgb(x: 30, y: 20) == 0xFFFFFF && raster.rgb(x: 29, y: 20) == 0xFFFFFF, "the second segment")
        #expect(raster.rgb(x: 20, y: 20) == 0)

        var disc = Raster(width: 21, height: 21, color: Self.black)
        disc.fillDisc(center: Raster.Spot(x: 10.5, y: 10.5), radius: 5, Self.white)
        let discSet = painted(disc)
        #expect(discSet.count >= 69 && discSet.count <= 89, "about π·25 pixels: \(discSet.count)")
        #expect(discSet.contains([10, 10]) && discSet.contains([15, 10]) && !discSet.contains([16, 10]) && !discSet.contains([14, 14]))

        var ring = Raster(width: 21, height: 21, color: Self.black)
        ring.strokeCircle(center: Raster.Spot(x: 10.5, y: 10.5), radius: 6, thickness: 2, Self.white)
        #expect(ring.rgb(x: 10, y: 10) == 0, "the inside stays")
        #expect(ring.rgb(x: 16, y: 10) == 0xFFFFFF && ring.rgb(x: 4, y: 10) == 0xFFFFFF && ring.rgb(x: 10, y: 4) == 0xFFFFFF)
        #expect(ring.rgb(x: 18, y: 10) == 0, "nothing past the outer radius")
    }

    @Test("shapes far outside the raster, enormous or not finite paint nothing wrong and return at once")
    func hostileCoordinates() {
        var raster = Raster(width: 30, height: 30, color: Self.black)
        let start = ContinuousClock.now
        raster.strokePolyline([Raster.Spot(x: -1e300, y: 15), Raster.Spot(x: 1e300, y: 15)], thickness: 2, Self.white)
        raster.strokePolyline([Raster.Spot(x: .nan, y: 1), Raster.Spot(x: 3, y: .infinity)], thickness: 4, Self.white)
        raster.fillDisc(center: Raster.Spot(x: 1e9, y: 1e9), radius: 1e3, Self.white)
        raster.fillDisc(center: Raster.Spot(x: -1e300, y: 1e300), radius: 5, Self.white)
        raster.strokeCircle(center: Raster.Spot(x: 15, y: -1e18), radius: .nan, thickness: 3, Self.white)
        raster.fillConvex([Raster.Spot(x: 0, y: 0), Raster.Spot(x: 1, y: 1)], Self.white)
        #expect(ContinuousClock.now - start < .seconds(1))
        // The one sane-within-the-raster part: the horizontal line across it.
        #expect(raster.rgb(x: 0, y: 14) == 0xFFFFFF && raster.rgb(x: 29, y: 15) == 0xFFFFFF)
        #expect(raster.rgb(x: 5, y: 5) == 0)

        // A line from far away to far away through the raster keeps its slope (clipped, not clamped).
        var slanted = Raster(width: 30, height: 30, color: Self.black)
        slanted.strokePolyline([Raster.Spot(x: -1e12, y: -1e12), Raster.Spot(x: 1e12, y: 1e12)], thickness: 1, Self.white)
        for i in 0..<30 { #expect(slanted.rgb(x: i, y: i) == 0xFFFFFF, "(\(i), \(i))") }
        #expect(slanted.rgb(x: 20, y: 5) == 0)

        var covered = Raster(width: 10, height: 10, color: Self.black)
        covered.fillDisc(center: Raster.Spot(x: 5, y: 5), radius: 1e30, Self.white)
        #expect(painted(covered).count == 100, "an enormous disc covers the raster")
    }

    private func pow2(_ value: Double) -> Double { value * value }
}
