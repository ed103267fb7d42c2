@testable import DesktopPicture
import FerryModel
import Foundation
import Testing

extension PictureFixtures {
    /// A drag over the two-screen desktop: from the Notes scene, over the active Gallery scene
    /// (forbidden, then copy and move), across bare screen (cancel), to the right edge zone of
    /// screen 0, where it dropped and opened a scene.
    static let dragSteps: [DesktopPicture.DragPath.Step] = [
        .init(location: Point(x: 200, y: 200), operation: .cancel),
        .init(location: Point(x: 600, y: 250), operation: .forbidden),
        .init(location: Point(x: 800, y: 500), operation: .copy),
        .init(location: Point(x: 1000, y: 600), operation: .move),
        .init(location: Point(x: 1600, y: 900), operation: .cancel),
        .init(location: Point(x: 1908, y: 540), operation: .copy, isEdge: true),
    ]

    static let withDrag: DesktopPicture = {
        var picture = twoScreens
        picture.drag = DesktopPicture.DragPath(steps: dragSteps, outcome: .copy,
                                               label: "drag 7: opened org.ferry.notes (1A2B3C4D) at the right edge")
        return picture
    }()
}

@Suite("DesktopPicture: the last drag's path")
struct DesktopPictureDragTests {
    @Test("the drag layer matches Fixtures/desktop/two-screens-drag.svg (FERRY_UPDATE_GOLDENS=1 regenerates)")
    func golden() throws {
        let svg = PictureFixtures.withDrag.svg()
        #expect(svg == PictureFixtures.withDrag.svg())
        try PictureGoldens.check(svg, against: "two-screens-drag.svg")
    }

    @Test("SVG: a polyline through every step, a mark per step coloured by its proposal, a ring at the drop, the label")
    func svgStructure() throws {
        let svg = PictureFixtures.withDrag.svg()
        let document = try SVGDocument(svg)
        #expect(document.classes.last == "drag", "the drag is drawn over everything: \(document.classes)")
        #expect(svg.contains("<polyline points=\"200,200 600,250 800,500 1000,600 1600,900 1908,540\""))
        // Marks in step order: cancel grey, forbidden red, copy green, move blue, cancel grey; the
        // edge step is a violet square, not a circle.
        let marks = circles(in: svg).filter { $0["r"] == "8" }
        #expect(marks.map { $0["fill"] } == ["#9aa0a6", "#e5484d", "#30a46c", "#3e8bff", "#9aa0a6"])
        #expect(marks.map { "\($0["cx"] ?? ""),\($0["cy"] ?? "")" } == ["200,200", "600,250", "800,500", "1000,600", "1600,900"])
        let square = try #require(document.rects(inClass: "drag").first { $0["fill"] == "#b45cf0" })
        #expect(square["x"] == "1900" && square["y"] == "532" && square["width"] == "16")
        // The drop ring: a dark casing and the outcome's colour (an edge drop: violet).
        let rings = circles(in: svg).filter { $0["r"] == "15" }
        #expect(rings.map { $0["cx"] } == ["1908", "1908"])
        #expect(rings.map { $0["fill"] } == ["none", "none"])
        #expect(rings.last?["stroke"] == "#b45cf0")
        #expect(document.texts.last == "drag 7: opened org.ferry.notes (1A2B3C4D) at the right edge")
        #expect(document.rootAttributes["viewBox"] == "0 0 3200 1080", "the drag does not change the bounds")
    }

