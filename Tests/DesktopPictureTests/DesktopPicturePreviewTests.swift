@testable import DesktopPicture
import FerryModel
import Foundation
import Testing

@Suite("DesktopPicture: a running drag's preview")
struct DesktopPicturePreviewTests {
    /// A 4×4 PNG of one colour, written by the picture's own encoder (8-bit RGB).
    static func swatch(_ rgb: UInt32) throws -> [UInt8] {
        try PNGEncoder.encode(Raster(width: 4, height: 4, color: PictureColor(rgb)))
    }

    /// The two-screen desktop with a drag running from (200, 200) to (300, 300), showing `preview`.
    static func picture(_ preview: DesktopPicture.DragPath.Preview?) -> DesktopPicture {
        var picture = PictureFixtures.twoScreens
        picture.drag = DesktopPicture.DragPath(steps: [.init(location: Point(x: 200, y: 200), operation: .cancel),
                                                       .init(location: Point(x: 300, y: 300), operation: .copy)],
                                               outcome: nil, label: "drag 3: dragging", preview: preview)
        return picture
    }

    @Test("SVG: a card below and right of the drag's point with the image (embedded, 64 points square) and the title")
    func svg() throws {
        let image = try Self.swatch(0xE04020)
        let svg = Self.picture(.init(title: "A<B>", image: image)).svg()
        let card = try #require(svg.components(separatedBy: "<g class=\"drag-preview\">").dropFirst().first?
            .components(separatedBy: "</g>").first)
        #expect(card.hasPrefix("\n<rect x=\"312\" y=\"312\" width=\"80\""), "\(card)")
        #expect(card.contains("<image xmlns:xlink=\"http://www.w3.org/1999/xlink\" x=\"320\" y=\"320\" width=\"64\" height=\"64\""))
        #expect(card.contains("xlink:href=\"data:image/png;base64,\(Data(image).base64EncodedString())\""))
        #expect(card.contains(">A&lt;B&gt;</text>"))
        // An ended drag, or one without a preview, has no card.
        #expect(!Self.picture(nil).svg().contains("drag-preview"))
        #expect(!Self.picture(.init(title: "", image: nil)).svg().contains("drag-preview"))
    }

    @Test("PNG: the preview's pixels are drawn scaled into their box (checked by an independent decoder); no card without a preview")
    func png() async throws {
        let with = try Self.picture(.init(title: "Card", image: try Self.swatch(0xE04020))).png(scale: 1)
        let without = try Self.picture(nil).png(scale: 1)
        // The image box is (320, 320) to (384, 384) at scale 1.
        let points = [(321, 321), (352, 352), (383, 383)]
        let drawn = try await PythonPNGCheck.run(with, points: points)
        #expect(drawn.pixels == [0xE04020, 0xE04020, 0xE04020])
        let bare = try await PythonPNGCheck.run(without, points: points)
        #expect(!bare.pixels.contains(0xE04020))
    }

    @Test("the decoder reads back what the encoder wrote and refuses a PNG cut short")
    func decoder() throws {
        let rgb = try Self.swatch(0x102030)
        let decoded = try #require(DecodedImage(png: rgb))
        #expect(decoded.width == 4 && decoded.height == 4)
        #expect(decoded.pixels.allSatisfy { $0 == 0xFF30_2010 })
        #expect(DecodedImage(png: Array(rgb.dropLast(20))) == nil)
        #expect(DecodedImage(png: [0x89, 0x50, 0x4E, 0x47]) == nil)
    }
}
