import DBus
import Ferry
import FerryBus
import FerryModel
import FerryTestSupport
import Foundation
import Synchronization
import Testing

// This file holds the drag and drop tests' fixture — the scene tests' fake broker (a raw
// connection owning org.ferry.Broker on a real private bus) plus a fake drag pasteboard and
// drag session it exports, and a recording drag/drop delegate — and the source-side tests that
// exercise it. End-to-end tests against the real ferryd are in DragEndToEndTests.swift.

/// A drag pasteboard `org.ferry.drag.<n>` served by the fake broker: its items (types and
/// bytes), the SetItems and Read calls it got.
final class FakeDragBoard: Sendable {
    struct State {
        var items: [[(type: String, bytes: [UInt8])]] = []
        var setItems: [(items: [[String: DBusValue]], options: [String: DBusValue])] = []
        var reads: [(item: UInt32, type: String, options: [String: DBusValue], sender: String)] = []
        var ids: [String] = []
    }

    let name: String
    let path: ObjectPath
    let state = Mutex(State())

    init(number: Int, on connection: Connection) throws {
        name = "org.ferry.drag.\(number)"
        path = try ObjectPath(PasteboardName.objectPath(name))
        try connection.export(interface(), at: path)
    }

    var setItems: [(items: [[String: DBusValue]], options: [String: DBusValue])] { state.withLock { $0.setItems } }
    var reads: [(item: UInt32, type: String, options: [String: DBusValue], sender: String)] { state.withLock { $0.reads } }

    private func interface() -> Interface {
        Interface("org.ferry.Pasteboard1") {
            Property("ChangeCount", "t", get: { _ in .uint64(1) })
            Method("Items", out: ["items": "aa{sv}"]) { [weak self] _ in
                let items = self?.state.withLock { $0.items } ?? []
                let values: [DBusValue] = items.enumerated().map { index, item in
                    let representations: [DBusValue] = item.map {
                        ["type": DBusValue.string($0.type), "size": .int64(Int64($0.bytes.count))].dbusValue
                    }
                    return ["id": DBusValue.string("00000000-0000-4000-8000-00000000000\(index)"),
                            "representations": .array(of: "a{sv}", representations)].dbusValue
                }
                return [.array(of: "a{sv}", values)]
            }
            Method("SetItems", in: ["items": "aa{sv}", "options": "a{sv}"], out: ["change_count": "t", "ids": "as"]) {
                [weak self] call in
                guard let self else { return [] }
                let (items, options) = try call.arguments([[String: DBusValue]].self, [String: DBusValue].self)
                let ids = items.map { _ in UUID().uuidString }
                self.state.withLock { s in
                    s.setItems.append((items, options))
                    s.ids += ids
                }
                return [.uint64(2), .array(of: .string, ids.map(DBusValue.string))]
            }
            Method("Read", in: ["item": "u", "type": "s", "options": "a{sv}"],
                   out: ["type": "s", "size": "x", "data": "v", "transfer": "s"]) { [weak self] call in
                guard let self else { return [] }
                let (index, type, options) = try call.arguments(UInt32.self, String.self, [String: DBusValue].self)
                let found = self.state.withLock { s -> (String, [UInt8])? in
                    s.reads.append((index, type, options, call.sender.rawValue))
                    guard Int(index) < s.items.count, let wanted = ContentType(importedAs: type) else { return nil }
                    return s.items[Int(index)].first { ContentType(importedAs: $0.type)?.conforms(to: wanted) == true }
                        .map { ($0.type, $0.bytes) }
                }
                guard let (delivered, bytes) = found else {
                    throw DBusError(ErrorName("org.ferry.Error.NotFound"), "nothing conforms to \(type)")
                }
                return [.string(delivered), .int64(Int64(bytes.count)), .variant(.bytes(bytes)), .string("")]
            }
        }
    }
}

/// What the drag delegates saw, in order: `connect <scene> <activity type> item=<i>`, `items <scene> drag=<n> item=<i> at=<x>,<y> move=<b>`,
/// `can <scene>`, `enter <scene> <types>`, `update <scene> at=<x>,<y>`, `exit <scene>`,
/// `image <scene> <n> bytes`, `perform <scene> <op> <texts>`, `conclude <scene>`, `ended <scene> <op>`,
/// `moved <scene> drag=<n> <x>,<y> <op>`, `dragEnd <scene> drag=<n> <op> target=<t> new=<s>`.
typealias DragEvents = SceneEvents

