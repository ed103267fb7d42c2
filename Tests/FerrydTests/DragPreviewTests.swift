import DBus
import FerryTestSupport
import Foundation
import Testing

/// Drag previews through the real ferryd (`DragManager1.SetPreviews` / `Previews` / `LastDrag`):
/// who may set and see them, and what is refused.
@Suite("ferryd drags: item previews", .serialized)
struct DragPreviewTests {
    /// A real 16×16 RGB PNG from the fixtures.
    static func samplePNG() throws -> [UInt8] {
        [UInt8](try Data(contentsOf: TestPaths.packageRoot.appendingPathComponent("Fixtures/Payloads/sample.png")))
    }

    /// `sample.png` with a chunk of `type` carrying `body` put before its IEND.
    static func png(inserting type: String, _ body: [UInt8]) throws -> [UInt8] {
        let sample = try samplePNG()
        let end = sample.count - 12
        let length = UInt32(body.count)
        let chunk = [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
            + Array(type.utf8) + body + [0, 0, 0, 0]
        return Array(sample[..<end]) + chunk + Array(sample[end...])
    }

    static func preview(title: String? = nil, image: [UInt8]? = nil) -> DBusValue {
        var entries: [String: DBusValue] = [:]
        if let title { entries["title"] = .string(title) }
        if let image { entries["image"] = .bytes(image) }
        return entries.dbusValue
    }

    static func setPreviews(_ connection: Connection, _ session: ObjectPath, _ previews: [DBusValue]) async throws {
        _ = try await connection.call(destination: FerrydFixture.broker, path: DragBus.path, interface: DragBus.interface,
                                      member: "SetPreviews", body: [.objectPath(session), .array(of: "a{sv}", previews)],
                                      timeout: .seconds(10))
    }

    /// Previews' answer as (title, image) pairs ("" and [] for absent keys).
    static func previews(_ connection: Connection, _ session: ObjectPath) async throws -> [(title: String, image: [UInt8])] {
        let reply = try await connection.call(destination: FerrydFixture.broker, path: DragBus.path, interface: DragBus.interface,
                                              member: "Previews", body: [.objectPath(session)], timeout: .seconds(10))
        guard case .array(_, let elements) = reply[0].unwrappingVariants else { return [] }
        return try elements.map { element in
            let entries = try element.unwrappingVariants.get(VariantDictionary.self)
            return ((try? entries.value(forKey: "title", as: String.self)) ?? "",
                    (try? entries.value(forKey: "image", as: [UInt8].self)) ?? [])
        }
    }

    @Test("the initiator sets a title and a PNG; the target reads them only once the drag entered its scene, never the content; LastDrag shows them until the end")
    func targetSeesPreviewOnlyOnceEntered() async throws {
        let stage = try await DragStage.start()
        defer { stage.stop() }
        let (session, _) = try await DragBus.begin(stage.tool, scene: stage.notesScene)
        let image = try Self.samplePNG()
        try await Self.setPreviews(stage.tool, session, [Self.preview(title: "Shopping list", image: image)])

        // Before the drag enters its scene the gallery is not a party.
        #expect(await DragBus.errorName { _ = try await Self.previews(stage.gallery.connection, session) }
                == "org.ferry.Error.PermissionDenied")
        #expect(try await DragBus.move(stage.tool, session, 1300, 400).target == stage.galleryScene)
        let seen = try await Self.previews(stage.gallery.connection, session)
        #expect(seen.map(\.title) == ["Shopping list"])
        #expect(seen.first?.image == image)
        // The preview is all it sees of the content before the drop.
        #expect(await FakeAppLog.tryRead(stage.gallery.connection, "org.ferry.drag.1") == "org.ferry.Error.PermissionDenied")
        // The source app sees them too; it may replace them.
        #expect(try await Self.previews(stage.notes.connection, session).map(\.title) == ["Shopping list"])

        let running = try await DragBus.lastDrag(stage.tool)
        let shown = try #require(try? running.value(forKey: "preview", as: VariantDictionary.self))
        #expect(DragBus.string(shown, "title") == "Shopping list")
        #expect((try? shown.value(forKey: "image", as: [UInt8].self)) == image)

        _ = try await DragBus.drop(stage.tool, session)
        let ended = try await DragBus.lastDrag(stage.tool)
        #expect(ended["preview"] == nil, "a preview goes with its drag")
        #expect(await DragBus.errorName { _ = try await Self.previews(stage.tool, session) } == "org.ferry.Error.NotFound")
    }

