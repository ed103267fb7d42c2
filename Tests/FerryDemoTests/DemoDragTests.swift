import Ferry
import FerryModel
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// Drag and drop between real `ferry-demo` processes through the real `ferryd` on a private bus,
/// driven as `ferry drag` drives it: a scripted drag session (the initiator) begun from a scene.
@Suite("ferry-demo drag and drop end to end")
struct DemoDragTests {
    static let openNote = "org.ferry.notes.open-note"
    static let lake = TestPaths.fixtures.appendingPathComponent("Apps/Gallery/Content/lake.png")
    static let lakeJPEG = TestPaths.fixtures.appendingPathComponent("Apps/Gallery/Content/Renditions/lake.png/lake.jpg")

    @Test("a photo dragged from Gallery into a Notes Editor is copied: the note gets it as an attachment")
    func photoIntoNote() async throws {
        try await DemoHarness.with { h in
            let apps = try await h.startNotesAndGallery(galleryArguments: ["--verbose"])
            defer { apps.stop() }
            let (notes, gallery) = (apps.notes, apps.gallery)
            let grid = apps.grid
            let editor = try await h.open("org.ferry.notes", activityType: Self.openNote, key: "noteID", item: "groceries")
            _ = try await notes.event("saved") { $0.session == editor }
            let over = try await h.visiblePoint(of: editor)
            let before = try #require(h.note("groceries"))

            let outcome = try await h.withDragClient { client in
                let drag = try await client.beginDrag(fromScene: grid, options: DragOptions(item: 2))
                let move = try await drag.move(to: over)
                #expect(move.proposal.operation == .copy && move.target == editor, "\(move)")
                return try await drag.drop()
            }
            #expect(outcome.operation == .copy && outcome.target == editor, "\(outcome)")

            let began = try await gallery.event("drag-began") { $0.session == grid }
            #expect(began["photo"] == "lake.png" && began["types"] == "public.png,public.jpeg,org.ferry.user-activity", "\(began)")
            let entered = try await notes.event("drop-entered") { $0.session == editor }
            #expect(entered["operation"] == "copy" && entered["types"] == "public.png,public.jpeg,org.ferry.user-activity", "\(entered)")
            // Notes reads public.image: it gets the original (PNG), not the JPEG rendition.
            let performed = try await notes.event("drop-performed") { $0.session == editor }
            #expect(performed["note"] == "groceries" && performed["attachments"] == "lake.png"
                    && performed["types"] == "public.png" && performed["operation"] == "copy", "\(performed)")
            let attachment = h.stateDirectory("Notes").appendingPathComponent("attachments/groceries/lake.png")
            #expect(try Data(contentsOf: attachment) == Data(contentsOf: Self.lake), "the attachment is the photo's bytes")
            #expect(h.note("groceries") == before + (before.hasSuffix("\n") ? "" : "\n") + "[image: lake.png]\n")
            #expect(try await notes.event("drop-ended") { $0.session == editor }["operation"] == "copy")
            let ended = try await gallery.event("drag-ended") { $0.session == grid }
            #expect(ended["operation"] == "copy" && ended["photo"] == "lake.png" && ended["deleted"] == nil, "\(ended)")
            #expect(try h.photos() == ["beach.jpg", "lake.png"], "a copy leaves the source's photo")
            // --verbose: the source heard the move over the Editor and what was proposed there.
            let moved = try await gallery.event("drag-moved") { $0.session == grid && $0["operation"] == "copy" }
            let at = (moved["at"] ?? "").split(separator: ",").compactMap { Double($0) }
            #expect(at == [over.x, over.y], "\(moved)")
            #expect(notes.all("drag-moved").isEmpty, "only with --verbose")
        }
    }

    @Test("a photo dragged from Gallery offers its original PNG then its JPEG rendition; a target reading public.jpeg gets the JPEG")
    func photoOffersItsRendition() async throws {
        try await DemoHarness.with { h in
            let gallery = try await h.startDemo("Gallery")
            defer { gallery.process.stop() }
            let grid = try await gallery.settled().session
            let readerClient = try await h.dragClient()
            do {
                let reader = JPEGReaderApp()
                let application = try await Application.register(client: readerClient, manifest: JPEGReaderApp.manifest, delegate: reader)
                #expect(await eventually { application.connectedScenes.first != nil }, "the reader's first scene connects")
                let scene = try #require(application.connectedScenes.first).persistentIdentifier
                let over = try await h.visiblePoint(of: scene)
                let (offered, outcome) = try await h.withDragClient { client in
                    let drag = try await client.beginDrag(fromScene: grid, options: DragOptions(item: 2))
                    // The initiator sees the drag pasteboard's metadata (never its bytes).
                    let items = try await client.pasteboard(named: drag.pasteboardName).items
                    let move = try await drag.move(to: over)
                    #expect(move.proposal.operation == .copy && move.target == scene, "\(move)")
                    return (items.map(\.contentTypes), try await drag.drop())
                }
                #expect(offered == [[.png, .jpeg, .userActivity]], "lake.png, then its JPEG rendition, then the activity")
                #expect(outcome.operation == .copy && outcome.target == scene && outcome.types == ["public.jpeg"], "\(outcome)")
                let jpeg = try Data(contentsOf: Self.lakeJPEG)
                #expect(jpeg.starts(with: [0xFF, 0xD8, 0xFF]))
                #expect(reader.dropped.withLock { $0 } == [jpeg], "the target got the rendition's bytes")
                let ended = try await gallery.event("drag-ended") { $0.session == grid }
                #expect(ended["operation"] == "copy" && ended["photo"] == "lake.png", "\(ended)")
            } catch {
                await readerClient.close()
                throw error
            }
            await readerClient.close()
        }
    }

    @Test("a 20 MiB photo (over the 16 MiB a drag may hold) is promised by Gallery and read whole by Notes")
    func largePhotoIsPromised() async throws {
        try await DemoHarness.with { h in
            // Gallery's library made beforehand: the fixtures are not copied over it.
            let photos = h.stateDirectory("Gallery").appendingPathComponent("photos")
            try FileManager.default.createDirectory(at: photos, withIntermediateDirectories: true)
            var big = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            big.append(Data((0..<(20 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }))
            try big.write(to: photos.appendingPathComponent("big.png"))
            let apps = try await h.startNotesAndGallery()
            defer { apps.stop() }
            let notes = apps.notes
            let grid = apps.grid
            let editor = try await h.open("org.ferry.notes", activityType: Self.openNote, key: "noteID", item: "meeting")
            _ = try await notes.event("saved") { $0.session == editor }
            let over = try await h.visiblePoint(of: editor)
            let outcome = try await h.withDragClient { client in
                let drag = try await client.beginDrag(fromScene: grid, options: DragOptions(item: 1))
                #expect(try await drag.move(to: over).proposal.operation == .copy)
                return try await drag.drop()
            }
            #expect(outcome.operation == .copy, "\(outcome)")
            let performed = try await notes.event("drop-performed", timeout: .seconds(30)) { $0.session == editor }
            #expect(performed["attachments"] == "big.png" && performed["bytes"] == String(big.count), "\(performed)")
            let attachment = h.stateDirectory("Notes").appendingPathComponent("attachments/meeting/big.png")
            #expect(try firstDifference(Data(contentsOf: attachment), big) == nil)
        }
    }

    @Test("a note dragged between two Notes Editors: copy keeps it; with move the target gets it and the source deletes it")
    func moveNoteBetweenScenes() async throws {
        try await DemoHarness.with { h in
            let notes = try await h.startDemo()
            defer { notes.process.stop() }
            _ = try await notes.settled()
            let source = try await h.open("org.ferry.notes", activityType: Self.openNote, key: "noteID", item: "groceries")
            _ = try await notes.event("saved") { $0.session == source }
            let target = try await h.open("org.ferry.notes", activityType: Self.openNote, key: "noteID", item: "meeting")
            _ = try await notes.event("saved") { $0.session == target }
            let overSource = try await h.visiblePoint(of: source)
            let overTarget = try await h.visiblePoint(of: target)
            let groceries = try #require(h.note("groceries"))
            let meeting = try #require(h.note("meeting"))

            // Without move: a copy; the note stays.
            let copy = try await h.withDragClient { client in
                let drag = try await client.beginDrag(fromScene: source)
                #expect(try await drag.move(to: overTarget).proposal.operation == .copy)
                return try await drag.drop()
            }
            #expect(copy.operation == .copy && copy.target == target, "\(copy)")
            _ = try await notes.event("drag-ended") { $0.session == source && $0["operation"] == "copy" }
            #expect(h.note("groceries") == groceries)
            let afterCopy = try #require(h.note("meeting"))
            #expect(afterCopy.hasPrefix(meeting) && afterCopy.hasSuffix(groceries), "the target note got the text")

            // With move: over its own scene the note is not dropped (cancel); over the other, move.
            let move = try await h.withDragClient { client in
                let drag = try await client.beginDrag(fromScene: source, options: DragOptions(allowsMove: true))
                #expect(try await drag.move(to: overSource).proposal.operation == .cancel)
                let over = try await drag.move(to: overTarget)
                #expect(over.proposal.operation == .move && over.target == target, "\(over)")
                return try await drag.drop()
            }
            #expect(move.operation == .move && move.target == target, "\(move)")
            let began = try await notes.event("drag-began") { $0.session == source && $0["move"] != nil }
            #expect(began["note"] == "groceries" && began["types"] == "public.utf8-plain-text,org.ferry.user-activity")
            let performed = try await notes.event("drop-performed") { $0.session == target && $0["operation"] == "move" }
            #expect(performed["note"] == "meeting" && performed["from"] == "groceries", "\(performed)")
            let ended = try await notes.event("drag-ended") { $0.session == source && $0["operation"] == "move" }
            #expect(ended["note"] == "groceries" && ended["target"] == target && ended["deleted"] != nil, "\(ended)")
            #expect(h.note("groceries") == nil, "the source deleted its original")
            #expect(h.note("meeting")?.hasSuffix(groceries) == true && h.note("meeting")!.count > afterCopy.count)
        }
    }

    @Test("a note moved into one whose attachment has the same name brings its own picture under a free name, its line renamed")
    func moveKeepsClashingAttachment() async throws {
        try await DemoHarness.with { h in
            let attachments = h.stateDirectory("Notes").appendingPathComponent("attachments")
            for (note, byte) in [("groceries", UInt8(1)), ("meeting", 2)] {
                try FileManager.default.createDirectory(at: attachments.appendingPathComponent(note), withIntermediateDirectories: true)
                try Data([byte]).write(to: attachments.appendingPathComponent("\(note)/lake.png"))
            }
            let notes = try await h.startDemo()
            defer { notes.process.stop() }
            _ = try await notes.settled()
            let groceriesFile = h.stateDirectory("Notes").appendingPathComponent("notes/groceries.txt")
            let groceries = try #require(h.note("groceries")) + "[image: lake.png]\n"
            try Data(groceries.utf8).write(to: groceriesFile)
            let source = try await h.open("org.ferry.notes", activityType: Self.openNote, key: "noteID", item: "groceries")
            _ = try await notes.event("saved") { $0.session == source }
            let target = try await h.open("org.ferry.notes", activityType: Self.openNote, key: "noteID", item: "meeting")
            _ = try await notes.event("saved") { $0.session == target }
            let over = try await h.visiblePoint(of: target)
            let outcome = try await h.withDragClient { client in
                let drag = try await client.beginDrag(fromScene: source, options: DragOptions(allowsMove: true))
                #expect(try await drag.move(to: over).proposal.operation == .move)
                return try await drag.drop()
            }
            #expect(outcome.operation == .move && outcome.target == target, "\(outcome)")
            let performed = try await notes.event("drop-performed") { $0.session == target }
            #expect(performed["attachments"] == "lake-2.png", "\(performed)")
            let ended = try await notes.event("drag-ended") { $0.session == source }
            #expect(ended["deleted"] != nil, "\(ended)")
            #expect(h.note("groceries") == nil)
            #expect(h.note("meeting")?.hasSuffix("[image: lake-2.png]\n") == true, "\(h.note("meeting") ?? "")")
            #expect(try Data(contentsOf: attachments.appendingPathComponent("meeting/lake-2.png")) == Data([1]), "the moved note's picture")
            #expect(try Data(contentsOf: attachments.appendingPathComponent("meeting/lake.png")) == Data([2]), "the target's own picture")
        }
    }

    @Test("a note dragged onto Gallery is forbidden and nothing changes; a cancelled drag changes nothing either")
    func forbiddenAndCancel() async throws {
        try await DemoHarness.with { h in
            let apps = try await h.startNotesAndGallery()
            defer { apps.stop() }
            let (notes, gallery) = (apps.notes, apps.gallery)
            let list = apps.list
            let grid = apps.grid
            let overGrid = try await h.visiblePoint(of: grid)
            let overList = try await h.visiblePoint(of: list)

            let forbidden = try await h.withDragClient { client in
                let drag = try await client.beginDrag(fromScene: list, options: DragOptions(allowsMove: true))
                let move = try await drag.move(to: overGrid)
                #expect(move.proposal.operation == .forbidden && move.target == grid, "\(move)")
                return try await drag.drop()
            }
            #expect(!forbidden.operation.transfersItems, "\(forbidden)")
            let entered = try await gallery.event("drop-entered") { $0.session == grid }
            #expect(entered["operation"] == "forbidden" && entered["types"] == "public.utf8-plain-text,org.ferry.user-activity")
            let ended = try await notes.event("drag-ended") { $0.session == list }
            #expect(ended["note"] == "ferry-ideas" && ended["deleted"] == nil && ended["operation"] == forbidden.operation.name, "\(ended)")
            #expect(gallery.all("drop-performed").isEmpty)
            #expect(try h.photos() == ["beach.jpg", "lake.png"])
            #expect(h.note("ferry-ideas") != nil)

            // Gallery → Notes list would copy; cancelled over it, nothing is dropped.
            try await h.withDragClient { client in
                let drag = try await client.beginDrag(fromScene: grid)
                #expect(try await drag.move(to: overList).proposal.operation == .copy)
                try await drag.cancel()
            }
            #expect(try await gallery.event("drag-ended") { $0.session == grid }["operation"] == "cancel")
            #expect(try await notes.event("drop-ended") { $0.session == list }["operation"] == "cancel")
            #expect(notes.all("drop-performed").isEmpty)
            #expect(try FileManager.default.contentsOfDirectory(atPath: h.stateDirectory("Notes").appendingPathComponent("notes").path).count == 3)
        }
    }

    @Test("a note dropped at the right edge opens a Notes Editor showing it, whose restoration activity names the note")
    func edgeDropOpensEditor() async throws {
        try await DemoHarness.with { h in
            let notes = try await h.startDemo()
            defer { notes.process.stop() }
            let list = try await notes.settled().session
            let outcome = try await h.withDragClient { client in
                let drag = try await client.beginDrag(fromScene: list, options: DragOptions(item: 2))
                let move = try await drag.move(to: h.edgePoint())
                #expect(move.edge == .right, "\(move)")
                return try await drag.drop()
            }
            let opened = try #require(outcome.newSession, "\(outcome)")
            let connect = try await notes.event("connect") { $0.session == opened }
            #expect(connect["configuration"] == "Editor" && connect["note"] == "groceries" && connect["restored"] == nil, "\(connect)")
            let ended = try await notes.event("drag-ended") { $0.session == list }
            #expect(ended["newSession"] == opened && ended["note"] == "groceries" && ended["deleted"] == nil, "\(ended)")
            #expect(try await eventually {
                let text = try await h.sessionText("org.ferry.notes", opened)
                guard let restoration = text.range(of: "'stateRestorationActivity'") else { return false }
                let activity = text[restoration.upperBound...]
                return activity.contains("'activityType': <'\(Self.openNote)'>") && activity.contains("'noteID': <'groceries'>")
                    && text.contains("'title': <'Notes — groceries'>")
            }, "the new scene's restoration activity carries noteID=groceries")
            // It took the right half of the screen.
            let frame = try #require(try await h.desktop().first { $0.persistentIdentifier == opened }?.frame)
            #expect(frame.minX >= DemoHarness.screen.midX - 1 && frame.maxX <= DemoHarness.screen.maxX + 1, "\(frame)")
            #expect(h.note("groceries") != nil)
        }
    }

    @Test("Notes' app icon dragged to the right edge opens its Default configuration there")
    func appIconToEdge() async throws {
        try await DemoHarness.with { h in
            let notes = try await h.startDemo()
            defer { notes.process.stop() }
            let list = try await notes.settled().session
            let outcome = try await h.withDragClient { client in
                let drag = try await client.beginAppIconDrag(app: "org.ferry.notes", at: Point(x: 960, y: 1060))
                _ = try await drag.move(to: h.edgePoint())
                return try await drag.drop()
            }
            let opened = try #require(outcome.newSession, "\(outcome)")
            #expect(opened != list)
            let connect = try await notes.event("connect") { $0.session == opened }
            #expect(connect["configuration"] == "Default" && connect["note"] == nil, "\(connect)")
        }
    }

    @Test("the source killed mid-drag: the target hears the drag end as cancel within a second or so, nothing is dropped")
    func sourceKilledMidDrag() async throws {
        try await DemoHarness.with { h in
            let apps = try await h.startNotesAndGallery()
            defer { apps.stop() }
            let (notes, gallery) = (apps.notes, apps.gallery)
            let grid = apps.grid
            let editor = try await h.open("org.ferry.notes", activityType: Self.openNote, key: "noteID", item: "meeting")
            _ = try await notes.event("saved") { $0.session == editor }
            let over = try await h.visiblePoint(of: editor)
            let meeting = try #require(h.note("meeting"))
            try await h.withDragClient { client in
                let drag = try await client.beginDrag(fromScene: grid, options: DragOptions(item: 1))
                #expect(try await drag.move(to: over).proposal.operation == .copy)
                _ = try await notes.event("drop-entered") { $0.session == editor }
                let killed = ContinuousClock.now
                await gallery.kill()
                let ended = try await notes.event("drop-ended", timeout: .seconds(5)) { $0.session == editor }
                #expect(ended["operation"] == "cancel", "\(ended)")
                #expect(ContinuousClock.now - killed < .seconds(3), "the target heard it soon")
                // The drag is over: dropping now does not transfer anything.
                let late = try? await drag.drop()
                #expect(late.map { !$0.operation.transfersItems } ?? true, "\(String(describing: late))")
            }
            #expect(notes.all("drop-performed").isEmpty)
            #expect(h.note("meeting") == meeting)
        }
    }

    @Test("a drag restricted to Gallery is invisible to Notes: cancel over its scene, which hears nothing")
    func restrictedDrag() async throws {
        try await DemoHarness.with { h in
            let apps = try await h.startNotesAndGallery()
            defer { apps.stop() }
            let (notes, gallery) = (apps.notes, apps.gallery)
            let list = apps.list
            let grid = apps.grid
            let overList = try await h.visiblePoint(of: list)
            let outcome = try await h.withDragClient { client in
                let drag = try await client.beginDrag(fromScene: grid, options: DragOptions(restrictedToApp: true))
                #expect(try await drag.move(to: overList).proposal.operation == .cancel)
                return try await drag.drop()
            }
            #expect(outcome.operation == .cancel, "\(outcome)")
            #expect(try await gallery.event("drag-ended") { $0.session == grid }["operation"] == "cancel")
            #expect(notes.all("drop-entered").isEmpty && notes.all("drop-performed").isEmpty)
            #expect(h.note("lake") == nil && h.note("beach") == nil)
        }
    }

    @Test("make demo's path with `ferry drag`: a photo into Notes, then that note to the right edge opens an Editor of it")
    func ferryDragCommand() async throws {
        try await DemoHarness.with { h in
            let apps = try await h.startNotesAndGallery()
            defer { apps.stop() }
            let notes = apps.notes
            let list = apps.list
            let ferry = try BuiltProducts.executable("ferry")
            let photo = try await ChildProcess.run(ferry, ["drag", "--from", "org.ferry.gallery", "--item", "2", "--to", "org.ferry.notes/\(list)"],
                                                   environment: h.bus.environment(), timeout: .seconds(30))
            #expect(photo.status == 0, "\(photo.stdout)\(photo.stderr)")
            // The list made a new note holding the photo, named after it, and selected it.
            let performed = try await notes.event("drop-performed") { $0.session == list }
            #expect(performed["note"] == "lake" && performed["attachments"] == "lake.png", "\(performed)")
            #expect(h.note("lake") == "[image: lake.png]\n")
            // Dragging from the list drags its first note (ferry-ideas); --item 3 is `lake` (ferry-ideas, groceries, lake, meeting).
            let edge = try await ChildProcess.run(ferry, ["drag", "--from", "org.ferry.notes/\(list)", "--item", "3", "--edge", "right", "--json"],
                                                  environment: h.bus.environment(), timeout: .seconds(30))
            #expect(edge.status == 0, "\(edge.stdout)\(edge.stderr)")
            let connect = try await notes.event("connect") { $0["configuration"] == "Editor" }
            #expect(connect["note"] == "lake", "\(connect)")
            #expect(edge.stdout.contains(connect.session), "the outcome names the new scene: \(edge.stdout)")
        }
    }

    @Test("a note moved onto the Editor that already shows it changes nothing, and the source does not delete it")
    func moveOntoItsOwnEditorKeepsIt() async throws {
        try await DemoHarness.with { h in
            let notes = try await h.startDemo()
            defer { notes.process.stop() }
            let list = try await notes.settled().session
            let editor = try await h.open("org.ferry.notes", activityType: Self.openNote, key: "noteID", item: "groceries")
            _ = try await notes.event("saved") { $0.session == editor }
            let over = try await h.visiblePoint(of: editor)
            let groceries = try #require(h.note("groceries"))
            let outcome = try await h.withDragClient { client in
                let drag = try await client.beginDrag(fromScene: list, options: DragOptions(allowsMove: true, item: 2))
                #expect(try await drag.move(to: over).proposal.operation == .move)
                return try await drag.drop()
            }
            #expect(outcome.operation == .move, "\(outcome)")
            let performed = try await notes.event("drop-performed") { $0.session == editor }
            #expect(performed["unchanged"] != nil && performed["from"] == "groceries", "\(performed)")
            let ended = try await notes.event("drag-ended") { $0.session == list }
            #expect(ended["operation"] == "move" && ended["note"] == "groceries" && ended["deleted"] == nil, "\(ended)")
            #expect(h.note("groceries") == groceries)
        }
    }

    @Test("the Editor an edge drop opened comes back with its note after the app restarts")
    func edgeDropSceneIsRestored() async throws {
        try await DemoHarness.with { h in
            var notes = try await h.startDemo()
            let list = try await notes.settled().session
            let outcome = try await h.withDragClient { client in
                let drag = try await client.beginDrag(fromScene: list, options: DragOptions(item: 3))
                _ = try await drag.move(to: h.edgePoint(right: false))
                return try await drag.drop()
            }
            let opened = try #require(outcome.newSession, "\(outcome)")
            _ = try await notes.event("saved") { $0.session == opened }
            #expect(await notes.terminate() == 0)
            // Without its state file, only the restoration activity can say what it showed.
            try FileManager.default.removeItem(at: h.sceneFile("Notes", opened))
            notes = try await h.startDemo()
            defer { notes.process.stop() }
            let connect = try await notes.event("connect") { $0.session == opened }
            #expect(connect["configuration"] == "Editor" && connect["note"] == "meeting" && connect["restored"] != nil, "\(connect)")
        }
    }
}