extension SceneEvents {
    /// The events of scene `id` but its connection.
    func dragOf(_ id: String) -> [String] { of(id).filter { !$0.hasPrefix("connect ") } }
}

/// How the drag scene delegate behaves.
struct DragBehaviour: Sendable {
    var pasteConfiguration: PasteConfiguration? = PasteConfiguration(acceptableTypes: [.plainText])
    var proposal: DropProposal = .copy
    /// The texts a drag from the scene carries (one item each); empty: nothing to drag.
    var texts: [String] = []
    /// Extra bytes per dragged item (a `public.png` representation of that many bytes), 0 for none.
    var imageBytes = 0
    /// performDrop loads the images all at once, sampling ``DropSession/progress`` meanwhile,
    /// and records `dropProgress <scene> <completed>/<total> between=<fractions strictly in 0…1>`.
    var samplesDropProgress = false
    var allowsMove = true
    var restrictedToApp = false
    /// How long dropSessionDidUpdate takes.
    var updateDelay: Duration = .zero
    /// performDrop fails with this, when set.
    var performFailure: FerryError?
    /// A user activity each dragged item carries too (`org.ferry.user-activity`).
    var activity: UserActivity?
    /// dropSessionDidUpdate reads the drag pasteboard's metadata over the bus first.
    var readsMetadataOnUpdate = false
    /// The previews a drag from the scene gives its items.
    var previews: [DragPreview?] = []
    /// dropSessionDidUpdate reads the session's previews and tries the first item's text,
    /// recording `previews <scene> <title>|<image as base64>;…` and `content <scene> <result>`.
    var readsPreviewsOnUpdate = false
}

final class DragAppDelegate: ApplicationDelegate {
    let events: DragEvents
    let behaviour: DragBehaviour
    init(events: DragEvents, behaviour: DragBehaviour) {
        self.events = events
        self.behaviour = behaviour
    }

    func application(_ application: Application, sceneDelegateFor session: SceneSession) -> any SceneDelegate {
        DragSceneDelegate(events: events, behaviour: behaviour)
    }
}

/// A scene delegate for drags: drags ``DragBehaviour/texts``, accepts by its paste configuration,
/// proposes ``DragBehaviour/proposal`` and reads the texts on performDrop; records every call.
final class DragSceneDelegate: SceneDelegate {
    let events: DragEvents
    let behaviour: DragBehaviour
    /// What performDrop loaded, kept for a later (too late) load.
    let kept = Mutex<[ItemProvider]>([])

    init(events: DragEvents, behaviour: DragBehaviour) {
        self.events = events
        self.behaviour = behaviour
    }

    func pasteConfiguration(for scene: Scene) -> PasteConfiguration? { behaviour.pasteConfiguration }

    func scene(_ scene: Scene, willConnectTo session: SceneSession, options: SceneConnectionOptions) async {
        let activity = options.userActivities.first
        events.add("connect \(scene.persistentIdentifier) \(activity?.activityType ?? "-") "
                   + "item=\(activity?.userInfo["item"]?.stringValue ?? "-")")
    }

    func scene(_ scene: Scene, itemsForBeginning request: DragRequest) async -> DragItems {
        events.add("items \(scene.persistentIdentifier) drag=\(request.id) item=\(request.item) "
                   + "at=\(Int(request.location.x)),\(Int(request.location.y)) move=\(request.wantsMove)")
        let providers = behaviour.texts.map { text in
            var provider = ItemProvider()
            provider.registerDataRepresentation(for: .utf8PlainText, data: Data(text.utf8))
            if behaviour.imageBytes > 0 {
                provider.registerDataRepresentation(for: .png, data: pngLikeBytes(behaviour.imageBytes))
            }
            if let archived = try? behaviour.activity?.archivedData() {
                provider.registerDataRepresentation(for: .userActivity, data: archived)
            }
            return provider
        }
        return DragItems(providers, allowsMoveOperation: behaviour.allowsMove, restrictedToApp: behaviour.restrictedToApp,
                         previews: behaviour.previews)
    }

    func scene(_ scene: Scene, dragSessionDidMove id: String, to location: Point, operation: DropOperation) async {
        events.add("moved \(scene.persistentIdentifier) drag=\(id) \(Int(location.x)),\(Int(location.y)) \(operation)")
    }

