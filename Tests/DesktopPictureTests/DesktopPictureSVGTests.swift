import DesktopPicture
import FerryModel
import Foundation
import Testing
#if canImport(FoundationXML)
import FoundationXML
#endif

@Suite("DesktopPicture SVG")
struct DesktopPictureSVGTests {
    @Test("two screens, a scene in each state: matches Fixtures/desktop/two-screens.svg (FERRY_UPDATE_GOLDENS=1 regenerates)")
    func golden() throws {
        let svg = PictureFixtures.twoScreens.svg()
        #expect(svg == PictureFixtures.twoScreens.svg(), "the same picture gives the same bytes")
        try PictureGoldens.check(svg, against: "two-screens.svg")
    }

    @Test("the document is well-formed XML whose view box covers every screen")
    func wellFormed() throws {
        let document = try SVGDocument(PictureFixtures.twoScreens.svg())
        #expect(document.rootAttributes["viewBox"] == "0 0 3200 1080")
        #expect(document.rootAttributes["version"] == "1.1")
        #expect(document.texts.contains("org.ferry.gallery — Gallery — lake.png"))
        #expect(document.texts.contains("Viewer"))
        #expect(document.texts.contains("foregroundActive"))
        #expect(document.classes == ["background", "screen", "screen", "scene background", "scene foregroundActive",
                                     "scene foregroundInactive", "scene unattached", "edge-zones"])
        // Left and right band of each screen, 24 wide, full height.
        let zones = document.rects(inClass: "edge-zones")
        #expect(zones.map { $0["x"] } == ["0", "1896", "1920", "3176"])
        #expect(zones.allSatisfy { $0["width"] == "24" })
        #expect(zones.map { $0["height"] } == ["1080", "1080", "800", "800"])
    }

    @Test("a screen at negative coordinates widens the view box")
    func viewBoxCoversScreens() throws {
        let picture = DesktopPicture(screens: [Rect(x: -1280, y: -200, width: 1280, height: 1024),
                                               Rect(x: 0, y: 0, width: 1920, height: 1080)],
                                     edgeZone: 24, scenes: [])
        let document = try SVGDocument(picture.svg())
        #expect(document.rootAttributes["viewBox"] == "-1280 -200 3200 1280")
    }

    @Test("hostile titles, app names and configurations are escaped and read back unchanged")
    func escaping() throws {
        let hostile = "<&>\"' </text><script>x</script>"
        let picture = DesktopPicture(screens: PictureFixtures.screens, edgeZone: 24, scenes: [
            .init(frame: Rect(x: 100, y: 100, width: 600, height: 400), appName: "app<&>\"'", title: hostile,
                  configuration: "Con\"fig'<&>", state: .foregroundActive),
            .init(frame: Rect(x: 200, y: 200, width: 600, height: 400), appName: "ctl", title: "bell\u{7}",
                  configuration: "", state: .background),
        ])
        let svg = picture.svg()
        #expect(!svg.contains("<script>"))
        #expect(svg.contains("&lt;&amp;&gt;&quot;&apos;"))
        let document = try SVGDocument(svg)
        #expect(document.texts.contains("app<&>\"' — " + hostile))
        #expect(document.texts.contains("Con\"fig'<&>"))
        #expect(document.texts.contains("ctl — bell\u{FFFD}"), "a control character XML forbids is replaced")
    }
}

/// The parts of an SVG document the tests look at, read with a real XML parser.
final class SVGDocument: NSObject, XMLParserDelegate {
    private(set) var rootAttributes: [String: String] = [:]
    private(set) var texts: [String] = []
    private(set) var classes: [String] = []
    private var rectsByClass: [(String, [String: String])] = []
    private var currentText: String?
    private var currentClass = ""

    struct ParseError: Error, CustomStringConvertible { var description: String }

    init(_ svg: String) throws {
        super.init()
        let parser = XMLParser(data: Data(svg.utf8))
        parser.delegate = self
        guard parser.parse() else {
            throw ParseError(description: "not well-formed: \(parser.parserError.map { "\($0)" } ?? "?")")
        }
    }

    func rects(inClass kind: String) -> [[String: String]] {
        rectsByClass.filter { $0.0 == kind }.map(\.1)
    }

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        switch name {
        case "svg": rootAttributes = attributes
        case "g":
            currentClass = attributes["class"] ?? ""
            classes.append(currentClass)
        case "rect": rectsByClass.append((currentClass, attributes))
        case "text": currentText = ""
        default: break
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        currentText? += string
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        if name == "text", let text = currentText {
            texts.append(text)
            currentText = nil
        }
    }
}
