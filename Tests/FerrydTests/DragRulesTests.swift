import DBus
import FerryTestSupport
import Foundation
import Testing

/// The rules of drags: who sees what, when the items may be read, and what ends a drag.
@Suite("ferryd drags: the rules", .serialized)
struct DragRulesTests {
    @Test("a restricted drag is invisible to other apps: their scenes are never entered and they cannot see its items")
    func restrictedIsInvisible() async throws {
        let stage = try await DragStage.start(notes: .init(restricts: true))
        defer { stage.stop() }
        let (session, _) = try await DragBus.begin(stage.tool, scene: stage.notesScene)
        #expect(try await DragBus.property(stage.tool, session, "RestrictedToApp") == .boolean(true))
        #expect(try await DragBus.move(stage.tool, session, 1300, 400) == .init(operation: "cancel"))
        #expect(try await DragBus.move(stage.tool, session, 1310, 400) == .init(operation: "cancel"))
        #expect(await stage.gallery.tryItems("org.ferry.drag.1") == "org.ferry.Error.PermissionDenied")
        // Its own app's scenes are entered as usual.
        #expect(try await DragBus.move(stage.tool, session, 300, 300) == .init(operation: "copy", target: stage.notesScene))
        let outcome = try await DragBus.drop(stage.tool, session)
        #expect(DragBus.string(outcome, "operation") == "copy")
        #expect(stage.gallery.dragCalls.isEmpty)
    }