    func scene(_ scene: Scene, dragSessionDidEnd end: DragEnd) async {
        events.add("dragEnd \(scene.persistentIdentifier) drag=\(end.id) \(end.operation) target=\(end.target ?? "-") "
                   + "new=\(end.newSession ?? "-")")
    }

    func scene(_ scene: Scene, canHandle session: DropSession) -> Bool {
        events.add("can \(scene.persistentIdentifier)")
        return behaviour.pasteConfiguration.map(session.canLoad) ?? false
    }

    func scene(_ scene: Scene, dropSessionDidEnter session: DropSession) async {
        events.add("enter \(scene.persistentIdentifier) \(session.types.map(\.identifier).joined(separator: ","))")
    }

    func scene(_ scene: Scene, dropSessionDidUpdate session: DropSession) async -> DropProposal {
        if behaviour.updateDelay > .zero { try? await Task.sleep(for: behaviour.updateDelay) }
        if behaviour.readsMetadataOnUpdate, let client = scene.application?.client {
            do {
                let items = try await client.pasteboard(named: session.pasteboardName).items
                events.add("metadata \(scene.persistentIdentifier) \(items.count) items")
            } catch {
                events.add("metadata \(scene.persistentIdentifier) failed: \(error)")
            }
        }
        if behaviour.readsPreviewsOnUpdate, let client = scene.application?.client {
            do {
                let previews = try await session.previews()
                events.add("previews \(scene.persistentIdentifier) " + previews.map { preview in
                    preview.map { "\($0.title ?? "-")|\($0.image?.base64EncodedString() ?? "-")" } ?? "none"
                }.joined(separator: ";"))
            } catch {
                events.add("previews \(scene.persistentIdentifier) failed: \(error.code)")
            }
            do {
                let text = try await client.pasteboard(named: session.pasteboardName).data(forType: .utf8PlainText, userAction: true)
                events.add("content \(scene.persistentIdentifier) read \(text?.count ?? 0) bytes")
            } catch {
                events.add("content \(scene.persistentIdentifier) \(error.code)")
            }
        }
        events.add("update \(scene.persistentIdentifier) at=\(Int(session.location.x)),\(Int(session.location.y))")
        return behaviour.proposal
    }

    func scene(_ scene: Scene, dropSessionDidExit session: DropSession) async {
        events.add("exit \(scene.persistentIdentifier)")
    }

    func scene(_ scene: Scene, performDrop session: DropSession, operation: DropOperation,
               itemProviders: [ItemProvider]) async throws -> String {
        if let failure = behaviour.performFailure { throw failure }
        kept.withLock { $0 = itemProviders }
        var texts: [String] = []
        for provider in itemProviders where provider.hasRepresentationConforming(to: .plainText) {
            texts.append(String(decoding: try await provider.loadData(for: .plainText).data, as: UTF8.self))
        }
        if behaviour.samplesDropProgress {
            let images = itemProviders.filter { $0.hasRepresentationConforming(to: .image) }
            let progress = session.progress
            // Sampled on a thread of its own, not the cooperative pool: the loads run on the pool,
            // and on two busy cores a sampling task there may not run until they have finished.
            let sampling = Mutex((stop: false, between: Set<Double>()))
            let sampler = Thread {
                while !sampling.withLock({ $0.stop }) {
                    let fraction = progress.fractionCompleted
                    if fraction > 0 && fraction < 1 { sampling.withLock { _ = $0.between.insert(fraction) } }
                    usleep(100)
                }
            }
            sampler.start()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for provider in images { group.addTask { _ = try await provider.loadData(for: .image) } }
                try await group.waitForAll()
            }
            let between = sampling.withLock { state in
                state.stop = true
                return state.between
            }
            events.add("dropProgress \(scene.persistentIdentifier) \(progress.completedUnitCount)/\(progress.totalUnitCount) "
                       + "between=\(between.count)")
        }
        for provider in itemProviders where provider.hasRepresentationConforming(to: .image) {
            let image = try await provider.loadData(for: .image).data
            events.add("image \(scene.persistentIdentifier) \(image.count) bytes")
        }
        events.add("perform \(scene.persistentIdentifier) \(operation) \(texts.joined(separator: "|"))")
        return "dropped \(texts.count) text(s)"
    }

    func scene(_ scene: Scene, concludeDrop session: DropSession) async {
        events.add("conclude \(scene.persistentIdentifier)")
    }

    func scene(_ scene: Scene, dropSessionDidEnd session: DropSession, operation: DropOperation) async {
        events.add("ended \(scene.persistentIdentifier) \(operation)")
    }
}

