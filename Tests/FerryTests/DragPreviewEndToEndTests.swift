import Ferry
import FerryModel
import FerryTestSupport
import Foundation
import Testing

/// Drag previews through the library on both ends and the real ferryd: the source's
/// `DragItems.previews`, the target's `DropSession.previews()`, the model's limits.
@Suite("Ferry: drag previews between two apps through the real ferryd")
struct DragPreviewEndToEndTests {
    static func samplePNG() throws -> Data {
        try Data(contentsOf: TestPaths.packageRoot.appendingPathComponent("Fixtures/Payloads/sample.png"))
    }

    @Test("the target's dropSessionDidUpdate sees the source's title and image bytes, and cannot read the item's text until the drop")
    func targetSeesPreview() async throws {
        let image = try Self.samplePNG()
        var source = DragBehaviour()
        source.texts = ["note", "second note"]
        source.previews = [try DragPreview(title: "Shopping list", image: image)]
        var target = DragBehaviour()
        target.readsPreviewsOnUpdate = true
        try await DragStage.with(source: source, target: target) { s in
            let drag = try await s.tool.beginDrag(fromScene: s.sourceScene)
            #expect(try await drag.move(to: DragStage.overTarget).target == s.targetScene)
            let t = s.targetScene
            let events = s.targetEvents.dragOf(t)
            // One per item up to the last that has one: the second item has none.
            #expect(events.contains("previews \(t) Shopping list|\(image.base64EncodedString())"))
            #expect(events.contains("content \(t) PermissionDenied"))
            #expect(!events.contains { $0.hasPrefix("content \(t) read") })
            // A picture of the desktop sees the running drag's preview.
            let record = try #require(try await s.tool.lastDrag())
            #expect(record.preview?.title == "Shopping list")
            #expect(record.preview?.image == image)
            let outcome = try await drag.drop()
            #expect(outcome.operation == .copy)
            #expect(try await s.tool.lastDrag()?.preview == nil)
        }
    }

    @Test("the initiator's previews replace the source's; a session not made from a broker's call has none to give")
    func initiatorReplaces() async throws {
        var source = DragBehaviour()
        source.texts = ["note"]
        source.previews = [try DragPreview(title: "from the source")]
        var target = DragBehaviour()
        target.readsPreviewsOnUpdate = true
        try await DragStage.with(source: source, target: target) { s in
            let drag = try await s.tool.beginDrag(fromScene: s.sourceScene,
                                                  options: DragOptions(previews: [try DragPreview(title: "from the tool")]))
            _ = try await drag.move(to: DragStage.overTarget)
            #expect(s.targetEvents.dragOf(s.targetScene).contains("previews \(s.targetScene) from the tool|-"))
            try await drag.cancel()
        }
        let made = DropSession(id: "1", location: .zero, types: [], numberOfItems: 1, allowsMoveOperation: false,
                               isLocal: false, pasteboardName: "org.ferry.drag.1")
        await #expect { _ = try await made.previews() } throws: { ($0 as? FerryError)?.code == .unavailable }
    }

    @Test("the model refuses what could smuggle a representation, naming the key: no PNG, text chunks, over 256 KiB, a title of two lines or 201 characters, nothing at all")
    func modelLimits() throws {
        let image = try Self.samplePNG()
        /// "accepted", or the error's code and key path ("InvalidArgument at image").
        func code(_ body: () throws -> Void) -> String {
            do { try body(); return "accepted" } catch let error as FerryModelError {
                return "\(error.code) at \(error.keyPath ?? "-")"
            } catch { return "\(error)" }
        }
        #expect(code { _ = try DragPreview(title: "ok", image: image) } == "accepted")
        #expect(code { _ = try DragPreview(title: "👩‍💻 at work") } == "accepted")
        #expect(code { _ = try DragPreview(image: Data("GIF89a".utf8)) } == "InvalidArgument at image")
        var text = image
        text.insert(contentsOf: [0, 0, 0, 1] + Array("tEXt".utf8) + [0x41, 0, 0, 0, 0], at: image.count - 12)
        #expect(code { _ = try DragPreview(image: text) } == "InvalidArgument at image")
        #expect(code { _ = try DragPreview(image: image + [0]) } == "InvalidArgument at image")
        #expect(code { _ = try DragPreview(image: image.prefix(image.count - 12)) } == "InvalidArgument at image")
        var big = image
        big.insert(contentsOf: [0, 4, 0, 0] + Array("IDAT".utf8) + [UInt8](repeating: 0, count: 1 << 18) + [0, 0, 0, 0],
                   at: image.count - 12)
        #expect(code { _ = try DragPreview(image: big) } == "TooLarge at image")
        #expect(code { _ = try DragPreview(title: "one\ntwo") } == "InvalidArgument at title")
        #expect(code { _ = try DragPreview(title: "\u{202E}txt.exe") } == "InvalidArgument at title")
        #expect(code { _ = try DragPreview(title: String(repeating: "x", count: 201)) } == "TooLarge at title")
        #expect(code { _ = try DragPreview(title: "") } == "InvalidArgument at -")
    }
}