    @Test("before the drop a target sees the metadata but cannot read; during PerformDrop it reads")
    func readingOnlyDuringPerform() async throws {
        let stage = try await DragStage.start(gallery: .init(probeOnEnter: true))
        defer { stage.stop() }
        // Before the drag enters its scene, Gallery may not even see the items.
        let (session, _) = try await DragBus.begin(stage.tool, scene: stage.notesScene)
        #expect(await stage.gallery.tryItems("org.ferry.drag.1") == "org.ferry.Error.PermissionDenied")
        _ = try await DragBus.move(stage.tool, session, 1300, 400)
        #expect(stage.gallery.probes == ["Items during DropEntered: ok 1",
                                         "Read during DropEntered: org.ferry.Error.PermissionDenied"])
        #expect(await stage.gallery.tryItems("org.ferry.drag.1") == "ok 1")
        _ = try await DragBus.drop(stage.tool, session)
        #expect(stage.gallery.probes.last == "Read during PerformDrop: ok dragged text")
    }

    @Test("a tool scripting a drag cannot read the items; writing after the drop started is refused")
    func initiatorCannotRead() async throws {
        let stage = try await DragStage.start()
        defer { stage.stop() }
        let (session, pasteboard) = try await DragBus.begin(stage.tool, scene: stage.notesScene, ["items": "initiator"])
        try await FerrydFixture.setItems(stage.tool, [FerrydFixture.item([FerrydFixture.representation("public.utf8-plain-text", "from the tool")])],
                                         at: pasteboard)
        #expect(stage.notes.dragCalls.isEmpty)  // no ProvideDragItems: the tool wrote them
        let read = await DragBus.errorName { _ = try await FerrydFixture.read(stage.tool, 0, "public.plain-text", at: pasteboard) }
        #expect(read == "org.ferry.Error.PermissionDenied")
        _ = try await DragBus.move(stage.tool, session, 1300, 400)
        let outcome = try await DragBus.drop(stage.tool, session)
        #expect(DragBus.string(outcome, "message") == "dropped: ok from the tool")
    }

    @Test("the source app dying mid-drag ends it as cancel: DropExited and DropEnded at the target within 1 s")
    func sourceKilled() async throws {
        let stage = try await DragStage.start()
        defer { stage.stop() }
        let (session, _) = try await DragBus.begin(stage.tool, scene: stage.notesScene)
        _ = try await DragBus.move(stage.tool, session, 1300, 400)
        let killed = ContinuousClock.now
        await stage.notes.quit()
        let calls = try await stage.gallery.waitForCalls(timeout: .seconds(5)) { $0.contains { $0.member == "DropEnded" } }
        let exited = try #require(calls.first { $0.member == "DropExited" })
        let ended = try #require(calls.first { $0.member == "DropEnded" })
        #expect(ended.string(2) == "cancel")
        #expect(exited.at - killed < .seconds(1) && ended.at - killed < .seconds(1), "took \(ended.at - killed)")
        let gone = await DragBus.errorName { _ = try await DragBus.move(stage.tool, session, 1300, 400) }
        #expect(gone != "")
        let last = try await DragBus.lastDrag(stage.tool)
        #expect(DragBus.string(last, "operation") == "cancel")
        #expect(DragBus.string(last, "reason").contains("went away"))
    }

    @Test("the initiator going away ends its drag as cancel")
    func initiatorGone() async throws {
        let stage = try await DragStage.start()
        defer { stage.stop() }
        let tool = try await stage.fixture.connect()
        let (session, _) = try await DragBus.begin(tool, scene: stage.notesScene)
        _ = try await DragBus.move(tool, session, 1300, 400)
        await tool.close(gracePeriod: .zero)
        let calls = try await stage.notes.waitForCalls(timeout: .seconds(5)) { $0.contains { $0.member == "DragEnded" } }
        #expect(calls.first { $0.member == "DragEnded" }?.string(2) == "cancel")
        try await stage.gallery.waitForCalls(timeout: .seconds(5)) { $0.contains { $0.member == "DropEnded" } }
    }

    @Test("a drag left alone for the idle timeout ends as cancel")
    func idleTimeout() async throws {
        let stage = try await DragStage.start(["--drag-idle-timeout", "1"])
        defer { stage.stop() }
        let (session, _) = try await DragBus.begin(stage.tool, scene: stage.notesScene)
        _ = try await DragBus.move(stage.tool, session, 1300, 400)
        let calls = try await stage.notes.waitForCalls(timeout: .seconds(10)) { $0.contains { $0.member == "DragEnded" } }
        #expect(calls.first { $0.member == "DragEnded" }?.string(2) == "cancel")
        let last = try await DragBus.lastDrag(stage.tool)
        #expect(DragBus.string(last, "reason").contains("for 1 s"))
    }

    @Test("a failing PerformDrop ends the drag as cancel with the target's error as reason")
    func performFails() async throws {
        let stage = try await DragStage.start(gallery: .init(performFailure: "org.ferry.Error.Unavailable"))
        defer { stage.stop() }
        let (session, _) = try await DragBus.begin(stage.tool, scene: stage.notesScene)
        _ = try await DragBus.move(stage.tool, session, 1300, 400)
        let outcome = try await DragBus.drop(stage.tool, session)
        #expect(DragBus.string(outcome, "operation") == "cancel")
        #expect(DragBus.string(outcome, "reason").contains("refuses the drop"))
        let calls = try await stage.gallery.waitForCalls { $0.contains { $0.member == "DropEnded" } }
        #expect(calls.last { $0.member == "DropEnded" }?.string(2) == "cancel")
    }

    @Test("nothing to drag: the source providing no items means NotFound, and no drag begins")
    func nothingToDrag() async throws {
        let stage = try await DragStage.start(notes: .init(items: []))
        defer { stage.stop() }
        let error = await FerrydFixture.failure { _ = try await DragBus.begin(stage.tool, scene: stage.notesScene) }
        #expect(error?.name == "org.ferry.Error.NotFound")
        #expect(error?.message.contains("nothing to drag") == true)
        #expect(try await DragBus.lastDrag(stage.tool).isEmpty)
    }

    @Test("LastDrag keeps every step: begin, each move with its scene and proposal, the drop")
    func lastDragSteps() async throws {
        let stage = try await DragStage.start()
        defer { stage.stop() }
        #expect(try await DragBus.lastDrag(stage.tool).isEmpty)
        let (session, _) = try await DragBus.begin(stage.tool, scene: stage.notesScene, ["location": .structure([.double(150), .double(150)])])
        _ = try await DragBus.move(stage.tool, session, 800, 400)
        _ = try await DragBus.move(stage.tool, session, 1300, 400)
        let running = try await DragBus.lastDrag(stage.tool)
        #expect(DragBus.string(running, "state") == "dragging")
        _ = try await DragBus.drop(stage.tool, session)
        let last = try await DragBus.lastDrag(stage.tool)
        #expect(try last.value(forKey: "id", as: UInt32.self) == 1)
        #expect(DragBus.string(last, "sourceApp") == "org.ferry.notes")
        #expect(DragBus.string(last, "sourceSession") == stage.notesScene)
        #expect(DragBus.string(last, "target") == stage.galleryScene)
        let points = DragBus.points(last)
        #expect(points.map(\.x) == [150, 800, 1300, 1300])
        #expect(points.map(\.target) == [stage.notesScene, "", stage.galleryScene, stage.galleryScene])
        #expect(points.map(\.operation) == ["cancel", "cancel", "copy", "copy"])
    }
}