/// A fake broker with a drag pasteboard `org.ferry.drag.7`, and an application with the drag
/// delegate, on a fresh private bus.
struct DragFixture {
    let bus: PrivateBus
    let broker: FakeBroker
    let board: FakeDragBoard
    let client: FerryClient
    let application: Application
    let events: DragEvents

    static let drag = "7"

    static func with(_ behaviour: DragBehaviour = DragBehaviour(), _ body: (DragFixture) async throws -> Void) async throws {
        try await ClientFixture.with(withBroker: false) { fixture in
            let broker = try await FakeBroker.start(on: fixture.bus)
            let board = try FakeDragBoard(number: 7, on: broker.connection)
            let client = try await fixture.client()
            let events = DragEvents()
            let application = try await Application.register(client: client, manifest: sceneTestManifest(),
                                                             delegate: DragAppDelegate(events: events, behaviour: behaviour))
            let f = DragFixture(bus: fixture.bus, broker: broker, board: board, client: client, application: application, events: events)
            do {
                try await body(f)
            } catch {
                await client.close()
                await broker.connection.close()
                throw error
            }
            await client.close()
            await broker.connection.close()
        }
    }

    /// Connects a new scene and returns its persistent identifier.
    func scene() async throws -> String {
        let session = try broker.newSession()
        try await broker.connect(session)
        return session.persistentIdentifier
    }

    /// A DropEntered/DropUpdated/PerformDrop `info` dictionary.
    func info(at location: Point = Point(x: 10, y: 20), types: [String] = ["public.utf8-plain-text"], items: UInt32 = 1,
              allowsMove: Bool = false, isLocal: Bool = false, operation: DropOperation? = nil) -> DBusValue {
        var info: [String: DBusValue] = [
            "location": .structure([.double(location.x), .double(location.y)]),
            "types": .array(of: .string, types.map(DBusValue.string)),
            "items": .uint32(items),
            "pasteboard": .string(board.name),
            "allowsMove": .boolean(allowsMove),
            "isLocal": .boolean(isLocal),
        ]
        if isLocal {
            info["sourceApp"] = .string(FakeBroker.appID)
            info["sourceSession"] = .string("source-scene")
        }
        if let operation { info["operation"] = .string(operation.name) }
        return info.dbusValue
    }

    /// The proposal the app answers to DropEntered (`entering`) or DropUpdated.
    func propose(_ scene: String, entering: Bool, info: DBusValue? = nil) async throws -> DropProposal {
        let reply = try await broker.callClient(entering ? "DropEntered" : "DropUpdated",
                                                [.string(Self.drag), .string(scene), info ?? self.info()])
        let operation = try #require(DropOperation(name: try reply[0].get(String.self)))
        return DropProposal(operation: operation, isPrecise: try reply[1].get(Bool.self))
    }
}

/// `ProvideDragItems` and the source's `Moved` / `DragEnded`, driven by the fake broker.
@Suite("Ferry: a drag from a scene (the source side of org.ferry.Client1)")
struct DragSourceTests {
    /// The representations of a written item (`av` of `a{sv}`), variants unwrapped.
    static func representations(_ item: [String: DBusValue]) -> [[String: DBusValue]] {
        guard case .array(_, let elements)? = item["representations"]?.unwrappingVariants else { return [] }
        return elements.compactMap { try? [String: DBusValue](dbusValue: $0.unwrappingVariants).mapValues(\.unwrappingVariants) }
    }

    static func result(_ reply: [DBusValue]) throws -> [String: DBusValue] {
        try #require(reply.first).get([String: DBusValue].self).mapValues(\.unwrappingVariants)
    }

