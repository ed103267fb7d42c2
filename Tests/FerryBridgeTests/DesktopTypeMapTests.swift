import FerryBridge
import FerryModel
import Testing

@Suite("DesktopTypeMap: desktop names to content types and back")
struct DesktopTypeMapTests {
    let map = DesktopTypeMap()

    @Test("GTK3's text targets fold into one UTF-8 text read from UTF8_STRING (GTK's text/plain has CRLF line ends)")
    func gtkTextFolds() {
        let plan = map.importPlan(for: ["UTF8_STRING", "COMPOUND_TEXT", "TEXT", "STRING", "text/plain;charset=utf-8", "text/plain"])
        #expect(plan.representations.count == 1)
        #expect(plan.representations.first?.contentType == .utf8PlainText)
        #expect(plan.representations.first?.sourceName == "UTF8_STRING")
        #expect(plan.representations.first?.conversion == ByteConversion.none)
        #expect(plan.representations.first?.isStorable == true)
    }

    @Test("X11 STRING alone is read as Latin-1 and converted")
    func latin1Alone() {
        let plan = map.importPlan(for: ["STRING"])
        #expect(plan.representations.map(\.sourceName) == ["STRING"])
        #expect(plan.representations.first?.conversion == .latin1ToUTF8)
    }

    @Test("Tk's offer: the hint is read apart, TK_ atoms dropped, UTF8_STRING preferred over STRING")
    func tkOffer() {
        let plan = map.importPlan(for: ["TK_APPLICATION", "TK_WINDOW", "x-kde-passwordManagerHint", "UTF8_STRING", "STRING"])
        #expect(plan.secretHint == "x-kde-passwordManagerHint")
        #expect(plan.representations.map(\.sourceName) == ["UTF8_STRING"])
        #expect(plan.dropped.contains("TK_WINDOW"))
    }

    @Test("HTML keeps its plain-text sibling, in the owner's order")
    func htmlAndText() {
        let plan = map.importPlan(for: ["text/html", "text/plain", "TEXT", "STRING", "UTF8_STRING"])
        #expect(plan.representations.map(\.contentType) == [.html, .utf8PlainText])
        #expect(plan.representations.last?.sourceName == "UTF8_STRING")
    }

    @Test("one lossless image is stored, other encodings only proxied; Inkscape's SVG never stored")
    func images() {
        let plan = map.importPlan(for: ["image/x-inkscape-svg", "image/jpeg", "image/png", "image/bmp"])
        let storable = plan.representations.filter(\.isStorable).map(\.sourceName)
        #expect(storable == ["image/png"])
        #expect(plan.representations.map(\.sourceName) == ["image/x-inkscape-svg", "image/jpeg", "image/png", "image/bmp"])
    }

    @Test("toolkit-private types are proxied, not stored; an unknown MIME type is a dynamic type")
    func privateAndUnknown() {
        let plan = map.importPlan(for: ["application/x-qt-image", "chromium/x-renderer-taint", "application/x-ferry-test-thing"])
        #expect(plan.representations.map(\.isStorable) == [false, false, true])
        #expect(plan.representations.last?.contentType.isDynamic == true)
    }

    @Test("protocol atoms are dropped")
    func protocolAtoms() {
        let plan = map.importPlan(for: ["TARGETS", "MULTIPLE", "TIMESTAMP", "SAVE_TARGETS", "UTF8_STRING"])
        #expect(plan.representations.count == 1)
        #expect(Set(plan.dropped) == ["TARGETS", "MULTIPLE", "TIMESTAMP", "SAVE_TARGETS"])
    }

    @Test("gnome-copied-files becomes a URI list when none is offered")
    func gnomeCopiedFiles() throws {
        let alone = map.importPlan(for: ["x-special/gnome-copied-files", "UTF8_STRING"])
        let uriList = try #require(ContentType(mimeType: "text/uri-list"))
        #expect(alone.representations.first?.contentType == uriList)
        #expect(alone.representations.first?.conversion == .gnomeCopiedFilesToURIList)
        let both = map.importPlan(for: ["x-special/gnome-copied-files", "text/uri-list"])
        #expect(both.representations.map(\.sourceName) == ["text/uri-list"])
    }

    @Test("at most maximumTypes types are taken")
    func typeCap() {
        let names = (0..<60).map { "application/x-ferry-cap-\($0)" }
        let plan = DesktopTypeMap(maximumTypes: 50).importPlan(for: names)
        #expect(plan.representations.count == 50)
        #expect(plan.dropped.count == 10)
    }

