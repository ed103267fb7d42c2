import DBus
import Ferry
import FerryModel
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// The target side of a drag (`DropEntered` … `DropEnded` of `org.ferry.Client1`), driven by the
/// fake broker on a real private bus.
@Suite("Ferry: a drag over a scene (the target side of org.ferry.Client1)")
struct DropTargetTests {
    @Test("accepted: canHandle, then enter and update with the proposal; updates ask canHandle and update again")
    func enterAndUpdate() async throws {
        try await DragFixture.with { f in
            let scene = try await f.scene()
            #expect(try await f.propose(scene, entering: true) == .copy)
            #expect(try await f.propose(scene, entering: false, info: f.info(at: Point(x: 30, y: 40))) == .copy)
            #expect(f.events.dragOf(scene) == [
                "can \(scene)", "enter \(scene) public.utf8-plain-text", "update \(scene) at=10,20",
                "can \(scene)", "update \(scene) at=30,40",
            ])
        }
    }

    @Test("not accepted: forbidden when the scene accepts other types, cancel when it accepts nothing; no enter, exit or end")
    func refused() async throws {
        try await DragFixture.with { f in
            let scene = try await f.scene()
            #expect(try await f.propose(scene, entering: true, info: f.info(types: ["public.png"])) == .forbidden)
            #expect(try await f.propose(scene, entering: false, info: f.info(types: ["public.png"])) == .forbidden)
            try await f.broker.callClient("DropExited", [.string("7"), .string(scene)])
            try await f.broker.callClient("DropEnded", [.string("7"), .string(scene), .string("cancel")])
            #expect(f.events.dragOf(scene) == ["can \(scene)", "can \(scene)"])
        }
        var nothing = DragBehaviour()
        nothing.pasteConfiguration = nil
        try await DragFixture.with(nothing) { f in
            let scene = try await f.scene()
            #expect(try await f.propose(scene, entering: true) == .cancel)
        }
        var empty = DragBehaviour()
        empty.pasteConfiguration = PasteConfiguration(acceptableTypes: [])
        try await DragFixture.with(empty) { f in
            let scene = try await f.scene()
            #expect(try await f.propose(scene, entering: true) == .cancel)
        }
    }

    @Test("a move proposal is answered as copy unless the drag allows a move here; precise placement is passed on")
    func moveBecomesCopy() async throws {
        var behaviour = DragBehaviour()
        behaviour.proposal = DropProposal(operation: .move, isPrecise: true)
        try await DragFixture.with(behaviour) { f in
            let scene = try await f.scene()
            #expect(try await f.propose(scene, entering: true, info: f.info(allowsMove: false))
                    == DropProposal(operation: .copy, isPrecise: true))
            #expect(try await f.propose(scene, entering: false, info: f.info(allowsMove: true, isLocal: true))
                    == DropProposal(operation: .move, isPrecise: true))
        }
    }

    @Test("exit, perform, conclude, end: performDrop reads the drag pasteboard as a user action and the result names what was read")
    func performFlow() async throws {
        try await DragFixture.with { f in
            f.board.state.withLock { s in
                s.items = [[(type: "public.utf8-plain-text", bytes: Array("hello".utf8))],
                           [(type: "public.png", bytes: [0x89, 0x50, 0x4E, 0x47])]]
            }
            let scene = try await f.scene()
            _ = try await f.propose(scene, entering: true, info: f.info(types: ["public.utf8-plain-text", "public.png"], items: 2))
            try await f.broker.callClient("DropExited", [.string("7"), .string(scene)])
            // Entering again and performing: the delegate hears a second enter after the exit.
            _ = try await f.propose(scene, entering: true)
            #expect(f.board.reads.isEmpty, "nothing is read before the drop is performed")
            let reply = try await f.broker.callClient("PerformDrop", [.string("7"), .string(scene), f.info(operation: .copy)])
            let result = try #require(reply.first).get([String: DBusValue].self).mapValues(\.unwrappingVariants)
            #expect(result["message"] == .string("dropped 1 text(s)"))
            #expect(result["types"] == .array(of: .string, [.string("public.utf8-plain-text"), .string("public.png")]))
            let reads = f.board.reads
            #expect(reads.map(\.item) == [0, 1])
            #expect(reads.allSatisfy { $0.options["user-action"]?.unwrappingVariants == .boolean(true) })
            #expect(reads.allSatisfy { $0.sender == f.client.connection.uniqueName.rawValue })
            try await f.broker.callClient("ConcludeDrop", [.string("7"), .string(scene)])
            try await f.broker.callClient("DropEnded", [.string("7"), .string(scene), .string("copy")])
            #expect(f.events.dragOf(scene) == [
                "can \(scene)", "enter \(scene) public.utf8-plain-text,public.png", "update \(scene) at=10,20",
                "exit \(scene)",
                "can \(scene)", "enter \(scene) public.utf8-plain-text", "update \(scene) at=10,20",
                "image \(scene) 4 bytes", "perform \(scene) copy hello", "conclude \(scene)", "ended \(scene) copy",
            ])
            // The drop is over: a second DropEnded has no session left to end.
            try await f.broker.callClient("DropEnded", [.string("7"), .string(scene), .string("copy")])
            #expect(f.events.dragOf(scene).filter { $0.hasPrefix("ended") }.count == 1)
        }
    }

    @Test("a failing performDrop is an error reply with its code; a malformed info or operation is InvalidArgument")
    func failures() async throws {
        var behaviour = DragBehaviour()
        behaviour.performFailure = FerryError(.permissionDenied, "the note is locked")
        try await DragFixture.with(behaviour) { f in
            let scene = try await f.scene()
            _ = try await f.propose(scene, entering: true)
            await #expect {
                try await f.broker.callClient("PerformDrop", [.string("7"), .string(scene), f.info(operation: .copy)])
            } throws: { error in
                let error = error as? DBusError
                return error?.name.rawValue == "org.ferry.Error.PermissionDenied" && error?.message == "the note is locked"
            }
            for bad in [
                ["location": DBusValue.string("here"), "pasteboard": .string("org.ferry.drag.7")],
                ["location": .structure([.double(.nan), .double(0)]), "pasteboard": .string("org.ferry.drag.7")],
                ["types": .array(of: .string, [.string("not a type")]), "pasteboard": .string("org.ferry.drag.7")],
                ["types": .array(of: .string, [])],
                ["pasteboard": .string("no/slash")],
            ] as [[String: DBusValue]] {
                await #expect {
                    try await f.broker.callClient("DropEntered", [.string("7"), .string(scene), bad.dbusValue])
                } throws: { ($0 as? DBusError)?.name.rawValue == "org.ferry.Error.InvalidArgument" }
            }
            await #expect {
                try await f.broker.callClient("PerformDrop", [.string("7"), .string(scene), f.info(operation: .forbidden)])
            } throws: { ($0 as? DBusError)?.name.rawValue == "org.ferry.Error.InvalidArgument" }
            await #expect {
                try await f.broker.callClient("DropEnded", [.string("7"), .string(scene), .string("maybe")])
            } throws: { ($0 as? DBusError)?.name.rawValue == "org.ferry.Error.InvalidArgument" }
            await #expect {
                try await f.broker.callClient("DropEntered", [.string("7"), .string("gone"), f.info()])
            } throws: { ($0 as? DBusError)?.name.rawValue == "org.ferry.Error.NotFound" }
        }
    }

    @Test("the info reaches the delegate: local drags carry the source app and scene, others do not")
    func sessionValues() async throws {
        final class Capturing: SceneDelegate {
            let sessions = Mutex<[DropSession]>([])
            func pasteConfiguration(for scene: Scene) -> PasteConfiguration? { PasteConfiguration(acceptableTypes: [.plainText]) }
            func scene(_ scene: Scene, dropSessionDidUpdate session: DropSession) async -> DropProposal {
                sessions.withLock { $0.append(session) }
                return .copy
            }
        }
        final class CapturingApp: ApplicationDelegate {
            let delegate = Capturing()
            func application(_ application: Application, sceneDelegateFor session: SceneSession) -> any SceneDelegate { delegate }
        }
        try await ClientFixture.with(withBroker: false) { fixture in
            let broker = try await FakeBroker.start(on: fixture.bus)
            let client = try await fixture.client()
            let app = CapturingApp()
            _ = try await Application.register(client: client, manifest: sceneTestManifest(), delegate: app)
            let session = try broker.newSession()
            try await broker.connect(session)
            let scene = session.persistentIdentifier
            let remote: [String: DBusValue] = [
                "location": .structure([.double(1.5), .double(2.5)]), "items": .uint32(3),
                "types": .array(of: .string, [.string("public.utf8-plain-text"), .string("public.png")]),
                "pasteboard": .string("org.ferry.drag.12"), "allowsMove": .boolean(false), "isLocal": .boolean(false),
                "sourceApp": .string("org.example.other"), "sourceSession": .string("theirs"),
            ]
            _ = try await broker.callClient("DropEntered", [.string("12"), .string(scene), remote.dbusValue])
            var local = remote
            local["isLocal"] = .boolean(true)
            local["allowsMove"] = .boolean(true)
            _ = try await broker.callClient("DropUpdated", [.string("12"), .string(scene), local.dbusValue])
            let seen = app.delegate.sessions.withLock { $0 }
            #expect(seen.count == 2)
            #expect(seen.first == DropSession(id: "12", location: Point(x: 1.5, y: 2.5), types: [.utf8PlainText, .png],
                                              numberOfItems: 3, allowsMoveOperation: false, isLocal: false,
                                              pasteboardName: "org.ferry.drag.12"))
            #expect(seen.last?.sourceApp == "org.example.other")
            #expect(seen.last?.sourceSession == "theirs")
            #expect(seen.last?.allowsMoveOperation == true)
            #expect(seen.first?.hasItemsConforming(to: [.image]) == true)
            #expect(seen.first?.hasItemsConforming(to: [.pdf]) == false)
            await client.close()
            await broker.connection.close()
        }
    }
}