    @Test("ProvideDragItems: itemsForBeginning's items are written on the drag pasteboard; the reply has count, allowsMove, restrictedToApp")
    func provideItems() async throws {
        var behaviour = DragBehaviour()
        behaviour.texts = ["one", "two"]
        behaviour.allowsMove = false
        behaviour.restrictedToApp = true
        try await DragFixture.with(behaviour) { f in
            let scene = try await f.scene()
            let options: [String: DBusValue] = ["item": .uint32(3), "location": .structure([.double(5), .double(6)]),
                                                "allowsMove": .boolean(true)]
            let result = try Self.result(try await f.broker.callClient(
                "ProvideDragItems", [.string(DragFixture.drag), .string(scene), .objectPath(f.board.path), options.dbusValue]))
            #expect(result["count"] == .uint32(2))
            #expect(result["allowsMove"] == .boolean(false))
            #expect(result["restrictedToApp"] == .boolean(true))
            #expect(f.events.all.last == "items \(scene) drag=7 item=3 at=5,6 move=true")
            let writes = f.board.setItems
            #expect(writes.count == 1)
            #expect(writes.first?.options["append"] == nil)
            let texts = writes.first?.items.compactMap { item -> String? in
                guard case .bytes(let bytes)? = DragSourceTests.representations(item).first?["data"] else { return nil }
                return String(decoding: bytes, as: UTF8.self)
            }
            #expect(texts == ["one", "two"])
        }
    }