    @Test("export: text gets the X11 aliases on X11, the MIME forms on Wayland")
    func exportText() {
        #expect(map.exportNames(for: [.utf8PlainText], flavor: .x11).map(\.name)
                == ["text/plain;charset=utf-8", "text/plain", "UTF8_STRING", "TEXT", "STRING"])
        #expect(map.exportNames(for: [.utf8PlainText], flavor: .wayland).map(\.name) == ["text/plain;charset=utf-8", "text/plain"])
        #expect(map.exportNames(for: [.utf8PlainText], flavor: .x11).first { $0.name == "STRING" }?.conversion == .utf8ToLatin1)
    }

    @Test("export: a file item is offered as a URI list and as gnome-copied-files; images by their MIME type")
    func exportFilesAndImages() {
        let names = map.exportNames(for: [.fileURL, .png], flavor: .wayland).map(\.name)
        #expect(names == ["text/uri-list", "x-special/gnome-copied-files", "image/png"])
    }
}

@Suite("ByteConverter: streamed conversions")
struct ByteConverterTests {
    @Test("Latin-1 to UTF-8")
    func latin1() {
        #expect(ByteConverter.convert([0x63, 0x61, 0x66, 0xE9], .latin1ToUTF8) == Array("café".utf8))
    }

    @Test("UTF-16 with and without a byte-order mark, split across chunks, surrogate pairs")
    func utf16() {
        let text = "héllo 🚢"
        let little: [UInt8] = Array(text.utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        let big: [UInt8] = [0xFE, 0xFF] + Array(text.utf16).flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        #expect(ByteConverter.convert(little, .utf16ToUTF8) == Array(text.utf8))
        #expect(ByteConverter.convert(big, .utf16ToUTF8) == Array(text.utf8))
        var converter = ByteConverter(.utf16ToUTF8)
        var out: [UInt8] = []
        for byte in little { converter.convert([byte], into: &out) }
        converter.finish(into: &out)
        #expect(out == Array(text.utf8))
    }

    @Test("UTF-8 to Latin-1: outside characters become ?")
    func toLatin1() {
        #expect(ByteConverter.convert(Array("café ✓".utf8), .utf8ToLatin1) == [0x63, 0x61, 0x66, 0xE9, 0x20, 0x3F])
    }

    @Test("gnome-copied-files and URI lists, both ways")
    func fileLists() {
        let gnome = Array("copy\nfile:///tmp/a\nfile:///tmp/b".utf8)
        #expect(ByteConverter.convert(gnome, .gnomeCopiedFilesToURIList) == Array("file:///tmp/a\r\nfile:///tmp/b\r\n".utf8))
        let list = Array("# comment\r\nfile:///tmp/a\r\nfile:///tmp/b\r\n".utf8)
        #expect(ByteConverter.convert(list, .uriListToGnomeCopiedFiles) == Array("copy\nfile:///tmp/a\nfile:///tmp/b".utf8))
        #expect(ByteConverter.convert(Array("file:///x".utf8), .uriListToGnomeCopiedFiles) == Array("copy\nfile:///x".utf8))
    }
}

@Suite("BridgeBudgets: what an import may keep")
struct BridgeBudgetsTests {
    @Test("a type over its budget, or past the selection's, is not charged")
    func ledger() {
        var ledger = BridgeBudgets.Ledger(BridgeBudgets(bytesPerType: 10, bytesPerSelection: 25, idleTimeout: .seconds(1),
                                                        maximumTypes: 5))
        let charges = [11, 10, 10].map { ledger.charge($0) }
        #expect(charges == [false, true, true])
        #expect(ledger.allowanceForNextType == 5)
        let more = [6, 5].map { ledger.charge($0) }
        #expect(more == [false, true])
        #expect(ledger.charged == 25)
        #expect(ledger.allowanceForNextType == 0)
    }

    @Test("the defaults are documented figures")
    func defaults() {
        #expect(BridgeBudgets.defaults.bytesPerType == 64 << 20)
        #expect(BridgeBudgets.defaults.bytesPerSelection == 256 << 20)
        #expect(BridgeBudgets.defaults.idleTimeout == .seconds(3))
        #expect(BridgeBudgets.defaults.maximumTypes == 50)
    }
}
