import DBus
import Ferry
import FerryModel
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// Two apps (two Ferry clients, each an ``Application``) and a scripting tool (a third client,
/// the initiator) on a private bus with the real ferryd: drags from one app's scene to the
/// other's, through the library's drag and drop API on both ends.
struct DragStage {
    let fixture: ClientFixture
    let sourceClient: FerryClient
    let source: Application
    let sourceEvents: DragEvents
    let sourceScene: String
    let targetClient: FerryClient
    let target: Application
    let targetEvents: DragEvents
    let targetScene: String
    let tool: FerryClient

    static let sourceFrame = Rect(x: 100, y: 100, width: 600, height: 400)
    static let targetFrame = Rect(x: 1000, y: 100, width: 600, height: 400)
    static let overSource = Point(x: 400, y: 300)
    static let overTarget = Point(x: 1300, y: 300)
    static let nowhere = Point(x: 900, y: 800)

    static func with(source sourceBehaviour: DragBehaviour, target targetBehaviour: DragBehaviour,
                     directConnections: Bool = false, _ body: (DragStage) async throws -> Void) async throws {
        try await ClientFixture.with(directConnections: directConnections) { fixture in
            let sourceClient = try await fixture.client()
            let sourceEvents = DragEvents()
            let source = try await Application.register(
                client: sourceClient, manifest: sceneTestManifest(appID: "org.ferry.test.source"),
                delegate: DragAppDelegate(events: sourceEvents, behaviour: sourceBehaviour))
            let targetClient = try await fixture.client()
            let targetEvents = DragEvents()
            let target = try await Application.register(
                client: targetClient, manifest: sceneTestManifest(appID: "org.ferry.test.target"),
                delegate: DragAppDelegate(events: targetEvents, behaviour: targetBehaviour))
            let tool = try await fixture.client()
            do {
                let sourceScene = try await Self.placedScene(of: source, at: Self.sourceFrame)
                let targetScene = try await Self.placedScene(of: target, at: Self.targetFrame)
                try await body(DragStage(fixture: fixture, sourceClient: sourceClient, source: source, sourceEvents: sourceEvents,
                                         sourceScene: sourceScene, targetClient: targetClient, target: target,
                                         targetEvents: targetEvents, targetScene: targetScene, tool: tool))
            } catch {
                await tool.close()
                await sourceClient.close()
                await targetClient.close()
                throw error
            }
            await tool.close()
            await sourceClient.close()
            await targetClient.close()
        }
    }

    /// The app's first scene, moved to `frame`.
    static func placedScene(of app: Application, at frame: Rect) async throws -> String {
        // In the foreground (active, or inactive once the other app's first scene came in front).
        try await eventually("the first scene of \(app.appID)") {
            guard let state = app.connectedScenes.first?.activationState else { return false }
            return state == .foregroundActive || state == .foregroundInactive
        }
        let scene = try #require(app.connectedScenes.first)
        try await scene.setFrame(frame)
        return scene.persistentIdentifier
    }

    /// Waits until `condition` holds (``FerryTestSupport/eventually(_:every:_:)``, 30 s at most);
    /// records an issue otherwise.
    static func eventually(_ what: String, sourceLocation: SourceLocation = #_sourceLocation,
                           _ condition: () async throws -> Bool) async throws {
        if !(try await FerryTestSupport.eventually(.seconds(30), condition)) {
            Issue.record("timed out waiting for \(what)", sourceLocation: sourceLocation)
        }
    }
}

@Suite("Ferry: drag and drop between two apps through the real ferryd")
struct DragEndToEndTests {
    static func sourceBehaviour(_ texts: [String] = ["note"]) -> DragBehaviour {
        var behaviour = DragBehaviour()
        behaviour.texts = texts
        return behaviour
    }