    @Test("refused with a named error: not a PNG, text or private chunks, over 256 KiB, a title with a newline or over 200 characters, more previews than items; nothing changes")
    func refusals() async throws {
        let stage = try await DragStage.start()
        defer { stage.stop() }
        let (session, _) = try await DragBus.begin(stage.tool, scene: stage.notesScene)
        try await Self.setPreviews(stage.tool, session, [Self.preview(title: "kept")])
        // sample.png with a second IDAT making it exactly 256 KiB; one byte more is over.
        let sampleSize = try Self.samplePNG().count
        let big = try Self.png(inserting: "IDAT", [UInt8](repeating: 0, count: 256 * 1024 - sampleSize - 12))
        let over = try Self.png(inserting: "IDAT", [UInt8](repeating: 0, count: 256 * 1024 - sampleSize - 11))
        let cases: [(String, [DBusValue], String)] = [
            ("not a PNG", [Self.preview(image: Array("hello, world".utf8))], "org.ferry.Error.InvalidArgument"),
            ("a tEXt chunk", [Self.preview(image: try Self.png(inserting: "tEXt", Array("secret\u{0}the representation".utf8)))],
             "org.ferry.Error.InvalidArgument"),
            ("a private chunk", [Self.preview(image: try Self.png(inserting: "smUG", [1, 2, 3]))], "org.ferry.Error.InvalidArgument"),
            ("bytes after IEND", [Self.preview(image: try Self.samplePNG() + [0])], "org.ferry.Error.InvalidArgument"),
            ("over 256 KiB", [Self.preview(image: over)], "org.ferry.Error.TooLarge"),
            ("a title with a newline", [Self.preview(title: "one\ntwo")], "org.ferry.Error.InvalidArgument"),
            ("a long title", [Self.preview(title: String(repeating: "x", count: 201))], "org.ferry.Error.TooLarge"),
            ("a title as bytes", [["title": DBusValue.bytes([0x41])].dbusValue], "org.ferry.Error.InvalidArgument"),
            ("two previews for one item", [Self.preview(title: "a"), Self.preview(title: "b")], "org.ferry.Error.InvalidArgument"),
        ]
        for (what, previews, expected) in cases {
            let failure = await FerrydFixture.failure { try await Self.setPreviews(stage.tool, session, previews) }
            #expect(failure?.name == expected, "\(what): \(failure.map { "\($0.name): \($0.message)" } ?? "accepted")")
            #expect(failure?.message.hasPrefix(what == "two previews for one item" ? "previews: " : "previews[0].") == true,
                    "\(what): the error names the key: \(failure?.message ?? "")")
        }
        #expect(try await Self.previews(stage.tool, session).map(\.title) == ["kept"])
        // A preview exactly at the cap is taken.
        #expect(big.count == 256 * 1024)
        try await Self.setPreviews(stage.tool, session, [Self.preview(image: big)])
        #expect(try await Self.previews(stage.tool, session).first?.image.count == big.count)
    }

    @Test("previews count against the caller's memory budget: past it SetPreviews is TooLarge and the old ones stay; the drag's end gives the memory back")
    func memoryBudget() async throws {
        // 400 KiB per caller: two drags' 256 KiB images do not fit at once.
        let stage = try await DragStage.start(["--caller-memory-budget", "400K"])
        defer { stage.stop() }
        let sampleSize = try Self.samplePNG().count
        let image = try Self.png(inserting: "IDAT", [UInt8](repeating: 0, count: 256 * 1024 - sampleSize - 12))
        let first = try await DragBus.begin(stage.tool, scene: stage.notesScene).session
        try await Self.setPreviews(stage.tool, first, [Self.preview(title: "first", image: image)])
        let second = try await DragBus.begin(stage.tool, scene: stage.notesScene).session
        try await Self.setPreviews(stage.tool, second, [Self.preview(title: "small")])
        #expect(await DragBus.errorName { try await Self.setPreviews(stage.tool, second, [Self.preview(image: image)]) }
                == "org.ferry.Error.TooLarge")
        #expect(try await Self.previews(stage.tool, second).map(\.title) == ["small"])
        try await DragBus.cancel(stage.tool, first)
        try await Self.setPreviews(stage.tool, second, [Self.preview(image: image)])
        #expect(try await Self.previews(stage.tool, second).first?.image == image)
    }

    @Test("only the source app and the initiator set previews, and not once the drop started; a bad session path is InvalidArgument")
    func whoSets() async throws {
        let stage = try await DragStage.start(gallery: .init(performDelay: .seconds(2)))
        defer { stage.stop() }
        let (session, _) = try await DragBus.begin(stage.tool, scene: stage.notesScene)
        _ = try await DragBus.move(stage.tool, session, 1300, 400)
        #expect(await DragBus.errorName { try await Self.setPreviews(stage.gallery.connection, session, [Self.preview(title: "mine")]) }
                == "org.ferry.Error.PermissionDenied")
        try await Self.setPreviews(stage.notes.connection, session, [Self.preview(title: "from the source")])
        #expect(try await Self.previews(stage.gallery.connection, session).map(\.title) == ["from the source"])
        #expect(await DragBus.errorName { try await Self.setPreviews(stage.tool, "/org/ferry/Drag/x", []) }
                == "org.ferry.Error.InvalidArgument")
        #expect(await DragBus.errorName { try await Self.setPreviews(stage.tool, "/org/ferry/Drag/99", []) }
                == "org.ferry.Error.NotFound")
        let drop = Task { try await DragBus.drop(stage.tool, session) }
        try await stage.gallery.waitForCalls { $0.contains { $0.member == "PerformDrop" } }
        #expect(await DragBus.errorName { try await Self.setPreviews(stage.notes.connection, session, [Self.preview(title: "late")]) }
                == "org.ferry.Error.PermissionDenied")
        _ = try await drop.value
    }
}
