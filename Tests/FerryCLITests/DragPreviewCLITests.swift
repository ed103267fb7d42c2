import DBus
import FerryTestSupport
import Foundation
import Testing

@Suite("ferry drag --preview-*, and ferry desktop drawing a running drag's preview")
struct DragPreviewCLITests {
    static let broker: BusName = "org.ferry.Broker"

    /// `DragManager1.BeginDrag` from `scene` as `connection` (the source app provides its `item`).
    static func begin(_ connection: Connection, scene: String, item: UInt32) async throws -> ObjectPath {
        try await connection.call(destination: broker, path: "/org/ferry/Drag", interface: "org.ferry.DragManager1",
                                  member: "BeginDrag", body: [.string(scene), ["item": DBusValue.uint32(item)].dbusValue],
                                  timeout: .seconds(20))[0].get(ObjectPath.self)
    }

    static func session(_ connection: Connection, _ session: ObjectPath, _ member: MemberName, _ body: [DBusValue] = []) async throws {
        _ = try await connection.call(destination: broker, path: session, interface: "org.ferry.DragSession1",
                                      member: member, body: body, timeout: .seconds(20))
    }

    @Test("a Gallery photo dragged to 1500,700: the SVG shows its preview card there (its name and the PNG), the summary and JSON name it; gone once cancelled")
    func desktopDrawsPreview() async throws {
        try await CLIBroker.with { broker in
            let (notes, gallery) = try await DragDemo.both(on: broker)
            defer { notes.stop(); gallery.stop() }
            let galleryID = try #require(try await broker.sceneIDs("org.ferry.gallery").first)
            let notesID = try #require(try await broker.sceneIDs("org.ferry.notes").first)
            let tool = try await Connection(address: broker.bus.address)
            defer { Task { await tool.close(gracePeriod: .zero) } }
            // Gallery's second photo (by id): lake.png.
            let drag = try await Self.begin(tool, scene: galleryID, item: 2)
            try await Self.session(tool, drag, "Move", [.structure([.double(1500), .double(700)])])

            let svg = try await broker.ferry("desktop", "--svg", "-")
            #expect(svg.status == 0, "\(svg.summary)")
            let card = try #require(svg.stdout.components(separatedBy: "<g class=\"drag-preview\">").dropFirst().first?
                .components(separatedBy: "</g>").first, "no preview card: \(svg.stdout.suffix(800))")
            // The card sits right below the drag's point: its image centred above the title.
            #expect(card.contains("<rect x=\"1512\" y=\"712\""), "\(card.prefix(300))")
            let lake = try Data(contentsOf: TestPaths.fixtures.appendingPathComponent("Apps/Gallery/Content/lake.png"))
            #expect(card.contains("<image xmlns:xlink=\"http://www.w3.org/1999/xlink\" x=\"1520\" y=\"720\" width=\"64\"")
                    && card.contains("href=\"data:image/png;base64,\(lake.base64EncodedString())\""), "\(card.prefix(400))")
            #expect(card.contains(">lake</text>"), "\(card)")

            let text = try await broker.ferry("desktop")
            #expect(text.stdout.contains(", showing \"lake\" and a \(lake.count)-byte image)"), "\(text.stdout)")
            let json = try await broker.json("desktop")
            let last = try #require(json["lastDrag"] as? [String: Any])
            #expect(last.string("previewTitle") == "lake" && last["previewImageBytes"] as? Int == lake.count)
            let png = broker.folder.appendingPathComponent("preview.png")
            #expect(try await broker.ferry("desktop", "--png", png.path).status == 0)

            // Over the Notes scene (the strip Gallery's scene in front leaves uncovered), Notes sees
            // the preview's title before any drop.
            let notesFrame = try #require(try await broker.scenes(app: "org.ferry.notes").first?.frame)
            let galleryFrame = try #require(try await broker.scenes(app: "org.ferry.gallery").first?.frame)
            try #require(notesFrame[0] < galleryFrame[0], "Notes \(notesFrame), Gallery \(galleryFrame)")
            try await Self.session(tool, drag, "Move", [.structure([.double((notesFrame[0] + galleryFrame[0]) / 2),
                                                                    .double(notesFrame[1] + notesFrame[3] / 2)])])
            #expect(await eventually { notes.standardOutput.contains("drop-entered \(notesID) copy drag=1") })
            #expect(notes.standardOutput.contains("preview=lake"), "\(notes.standardOutput)")
            #expect(!notes.standardOutput.contains("drop-performed"))

            try await Self.session(tool, drag, "Cancel")
            let after = try await broker.ferry("desktop", "--svg", "-")
            #expect(!after.stdout.contains("drag-preview"), "a preview goes with its drag")
        }
    }

    @Test("--preview-title and --preview-image: refused with status 64 and one line naming the option; a good one drags")
    func options() async throws {
        try await CLIBroker.with { broker in
            let (notes, gallery) = try await DragDemo.both(on: broker)
            defer { notes.stop(); gallery.stop() }
            let text = try broker.file("not-a-png.png", Data("just text".utf8))
            let refused = try await broker.ferry("drag", "--from", "org.ferry.notes", "--to", "org.ferry.gallery",
                                                 "--preview-image", text.path)
            #expect(refused.status == 64, "\(refused.summary)")
            #expect(refused.stderr.contains("--preview-image") && refused.stderr.contains("must be a PNG"), "\(refused.stderr)")
            #expect(refused.stdout.isEmpty, "nothing was dragged")
            var big = try payload("sample.png")
            big.insert(contentsOf: [0, 4, 0, 0] + Array("IDAT".utf8) + [UInt8](repeating: 0, count: 1 << 18) + [0, 0, 0, 0],
                       at: big.count - 12)
            let large = try broker.file("large.png", big)
            let tooLarge = try await broker.ferry("drag", "--from", "org.ferry.notes", "--to", "org.ferry.gallery",
                                                  "--preview-image", large.path)
            #expect(tooLarge.status == 64 && tooLarge.stderr.contains("at most 256 KiB"), "\(tooLarge.summary)")
            let twoLines = try await broker.ferry("drag", "--from", "org.ferry.notes", "--to", "org.ferry.gallery",
                                                  "--preview-title", "two\nlines")
            #expect(twoLines.status == 64 && twoLines.stderr.contains("--preview-title"), "\(twoLines.summary)")
            let icon = try await broker.ferry("drag", "--app", "org.ferry.notes", "--edge", "left", "--preview-title", "x")
            #expect(icon.status == 64 && icon.stderr.contains("--preview-title does not apply to --app"), "\(icon.summary)")
            let missing = try await broker.ferry("drag", "--from", "org.ferry.notes", "--to", "org.ferry.gallery",
                                                 "--preview-image", broker.folder.appendingPathComponent("none.png").path)
            #expect(missing.status == 2, "\(missing.summary)")

            // A good preview: the target sees its title before the drop.
            let notesID = try #require(try await broker.sceneIDs("org.ferry.notes").first)
            let dragged = try await broker.ferry("drag", "--from", "org.ferry.gallery", "--to", "org.ferry.notes",
                                                 "--text", "hello", "--preview-title", "Hello card",
                                                 "--preview-image", TestPaths.fixtures.appendingPathComponent("Payloads/sample.png").path)
            #expect(dragged.status == 0, "\(dragged.summary)")
            #expect(await eventually { notes.standardOutput.contains("drop-entered \(notesID) copy drag=1") })
            #expect(notes.standardOutput.contains("preview=Hello card"), "\(notes.standardOutput)")
        }
    }
}