    @Test("copy across apps: the target enters, updates, performs reading the note, concludes; the source hears moves and the end")
    func copyAcrossApps() async throws {
        try await DragStage.with(source: Self.sourceBehaviour(), target: DragBehaviour()) { s in
            let drag = try await s.tool.beginDrag(fromScene: s.sourceScene)
            #expect(drag.pasteboardName == "org.ferry.drag.\(drag.id)")
            #expect(drag.path.rawValue == "/org/ferry/Drag/\(drag.id)")
            let outside = try await drag.move(to: DragStage.nowhere)
            #expect(outside == DragMove(proposal: .cancel, target: nil, edge: nil))
            let over = try await drag.move(to: DragStage.overTarget)
            #expect(over == DragMove(proposal: .copy, target: s.targetScene, edge: nil))
            let outcome = try await drag.drop()
            #expect(outcome.operation == .copy)
            #expect(outcome.target == s.targetScene)
            #expect(outcome.message == "dropped 1 text(s)")
            #expect(outcome.types == ["public.utf8-plain-text"])
            let t = s.targetScene
            try await DragStage.eventually("the target's end") { s.targetEvents.dragOf(t).last == "ended \(t) copy" }
            #expect(s.targetEvents.dragOf(t) == [
                "can \(t)", "enter \(t) public.utf8-plain-text", "update \(t) at=300,200",
                "perform \(t) copy note", "conclude \(t)", "ended \(t) copy",
            ])
            let source = s.sourceScene
            try await DragStage.eventually("the source's end") { s.sourceEvents.dragOf(source).last?.hasPrefix("dragEnd") == true }
            #expect(s.sourceEvents.dragOf(source) == [
                "items \(source) drag=\(drag.id) item=0 at=300,200 move=false",
                "moved \(source) drag=\(drag.id) 900,800 cancel",
                "moved \(source) drag=\(drag.id) 1300,300 copy",
                "dragEnd \(source) drag=\(drag.id) copy target=- new=-",
            ])
            // The drag is over: its session is gone.
            await #expect { try await drag.move(to: DragStage.overTarget) } throws: { ($0 as? FerryError)?.code == .notFound }
            // LastDrag has its path, with the proposal at each point.
            let record = try #require(try await s.tool.lastDrag())
            #expect(record.id == Int(drag.id))
            #expect(record.sourceApp == "org.ferry.test.source")
            #expect(record.sourceSession == source)
            #expect(record.operation == .copy)
            #expect(record.target == t)
            // Begin, each move, the drop.
            #expect(record.steps.map(\.location)
                    == [DragStage.overSource, DragStage.nowhere, DragStage.overTarget, DragStage.overTarget])
            #expect(record.steps.last?.target == t)
            #expect(record.steps.last?.operation == .copy)
        }
    }

    @Test("with direct connections, the tool's moves and the target's proposals never cross dbus-daemon; the source's Moved signals do")
    func movesGoDirect() async throws {
        try await DragStage.with(source: Self.sourceBehaviour(), target: DragBehaviour(), directConnections: true) { s in
            let drag = try await s.tool.beginDrag(fromScene: s.sourceScene)
            #expect(try await drag.move(to: DragStage.overTarget).proposal == .copy)
            #expect(await s.tool.usesDirectConnection)
            #expect(await s.targetClient.usesDirectConnection, "the target opened its direct connection when it registered")
            // Everything of the drag's interfaces that crosses the bus from here on.
            let monitor = try RunningProcess("dbus-monitor", ["--address", s.fixture.bus.address,
                                                              "interface=org.ferry.DragSession1", "interface=org.ferry.Client1"],
                                             environment: s.fixture.bus.environment())
            try await Task.sleep(for: .milliseconds(500))
            let moves = 20
            for step in 1...moves {
                let location = Point(x: DragStage.overTarget.x + Double(step), y: DragStage.overTarget.y)
                #expect(try await drag.move(to: location).proposal == .copy)
            }
            let source = s.sourceScene
            try await DragStage.eventually("the source's moves") {
                s.sourceEvents.dragOf(source).count(where: { $0.hasPrefix("moved") }) >= moves + 1
            }
            try await Task.sleep(for: .milliseconds(200))
            monitor.terminate()
            let seen = String(decoding: monitor.readToEnd().standardOutput, as: UTF8.self)
            #expect(seen.components(separatedBy: "member=Moved").count - 1 >= moves, "the monitor missed the bus's signals:\n\(seen)")
            #expect(!seen.contains("member=Move\n") && !seen.contains("member=DropUpdated"),
                    "a Move or a proposal crossed the bus:\n\(seen)")
            _ = try await drag.drop()
        }
    }

    @Test("move inside one app: a second scene of the source app takes the note with move; across apps a move is a copy")
    func moveInsideOneApp() async throws {
        var behaviour = Self.sourceBehaviour()
        behaviour.proposal = .move
        try await DragStage.with(source: behaviour, target: behaviour) { s in
            let second = try await s.source.requestSceneSessionActivation(nil, userActivity: nil)
            try await s.source.scene(for: second)?.setFrame(Rect(x: 100, y: 600, width: 600, height: 400))
            let drag = try await s.tool.beginDrag(fromScene: s.sourceScene, options: DragOptions(allowsMove: true))
            #expect(try await drag.move(to: DragStage.overTarget).proposal == .copy, "a move across apps is delivered as copy")
            #expect(try await drag.move(to: Point(x: 400, y: 800)) == DragMove(proposal: .move, target: second))
            let outcome = try await drag.drop()
            #expect(outcome.operation == .move && outcome.target == second, "\(outcome)")
            let source = s.sourceScene
            try await DragStage.eventually("the source's end") { s.sourceEvents.dragOf(source).last?.hasPrefix("dragEnd") == true }
            #expect(s.sourceEvents.dragOf(source).last == "dragEnd \(source) drag=\(drag.id) move target=\(second) new=-")
            #expect(s.sourceEvents.dragOf(second).contains("perform \(second) move note"))
            // The target app's scene was entered and left: it heard its exit and the end.
            let t = s.targetScene
            try await DragStage.eventually("the other app's end") { s.targetEvents.dragOf(t).last == "ended \(t) move" }
            #expect(s.targetEvents.dragOf(t).contains("exit \(t)"))
            #expect(!s.targetEvents.dragOf(t).contains { $0.hasPrefix("perform") })
        }
    }

    @Test("forbidden by the target's paste configuration: nothing is performed and the drag ends as forbidden")
    func forbiddenByPasteConfiguration() async throws {
        var images = DragBehaviour()
        images.pasteConfiguration = PasteConfiguration(acceptableTypes: [.image])
        try await DragStage.with(source: Self.sourceBehaviour(), target: images) { s in
            let drag = try await s.tool.beginDrag(fromScene: s.sourceScene)
            #expect(try await drag.move(to: DragStage.overTarget) == DragMove(proposal: .forbidden, target: s.targetScene))
            let outcome = try await drag.drop()
            #expect(outcome.operation == .forbidden)
            #expect(outcome.target == nil)
            let source = s.sourceScene
            try await DragStage.eventually("the source's end") { s.sourceEvents.dragOf(source).last?.hasPrefix("dragEnd") == true }
            #expect(s.sourceEvents.dragOf(source).last == "dragEnd \(source) drag=\(drag.id) forbidden target=- new=-")
            #expect(s.targetEvents.dragOf(s.targetScene) == ["can \(s.targetScene)"])
        }
    }

    @Test("cancel over the target: it hears the exit and the end as cancel; the source hears cancel")
    func cancelOverTarget() async throws {
        try await DragStage.with(source: Self.sourceBehaviour(), target: DragBehaviour()) { s in
            let drag = try await s.tool.beginDrag(fromScene: s.sourceScene)
            _ = try await drag.move(to: DragStage.overTarget)
            try await drag.cancel()
            let t = s.targetScene
            try await DragStage.eventually("the target's end") { s.targetEvents.dragOf(t).last == "ended \(t) cancel" }
            #expect(s.targetEvents.dragOf(t).suffix(2) == ["exit \(t)", "ended \(t) cancel"])
            let source = s.sourceScene
            try await DragStage.eventually("the source's end") { s.sourceEvents.dragOf(source).last?.hasPrefix("dragEnd") == true }
            #expect(s.sourceEvents.dragOf(source).last == "dragEnd \(source) drag=\(drag.id) cancel target=- new=-")
            await #expect { try await drag.drop() } throws: { ($0 as? FerryError)?.code == .notFound }
        }
    }

    @Test("a drag its source restricts to its app is invisible to the other app: cancel over its scene, no calls there")
    func restrictedToApp() async throws {
        var behaviour = Self.sourceBehaviour()
        behaviour.restrictedToApp = true
        try await DragStage.with(source: behaviour, target: DragBehaviour()) { s in
            let drag = try await s.tool.beginDrag(fromScene: s.sourceScene)
            #expect(try await drag.move(to: DragStage.overTarget).proposal == .cancel)
            #expect(try await drag.move(to: DragStage.overSource).proposal == .copy, "its own scene still takes it")
            try await drag.cancel()
            #expect(s.targetEvents.dragOf(s.targetScene).isEmpty)
        }
    }

    @Test("the source app going away mid-drag: the target hears the exit and the end as cancel within a second")
    func sourceGoesAway() async throws {
        try await DragStage.with(source: Self.sourceBehaviour(), target: DragBehaviour()) { s in
            let drag = try await s.tool.beginDrag(fromScene: s.sourceScene)
            _ = try await drag.move(to: DragStage.overTarget)
            let t = s.targetScene
            let gone = ContinuousClock.now
            await s.sourceClient.close()
            try await DragStage.eventually("the target's end") { s.targetEvents.dragOf(t).last == "ended \(t) cancel" }
            // The goal is 1 s; on a loaded machine noticing the close takes longer, so the test
            // only tells "at once" from the 60 s idle end.
            #expect(ContinuousClock.now - gone < .seconds(10), "took \(ContinuousClock.now - gone)")
            #expect(s.targetEvents.dragOf(t).suffix(2) == ["exit \(t)", "ended \(t) cancel"])
            await #expect { try await drag.move(to: DragStage.overSource) } throws: { ($0 as? FerryError)?.code == .notFound }
        }
    }

    @Test("a drag the broker ended by itself (its source left): drop fails with NotFound and lets the caller's promises go")
    func promisesGoWithAnEndedDrag() async throws {
        var images = DragBehaviour()
        images.pasteConfiguration = PasteConfiguration(acceptableTypes: [.image])
        try await DragStage.with(source: DragBehaviour(), target: images) { s in
            try await s.tool.registerCommandLineTool()
            var provider = ItemProvider()
            provider.registerDataRepresentation(for: .png, data: pngLikeBytes(3 << 20))
            let drag = try await s.tool.beginDrag(fromScene: s.sourceScene, options: DragOptions(providers: [provider]))
            #expect(await s.tool.hasPendingPromises, "the 3 MiB image is promised")
            await s.sourceClient.close()
            try await DragStage.eventually("the drag's end") { try await s.tool.lastDrag()?.state == "ended" }
            await #expect { try await drag.drop() } throws: { ($0 as? FerryError)?.code == .notFound }
            #expect(await s.tool.hasPendingPromises == false, "the ended drag's promises are let go")
        }
    }

    @Test("the broker dies mid-drag: the source app forgets the drag and lets its promised items go")
    func brokerDiesMidDrag() async throws {
        var source = DragBehaviour()
        source.texts = ["big"]
        source.imageBytes = 3 << 20
        try await DragStage.with(source: source, target: DragBehaviour()) { s in
            let drag = try await s.tool.beginDrag(fromScene: s.sourceScene)
            _ = try await drag.move(to: DragStage.overTarget)
            #expect(await s.sourceClient.hasPendingPromises, "the 3 MiB image is promised by the source app")
            let daemon = try #require(s.fixture.daemon)
            daemon.send(SIGKILL)
            _ = await daemon.waitForExit()
            try await DragStage.eventually("the source to let the dead broker's drag go") {
                await s.sourceClient.hasPendingPromises == false
            }
        }
    }

    @Test("a target whose dropSessionDidUpdate awaits a bus call (the drag's metadata) answers in time, move after move")
    func updateAwaitingTheBus() async throws {
        var target = DragBehaviour()
        target.readsMetadataOnUpdate = true
        try await DragStage.with(source: Self.sourceBehaviour(["a", "b"]), target: target) { s in
            let drag = try await s.tool.beginDrag(fromScene: s.sourceScene)
            for step in 0..<20 {
                let move = try await drag.move(to: Point(x: 1300 + Double(step), y: 300))
                #expect(move.proposal == .copy, "move \(step): \(move)")
            }
            try await drag.cancel()
            let t = s.targetScene
            #expect(s.targetEvents.dragOf(t).filter { $0 == "metadata \(t) 2 items" }.count == 20, "\(s.targetEvents.dragOf(t))")
        }
    }

    @Test("200 moves over the target: every proposal comes from the library's delegate in time (none forbidden by the 250 ms limit)")
    func manyMoves() async throws {
        try await DragStage.with(source: Self.sourceBehaviour(), target: DragBehaviour()) { s in
            let drag = try await s.tool.beginDrag(fromScene: s.sourceScene)
            for step in 0..<200 {
                let move = try await drag.move(to: Point(x: 1300 + Double(step % 50), y: 300))
                if move.proposal != .copy { Issue.record("move \(step): \(move)"); break }
            }
            try await drag.cancel()
            // Each copy above was answered within the broker's 250 ms (else it is forbidden); the
            // whole Move round trip is the benchmark's business (P5), too noisy on a loaded machine.
            let updates = s.targetEvents.dragOf(s.targetScene).filter { $0.hasPrefix("update") }.count
            #expect(updates == 200)
        }
    }

    @Test("a drop at the left edge opens a scene of the app declaring the item's activity; the source hears the new session")
    func edgeDrop() async throws {
        var behaviour = Self.sourceBehaviour()
        var activity = try UserActivity(activityType: "org.ferry.test.view")
        activity.userInfo["item"] = .string("lake")
        behaviour.activity = activity
        try await DragStage.with(source: behaviour, target: DragBehaviour()) { s in
            let drag = try await s.tool.beginDrag(fromScene: s.sourceScene)
            let atEdge = try await drag.move(to: Point(x: 5, y: 800))
            #expect(atEdge.edge == .left, "\(atEdge)")
            #expect(atEdge.proposal.operation == .copy && atEdge.target == nil, "\(atEdge)")
            let outcome = try await drag.drop()
            let opened = try #require(outcome.newSession, "\(outcome)")
            #expect(outcome.operation == .copy && outcome.app == "org.ferry.test.source", "\(outcome)")
            #expect(s.sourceEvents.of(opened).first == "connect \(opened) org.ferry.test.view item=lake")
            let source = s.sourceScene
            try await DragStage.eventually("the source's end") { s.sourceEvents.dragOf(source).last?.hasPrefix("dragEnd") == true }
            #expect(s.sourceEvents.dragOf(source).last == "dragEnd \(source) drag=\(drag.id) copy target=- new=\(opened)")
            let record = try #require(try await s.tool.lastDrag())
            #expect(record.newSession == opened)
            #expect(record.steps.last?.target == "edge:left")
        }
    }

    @Test("an app's icon dragged to the right edge opens its default configuration there")
    func appIconToEdge() async throws {
        try await DragStage.with(source: DragBehaviour(), target: DragBehaviour()) { s in
            let drag = try await s.tool.beginAppIconDrag(app: "org.ferry.test.target", at: DragStage.nowhere)
            #expect(try await drag.move(to: DragStage.overSource).proposal == .cancel, "an icon drag has no items to drop")
            let atEdge = try await drag.move(to: Point(x: 1915, y: 800))
            #expect(atEdge.edge == .right, "\(atEdge)")
            let outcome = try await drag.drop()
            let opened = try #require(outcome.newSession, "\(outcome)")
            #expect(outcome.app == "org.ferry.test.target")
            try await DragStage.eventually("the new scene") { s.target.scene(for: opened) != nil }
            #expect(s.target.scene(for: opened)?.session.configurationName == "Default")
            let record = try #require(try await s.tool.lastDrag())
            #expect(record.app == "org.ferry.test.target")
            #expect(record.sourceSession == nil)
        }
    }

    @Test("items read only during performDrop: providers kept past it cannot load")
    func readOnlyDuringPerform() async throws {
        try await DragStage.with(source: Self.sourceBehaviour(["secret"]), target: DragBehaviour()) { s in
            let drag = try await s.tool.beginDrag(fromScene: s.sourceScene)
            _ = try await drag.move(to: DragStage.overTarget)
            #expect(try await drag.drop().operation == .copy)
            let delegate = try #require(s.target.scene(for: s.targetScene)?.delegate as? DragSceneDelegate)
            let kept = try #require(delegate.kept.withLock { $0 }.first)
            // A clean, named failure: the loader's error (the pasteboard is gone) as Unavailable.
            await #expect { try await kept.loadData(for: .plainText) } throws: {
                ($0 as? FerryModelError)?.code == .unavailable
            }
        }
    }

    @Test("the caller's providers (items=initiator): a 3 MiB image is promised by the tool and read by the target in full")
    func initiatorProviders() async throws {
        var images = DragBehaviour()
        images.pasteConfiguration = PasteConfiguration(acceptableTypes: [.image])
        try await DragStage.with(source: DragBehaviour(), target: images) { s in
            try await s.tool.registerCommandLineTool()
            let bytes = pngLikeBytes(3 << 20)
            var provider = ItemProvider()
            provider.registerDataRepresentation(for: .png, data: bytes)
            let drag = try await s.tool.beginDrag(fromScene: s.sourceScene, options: DragOptions(providers: [provider]))
            var text = ItemProvider()
            text.registerDataRepresentation(for: .utf8PlainText, data: Data("caption".utf8))
            try await drag.addItems([text])
            #expect(try await drag.move(to: DragStage.overTarget).proposal == .copy)
            let outcome = try await drag.drop()
            #expect(outcome.operation == .copy, "\(outcome)")
            #expect(outcome.types == ["public.utf8-plain-text", "public.png"], "\(outcome)")
            #expect(outcome.message == "dropped 1 text(s)")
            let t = s.targetScene
            #expect(s.targetEvents.dragOf(t).contains("enter \(t) public.png,public.utf8-plain-text"))
            #expect(s.targetEvents.dragOf(t).contains("image \(t) \(3 << 20) bytes"), "\(s.targetEvents.dragOf(t))")
            #expect(s.sourceEvents.all.filter { $0.hasPrefix("items") }.isEmpty, "the source app was not asked")
        }
    }

    @Test("a drop's progress sums its items' loads: two promised 8 MiB images, fractions between 0 and 1, then all of it")
    func dropSessionProgress() async throws {
        var images = DragBehaviour()
        images.pasteConfiguration = PasteConfiguration(acceptableTypes: [.image])
        images.samplesDropProgress = true
        try await DragStage.with(source: DragBehaviour(), target: images) { s in
            try await s.tool.registerCommandLineTool()
            let providers = (0..<2).map { index in
                var provider = ItemProvider()
                provider.registerDataRepresentation(for: .png, data: pngLikeBytes(8 << 20, seed: UInt8(index)))
                return provider
            }
            let drag = try await s.tool.beginDrag(fromScene: s.sourceScene, options: DragOptions(providers: providers))
            #expect(try await drag.move(to: DragStage.overTarget).proposal == .copy)
            #expect(try await drag.drop().operation == .copy)
            let t = s.targetScene
            let line = try #require(s.targetEvents.dragOf(t).first { $0.hasPrefix("dropProgress") }, "\(s.targetEvents.dragOf(t))")
            let total = 16 << 20
            #expect(line.hasPrefix("dropProgress \(t) \(total)/\(total) "), "\(line)")
            // Sampled every millisecond while 16 MiB arrive: on a loaded machine the loads may
            // finish between two samples but one, so one fraction strictly inside 0…1 is the bar.
            let between = try #require(line.split(separator: "=").last.flatMap { Int($0) })
            #expect(between >= 1, "\(line)")
        }
    }

    @Test("the source app dragging from its own scene provides its items through its delegate")
    func sourceBeginsItself() async throws {
        try await DragStage.with(source: Self.sourceBehaviour(["own"]), target: DragBehaviour()) { s in
            let drag = try await s.sourceClient.beginDrag(fromScene: s.sourceScene, options: DragOptions(item: 2))
            _ = try await drag.move(to: DragStage.overTarget)
            let outcome = try await drag.drop()
            #expect(outcome.operation == .copy && outcome.message == "dropped 1 text(s)", "\(outcome)")
            let source = s.sourceScene
            #expect(s.sourceEvents.dragOf(source).first == "items \(source) drag=\(drag.id) item=2 at=300,200 move=false")
            try await DragStage.eventually("the source's end") { s.sourceEvents.dragOf(source).last?.hasPrefix("dragEnd") == true }
            #expect(s.sourceEvents.dragOf(source).contains("moved \(source) drag=\(drag.id) 1300,300 copy"))
        }
    }

    @Test("errors: an unknown scene or app is NotFound, nothing to drag is NotFound, a non-finite point is InvalidArgument")
    func errors() async throws {
        try await DragStage.with(source: DragBehaviour(), target: DragBehaviour()) { s in
            await #expect { try await s.tool.beginDrag(fromScene: "no-such-scene") } throws: { ($0 as? FerryError)?.code == .notFound }
            let nothing = await #expect(throws: FerryError.self) { try await s.tool.beginDrag(fromScene: s.sourceScene) }
            #expect(nothing?.code == .notFound)
            #expect(nothing?.message.contains("nothing to drag") == true)
            await #expect { try await s.sourceClient.beginDrag(fromScene: s.sourceScene) } throws: {
                ($0 as? FerryError)?.code == .notFound
            }
            await #expect { try await s.tool.beginAppIconDrag(app: "org.example.unknown", at: .zero) } throws: {
                ($0 as? FerryError)?.code == .notFound
            }
            await #expect { try await s.tool.beginDrag(fromScene: s.sourceScene, options: DragOptions(location: Point(x: .nan, y: 0))) }
                throws: { ($0 as? FerryError)?.code == .invalidArgument }
            let icon = try await s.tool.beginAppIconDrag(app: "org.ferry.test.target", at: DragStage.nowhere)
            await #expect { try await icon.move(to: Point(x: .infinity, y: 0)) } throws: { ($0 as? FerryError)?.code == .invalidArgument }
            try await icon.cancel()
            let record = try #require(try await s.tool.lastDrag())
            #expect(record.app == "org.ferry.test.target" || record.sourceApp == "org.ferry.test.target")
            #expect(record.operation == .cancel)
        }
    }
}