    @Test("the drop ring takes the outcome's colour; a running drag has no ring; no drag draws no layer")
    func outcomes() throws {
        let colours: [(DropOperation, String)] = [(.cancel, "#9aa0a6"), (.forbidden, "#e5484d"), (.copy, "#30a46c"), (.move, "#3e8bff")]
        for (operation, colour) in colours {
            var picture = PictureFixtures.twoScreens
            picture.drag = .init(steps: [.init(location: Point(x: 100, y: 100), operation: .copy),
                                         .init(location: Point(x: 700, y: 400), operation: operation)],
                                 outcome: operation, label: "drag 1: \(operation)")
            let rings = circles(in: picture.svg()).filter { $0["r"] == "15" }
            #expect(rings.last?["stroke"] == colour, "\(operation)")
        }
        var running = PictureFixtures.twoScreens
        running.drag = .init(steps: PictureFixtures.dragSteps, outcome: nil, label: "drag 7: dragging")
        #expect(circles(in: running.svg()).allSatisfy { $0["r"] != "15" })
        #expect(!PictureFixtures.twoScreens.svg().contains("class=\"drag\""))
        var empty = PictureFixtures.twoScreens
        empty.drag = .init(steps: [.init(location: Point(x: .nan, y: 3), operation: .copy)], outcome: .cancel, label: "x")
        #expect(!empty.svg().contains("class=\"drag\""), "no step with finite coordinates: nothing to draw")
    }

    @Test("the label stays inside the picture near its right and top edges, and a hostile label is escaped")
    func labelPlacement() throws {
        var picture = PictureFixtures.twoScreens
        picture.drag = .init(steps: [.init(location: Point(x: 3190, y: 5), operation: .cancel)], outcome: .cancel,
                             label: "drag 2: cancel — <script>&\"'")
        let svg = picture.svg()
        #expect(!svg.contains("<script>"))
        let document = try SVGDocument(svg)
        #expect(document.texts.last == "drag 2: cancel — <script>&\"'")
        let box = try #require(document.rects(inClass: "drag").last)
        let x = Double(box["x"] ?? "") ?? -1, y = Double(box["y"] ?? "") ?? -1, width = Double(box["width"] ?? "") ?? 0
        #expect(x >= 0 && x + width <= 3190, "left of the point: x \(x), width \(width)")
        #expect(y > 5, "below the point when there is no room above: y \(y)")

        picture.drag?.label = String(repeating: "x", count: 500)
        let long = try SVGDocument(picture.svg())
        #expect(long.texts.last?.count == DesktopPicture.DragPath.labelLimit)
        #expect(long.texts.last?.hasSuffix("...") == true)
    }

    @Test("a drop far outside every screen still has its label inside the picture", arguments: [
        Point(x: 5000, y: 5000), Point(x: -5000, y: -5000), Point(x: 1e12, y: 1e12), Point(x: -1e300, y: 1e300),
    ])
    func farOffLabel(_ drop: Point) throws {
        var picture = PictureFixtures.twoScreens
        picture.drag = .init(steps: [.init(location: Point(x: 500, y: 500), operation: .copy), .init(location: drop, operation: .cancel)],
                             outcome: .cancel, label: "drag 3: cancel")
        let document = try SVGDocument(picture.svg())
        let box = try #require(document.rects(inClass: "drag").last)
        let x = Double(box["x"] ?? "") ?? -1, y = Double(box["y"] ?? "") ?? -1
        let width = Double(box["width"] ?? "") ?? 0, height = Double(box["height"] ?? "") ?? 0
        #expect(x >= 0 && x + width <= 3200 && y >= 0 && y + height <= 1080, "the label box at \(x),\(y) \(width)×\(height)")
        #expect(document.texts.last == "drag 3: cancel")
    }