    @Test("ProvideDragItems with nothing to drag answers count 0 and writes nothing; a bad pasteboard path or scene is refused")
    func nothingToDrag() async throws {
        try await DragFixture.with { f in
            let scene = try await f.scene()
            let result = try Self.result(try await f.broker.callClient(
                "ProvideDragItems", [.string("7"), .string(scene), .objectPath(f.board.path), [String: DBusValue]().dbusValue]))
            #expect(result["count"] == .uint32(0))
            #expect(f.board.setItems.isEmpty)
            await #expect {
                try await f.broker.callClient("ProvideDragItems", [.string("7"), .string("no-such-scene"),
                                                                   .objectPath(f.board.path), [String: DBusValue]().dbusValue])
            } throws: { ($0 as? DBusError)?.name.rawValue == "org.ferry.Error.NotFound" }
            await #expect {
                try await f.broker.callClient("ProvideDragItems", [.string("7"), .string(scene), .objectPath("/not/a/pasteboard"),
                                                                   [String: DBusValue]().dbusValue])
            } throws: { ($0 as? DBusError)?.name.rawValue == "org.ferry.Error.InvalidArgument" }
            await #expect {
                try await f.broker.callClient("ProvideDragItems", [.string("7"), .string(scene), .objectPath(f.board.path),
                                                                   ["item": DBusValue.string("first")].dbusValue])
            } throws: { ($0 as? DBusError)?.name.rawValue == "org.ferry.Error.InvalidArgument" }
        }
    }

    @Test("a representation over 1 MiB is promised on the drag pasteboard, not handed over")
    func largePromised() async throws {
        var behaviour = DragBehaviour()
        behaviour.texts = ["photo"]
        behaviour.imageBytes = 3 << 20
        try await DragFixture.with(behaviour) { f in
            let scene = try await f.scene()
            _ = try await f.broker.callClient(
                "ProvideDragItems", [.string("7"), .string(scene), .objectPath(f.board.path), [String: DBusValue]().dbusValue])
            let item = try #require(f.board.setItems.first?.items.first)
            let representations = Self.representations(item)
            #expect(representations.count == 2)
            let png = try #require(representations.first { $0["type"] == .string("public.png") })
            #expect(png["promised"] == .boolean(true))
            #expect(png["fd"] == nil && png["data"] == nil)
            #expect(png["estimatedSize"] == .int64(3 << 20))
            let text = try #require(representations.first { $0["type"] == .string("public.utf8-plain-text") })
            #expect(text["data"] == .bytes(Array("photo".utf8)))
        }
    }

    @Test("Moved signals of the drag reach dragSessionDidMove in order; DragEnded reaches dragSessionDidEnd after them")
    func movesThenEnd() async throws {
        var behaviour = DragBehaviour()
        behaviour.texts = ["note"]
        try await DragFixture.with(behaviour) { f in
            let scene = try await f.scene()
            _ = try await f.broker.callClient(
                "ProvideDragItems", [.string("7"), .string(scene), .objectPath(f.board.path), [String: DBusValue]().dbusValue])
            // Another drag's signal is not this scene's business.
            try f.broker.connection.emit(path: "/org/ferry/Drag/8", interface: "org.ferry.DragSession1", member: "Moved",
                                         body: [.structure([.double(1), .double(1)]), .string(""), .string("cancel")])
            for (x, operation) in [(100.0, "cancel"), (200.0, "forbidden"), (300.0, "copy")] {
                try f.broker.connection.emit(path: "/org/ferry/Drag/7", interface: "org.ferry.DragSession1", member: "Moved",
                                             body: [.structure([.double(x), .double(50)]), .string("t"), .string(operation)])
            }
            try await f.broker.callClient("DragEnded", [.string("7"), .string(scene), .string("copy"),
                                                        ["target": DBusValue.string("other")].dbusValue])
            let seen = f.events.dragOf(scene).filter { $0.hasPrefix("moved") || $0.hasPrefix("dragEnd") }
            #expect(seen == [
                "moved \(scene) drag=7 100,50 cancel",
                "moved \(scene) drag=7 200,50 forbidden",
                "moved \(scene) drag=7 300,50 copy",
                "dragEnd \(scene) drag=7 copy target=other new=-",
            ])
            // After the end, moves are no longer heard.
            try f.broker.connection.emit(path: "/org/ferry/Drag/7", interface: "org.ferry.DragSession1", member: "Moved",
                                         body: [.structure([.double(9), .double(9)]), .string(""), .string("cancel")])
            await provingNothingHappens(for: .milliseconds(200))
            #expect(!f.events.all.contains { $0.contains("9,9") })
            await #expect {
                try await f.broker.callClient("DragEnded", [.string("7"), .string(scene), .string("sideways"),
                                                            [String: DBusValue]().dbusValue])
            } throws: { ($0 as? DBusError)?.name.rawValue == "org.ferry.Error.InvalidArgument" }
        }
    }

    @Test("a drag's moves are heard from the broker running it only: a broker started later numbers its drags from 1 again")
    func movesFromItsBrokerOnly() async throws {
        var behaviour = DragBehaviour()
        behaviour.texts = ["note"]
        try await DragFixture.with(behaviour) { f in
            let session = try f.broker.newSession()
            try await f.broker.connect(session)
            let scene = session.persistentIdentifier
            _ = try await f.broker.callClient(
                "ProvideDragItems", [.string("7"), .string(scene), .objectPath(f.board.path), [String: DBusValue]().dbusValue])
            // The broker goes without ending its drag, and a new one takes over (knowing the scene).
            try await f.broker.connection.releaseName("org.ferry.Broker")
            let next = try await FakeBroker.start(on: f.bus, knowing: [session])
            do {
                try await next.eventually { next.app != nil }
                // The new broker's drag 7 is not the one this scene began.
                try next.connection.emit(path: "/org/ferry/Drag/7", interface: "org.ferry.DragSession1", member: "Moved",
                                         body: [.structure([.double(9), .double(9)]), .string(""), .string("copy")])
                // DragEnded returns once every Moved signal received before it has been delivered.
                try await next.callClient("DragEnded", [.string("7"), .string(scene), .string("cancel"),
                                                        [String: DBusValue]().dbusValue])
                let seen = f.events.dragOf(scene).filter { $0.hasPrefix("moved") || $0.hasPrefix("dragEnd") }
                #expect(seen == ["dragEnd \(scene) drag=7 cancel target=- new=-"])
            } catch {
                await next.connection.close()
                throw error
            }
            await next.connection.close()
        }
    }

    @Test("only the owner of org.ferry.Broker may call the drag methods")
    func onlyTheBroker() async throws {
        var behaviour = DragBehaviour()
        behaviour.texts = ["secret"]
        try await DragFixture.with(behaviour) { f in
            let scene = try await f.scene()
            let stranger = try await Connection(address: f.bus.address)
            defer { Task { await stranger.close() } }
            for (member, body) in [
                ("ProvideDragItems", [.string("7"), .string(scene), .objectPath(f.board.path), [String: DBusValue]().dbusValue]),
                ("DropEntered", [.string("7"), .string(scene), f.info()]),
                ("PerformDrop", [.string("7"), .string(scene), f.info(operation: .copy)]),
            ] as [(MemberName, [DBusValue])] {
                await #expect {
                    try await stranger.call(destination: f.client.connection.uniqueName, path: FerryClient.clientPath,
                                            interface: "org.ferry.Client1", member: member, body: body, timeout: .seconds(10))
                } throws: { ($0 as? DBusError)?.name.rawValue == "org.ferry.Error.PermissionDenied" }
            }
            #expect(f.board.setItems.isEmpty)
            #expect(!f.events.all.contains { $0.hasPrefix("items") || $0.hasPrefix("can") })
        }
    }
}
