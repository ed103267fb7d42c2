import DBus
import FerryModel
import FerryTestSupport
import Foundation
import Testing

/// Drops at a screen's edge that open a new scene (DragManager1's edge drop).
@Suite("ferryd drags: the edge drop", .serialized)
struct DragEdgeTests {
    /// A note: text plus an open-note activity carrying its id.
    static func noteItem(_ type: String = "org.ferry.notes.open-note") throws -> DBusValue {
        FerrydFixture.item([
            FerrydFixture.representation("public.utf8-plain-text", "a dragged note"),
            try DragBus.activityRepresentation(type, userInfo: ["noteID": .string("note-42")]),
        ])
    }

    static func frame(_ connection: Connection, _ id: String) async throws -> [Double] {
        try SceneBus.frame(try #require(try await SceneBus.session(connection, id)))
    }

    @Test("a note dropped at the right edge opens a Notes scene with the activity, in the right half")
    func activityOpensScene() async throws {
        let stage = try await DragStage.start(notes: .init(items: [try Self.noteItem()]))
        defer { stage.stop() }
        let (session, _) = try await DragBus.begin(stage.tool, scene: stage.notesScene)
        #expect(try await DragBus.move(stage.tool, session, 1910, 500) == .init(operation: "copy", edge: "right"))
        let outcome = try await DragBus.drop(stage.tool, session)
        #expect(DragBus.string(outcome, "operation") == "copy")
        #expect(DragBus.string(outcome, "app") == "org.ferry.notes")
        let newSession = DragBus.string(outcome, "newSession")
        #expect(!newSession.isEmpty && newSession != stage.notesScene)

        let calls = try await stage.notes.waitForCalls { $0.contains { $0.member == "ConnectScene" && $0.scene == newSession } }
        let connect = try #require(calls.first { $0.member == "ConnectScene" && $0.scene == newSession })
        let options = try VariantDictionary(dbusValue: connect.arguments[1].unwrappingVariants)
        guard case .array(_, let elements)? = options["userActivities"]?.unwrappingVariants else {
            Issue.record("no userActivities in \(options)")
            return
        }
        let activities = try elements.map { try VariantDictionary(dbusValue: $0.unwrappingVariants) }
        #expect(activities.count == 1)
        #expect(DragBus.string(try #require(activities.first), "activityType") == "org.ferry.notes.open-note")
        let userInfo = try #require(activities.first).value(forKey: "userInfo", as: VariantDictionary.self)
        #expect(userInfo["noteID"]?.unwrappingVariants == .string("note-42"))
        #expect(try await Self.frame(stage.tool, newSession) == [960, 0, 960, 1080])
        // The scene beneath (Gallery's, the front-most) takes the other half.
        #expect(try await Self.frame(stage.tool, stage.galleryScene) == [0, 0, 960, 1080])

        let ended = try await stage.notes.waitForCalls { $0.contains { $0.member == "DragEnded" } }
        let dragEnded = try #require(ended.first { $0.member == "DragEnded" })
        #expect(dragEnded.dictionary["newSession"]?.unwrappingVariants == .string(newSession))
        let last = try await DragBus.lastDrag(stage.tool)
        #expect(DragBus.points(last).last?.target == "edge:right")
        #expect(DragBus.string(last, "newSession") == newSession)
    }

    @Test("an activity only another app declares opens that app's scene (Gallery's photo from Notes)")
    func otherAppDeclares() async throws {
        let stage = try await DragStage.start(notes: .init(items: [try Self.noteItem("org.ferry.gallery.view-photo")]))
        defer { stage.stop() }
        let (session, _) = try await DragBus.begin(stage.tool, scene: stage.notesScene)
        #expect(try await DragBus.move(stage.tool, session, 10, 500) == .init(operation: "copy", edge: "left"))
        let outcome = try await DragBus.drop(stage.tool, session)
        #expect(DragBus.string(outcome, "app") == "org.ferry.gallery")
        #expect(try await Self.frame(stage.tool, DragBus.string(outcome, "newSession")) == [0, 0, 960, 1080])
    }

    @Test("an activity no app declares: no edge offered while moving, and the drop ends as cancel with a reason")
    func undeclaredActivity() async throws {
        let stage = try await DragStage.start(notes: .init(items: [try Self.noteItem("org.example.nobody")]))
        defer { stage.stop() }
        let (session, _) = try await DragBus.begin(stage.tool, scene: stage.notesScene)
        #expect(try await DragBus.move(stage.tool, session, 1910, 500) == .init(operation: "cancel"))
        let outcome = try await DragBus.drop(stage.tool, session)
        #expect(DragBus.string(outcome, "operation") == "cancel")
        #expect(DragBus.string(outcome, "reason").contains("no app declares the activity type \"org.example.nobody\""))
        #expect(try await SceneBus.sessions(stage.tool).count == 2)
    }

    @Test("a file item opens the first app whose document types accept it, with the URL in the options")
    func fileOpensDocumentApp() async throws {
        let url = "file:///tmp/ferry-drag-photo.png"
        let item = FerrydFixture.item([FerrydFixture.representation("public.file-url", url)])
        let stage = try await DragStage.start(notes: .init(items: [item]))
        defer { stage.stop() }
        let (session, _) = try await DragBus.begin(stage.tool, scene: stage.notesScene)
        #expect(try await DragBus.move(stage.tool, session, 1900, 500).edge == "right")
        let outcome = try await DragBus.drop(stage.tool, session)
        #expect(DragBus.string(outcome, "app") == "org.ferry.gallery")
        let newSession = DragBus.string(outcome, "newSession")
        let calls = try await stage.gallery.waitForCalls { $0.contains { $0.member == "ConnectScene" && $0.scene == newSession } }
        let connect = try #require(calls.first { $0.member == "ConnectScene" && $0.scene == newSession })
        let options = try VariantDictionary(dbusValue: connect.arguments[1].unwrappingVariants)
        #expect(try options.value(forKey: "urls", as: [String].self) == [url])
    }

    @Test("dragging an app's icon to an edge opens its default configuration there; elsewhere it does nothing")
    func appIconDrag() async throws {
        let stage = try await DragStage.start()
        defer { stage.stop() }
        let (session, pasteboard) = try await DragBus.begin(stage.tool, scene: "", ["app": "org.ferry.gallery"])
        #expect(!pasteboard.rawValue.isEmpty)
        #expect(try await DragBus.property(stage.tool, session, "SourceApp") == .string("org.ferry.gallery"))
        #expect(try await DragBus.property(stage.tool, session, "SourceSession") == .string(""))
        // Over a scene nothing happens: an icon enters no scene.
        #expect(try await DragBus.move(stage.tool, session, 300, 300) == .init(operation: "cancel"))
        #expect(try await DragBus.move(stage.tool, session, 5, 500) == .init(operation: "copy", edge: "left"))
        let outcome = try await DragBus.drop(stage.tool, session)
        #expect(DragBus.string(outcome, "app") == "org.ferry.gallery")
        let newSession = DragBus.string(outcome, "newSession")
        _ = try await stage.gallery.waitForCalls { $0.contains { $0.member == "ConnectScene" && $0.scene == newSession } }
        #expect(try await Self.frame(stage.tool, newSession) == [0, 0, 960, 1080])
        #expect(stage.notes.dragCalls.isEmpty)
        let last = try await DragBus.lastDrag(stage.tool)
        #expect(DragBus.string(last, "app") == "org.ferry.gallery")

        // Dropped in the middle of the screen: cancel, with a reason.
        let (second, _) = try await DragBus.begin(stage.tool, scene: "", ["app": "org.ferry.gallery"])
        _ = try await DragBus.move(stage.tool, second, 900, 900)
        let nothing = try await DragBus.drop(stage.tool, second)
        #expect(DragBus.string(nothing, "operation") == "cancel")
        #expect(DragBus.string(nothing, "reason").contains("edge"))
    }

    @Test("in a split view the scenes beneath both edges refuse the note: the drop opens a new scene, no scene performs")
    func splitViewEdge() async throws {
        // The source proposes cancel over itself (a note is not dropped onto itself), Gallery forbidden.
        let stage = try await DragStage.start(notes: .init(proposal: "cancel", items: [try Self.noteItem()]),
                                              gallery: .init(proposal: "forbidden"))
        defer { stage.stop() }
        for (x, side, beneath) in [(10.0, "left", stage.notesScene), (1910.0, "right", stage.galleryScene)] {
            // The split view (again: the first edge drop rearranges the halves).
            try await stage.notes.setFrame(stage.notesScene, 0, 0, 960, 1080)
            try await stage.gallery.setFrame(stage.galleryScene, 960, 0, 960, 1080)
            let (session, _) = try await DragBus.begin(stage.tool, scene: stage.notesScene)
            #expect(try await DragBus.move(stage.tool, session, x, 500) == .init(operation: "copy", target: beneath, edge: side))
            let outcome = try await DragBus.drop(stage.tool, session)
            #expect(DragBus.string(outcome, "operation") == "copy")
            #expect(DragBus.string(outcome, "target").isEmpty, "no scene performed: \(outcome)")
            let newSession = DragBus.string(outcome, "newSession")
            #expect(!newSession.isEmpty && newSession != stage.notesScene, "\(outcome)")
            _ = try await stage.notes.waitForCalls { $0.contains { $0.member == "ConnectScene" && $0.scene == newSession } }
            #expect(try await Self.frame(stage.tool, newSession) == (side == "left" ? [0, 0, 960, 1080] : [960, 0, 960, 1080]))
            let last = try await DragBus.lastDrag(stage.tool)
            #expect(DragBus.points(last).last?.target == "edge:\(side)")
            #expect(DragBus.string(last, "newSession") == newSession)
        }
        #expect(!stage.notes.calls.contains { $0.member == "PerformDrop" }, "\(stage.notes.dragCalls.map(\.member))")
        #expect(!stage.gallery.calls.contains { $0.member == "PerformDrop" }, "\(stage.gallery.dragCalls.map(\.member))")
        #expect(try await SceneBus.sessions(stage.tool).count == 4)
    }

    @Test("a single-scene app that has its scene is not offered the edge; the drop there ends as cancel saying why")
    func singleSceneApp() async throws {
        let stage = try await DragStage.start(notes: .init(items: [try Self.noteItem()]), notesSingleScene: true)
        defer { stage.stop() }
        let (session, _) = try await DragBus.begin(stage.tool, scene: stage.notesScene)
        #expect(try await DragBus.move(stage.tool, session, 1910, 500) == .init(operation: "cancel"))
        let outcome = try await DragBus.drop(stage.tool, session)
        #expect(DragBus.string(outcome, "operation") == "cancel")
        #expect(DragBus.string(outcome, "reason").contains("org.ferry.notes does not support multiple scenes"), "\(outcome)")
        #expect(try await SceneBus.sessions(stage.tool).count == 2)

        // Its icon neither: the app cannot open a second scene.
        let (icon, _) = try await DragBus.begin(stage.tool, scene: "", ["app": "org.ferry.notes"])
        #expect(try await DragBus.move(stage.tool, icon, 5, 500) == .init(operation: "cancel"))
        // Gallery supports multiple scenes: its icon is offered the edge.
        let (other, _) = try await DragBus.begin(stage.tool, scene: "", ["app": "org.ferry.gallery"])
        #expect(try await DragBus.move(stage.tool, other, 5, 500) == .init(operation: "copy", edge: "left"))
        try await DragBus.cancel(stage.tool, icon)
        try await DragBus.cancel(stage.tool, other)
    }
}