    @Test("10,000 steps, half of them far off, keep the SVG and PNG small and quick to draw")
    func manySteps() throws {
        let far = [Point(x: 1e12, y: -1e12), Point(x: -1e300, y: 1e300), Point(x: -50_000, y: 70_000), Point(x: 1e15, y: 3)]
        let steps = (0..<10_000).map { index -> DesktopPicture.DragPath.Step in
            let location = index % 2 == 0 ? Point(x: Double(index % 3200), y: Double(index % 1080)) : far[index / 2 % far.count]
            return .init(location: location, operation: index % 3 == 0 ? .copy : .cancel, isEdge: index % 7 == 0)
        }
        var picture = PictureFixtures.twoScreens
        picture.drag = .init(steps: steps, outcome: .cancel, label: "drag 9: cancel")
        let clock = ContinuousClock()
        var svg = ""
        let svgTime = clock.measure { svg = picture.svg() }
        var png: [UInt8] = []
        let pngTime = try clock.measure { png = try picture.png(scale: 0.5) }
        // Each step is one mark of about 100 bytes and two polyline points: about 1.5 MB.
        #expect(svg.utf8.count < 3_000_000, "SVG of \(svg.utf8.count) bytes")
        #expect(try SVGDocument(svg).rootAttributes["viewBox"] == "0 0 3200 1080", "far-off steps do not change the bounds")
        #expect(png.count < 2_000_000, "PNG of \(png.count) bytes")
        // Generous limits for a loaded 2-core debug build; the point is "not minutes".
        #expect(svgTime < .seconds(20) && pngTime < .seconds(60), "SVG \(svgTime), PNG \(pngTime)")
        print("10,000-step drag: SVG \(svg.utf8.count) bytes in \(svgTime), PNG \(png.count) bytes in \(pngTime)")
    }

    @Test("PNG: the marks, the path between them and the drop ring have their colours (decoded by Python)")
    func pngPixels() async throws {
        let png = try PictureFixtures.withDrag.png(scale: 0.5)
        // Desktop points → pixels at scale 0.5.
        let probes: [(name: String, x: Int, y: Int, rgb: UInt32)] = [
            ("the cancel mark at the start", 100, 100, 0x9AA0A6),
            ("the forbidden mark", 300, 125, 0xE5484D),
            ("the copy mark", 400, 250, 0x30A46C),
            ("the move mark", 500, 300, 0x3E8BFF),
            ("the edge step's square at the drop", 954, 270, 0xB45CF0),
            ("the path halfway between the copy and move marks", 450, 275, 0xF4F4F4),
            ("the path's dark casing beside it", 450, 276, 0x14141A),
            ("the drop ring, right of the drop", 961, 270, 0xB45CF0),
            ("inside the ring, between it and the square", 954, 275, blend(0xFFAA00, alpha: 89, over: 0x3A4A5C)),
            ("the Gallery scene's interior away from the path", 600, 400, 0xFFFFFF),
        ]
        let decoded = try await PythonPNGCheck.run(png, points: probes.map { ($0.x, $0.y) })
        #expect(decoded.badCRCs.isEmpty)
        for (probe, pixel) in zip(probes, decoded.pixels) {
            #expect(close(pixel, probe.rgb), "\(probe.name) at (\(probe.x), \(probe.y)): \(String(pixel, radix: 16)), expected \(String(probe.rgb, radix: 16))")
        }
        #expect(png == (try PictureFixtures.withDrag.png(scale: 0.5)), "deterministic")
        #expect(png != (try PictureFixtures.twoScreens.png(scale: 0.5)))
    }

    /// The attributes of every `<circle>` element, in document order.
    private func circles(in svg: String) -> [[String: String]] {
        svg.split(separator: "\n").filter { $0.hasPrefix("<circle ") }.map { line in
            var attributes: [String: String] = [:]
            for part in line.split(separator: " ").dropFirst() {
                let pair = part.split(separator: "=", maxSplits: 1)
                guard pair.count == 2 else { continue }
                attributes[String(pair[0])] = pair[1].replacingOccurrences(of: "\"", with: "").replacingOccurrences(of: "/>", with: "")
            }
            return attributes
        }
    }

    private func blend(_ source: UInt32, alpha: UInt32, over destination: UInt32) -> UInt32 {
        var result: UInt32 = 0
        for shift: UInt32 in [16, 8, 0] {
            let s = (source >> shift) & 0xFF, d = (destination >> shift) & 0xFF
            result |= ((s * alpha + d * (255 - alpha) + 127) / 255) << shift
        }
        return result
    }

    private func close(_ a: UInt32, _ b: UInt32) -> Bool {
        [16, 8, 0].allSatisfy { shift in abs(Int((a >> UInt32(shift)) & 0xFF) - Int((b >> UInt32(shift)) & 0xFF)) <= 1 }
    }
}
