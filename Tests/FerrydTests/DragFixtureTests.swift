import DBus
import FerryModel
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// An app on the raw D-Bus layer that takes part in drags: it exports org.ferry.Client1 version 3
/// (the scene methods answered plainly, the drag methods as its settings say), records every
/// call and registers with scenes=true.
final class FakeDragApp: Sendable {
    /// One call the broker made.
    typealias Call = BrokerCall

    /// What the app answers; changed by tests while it runs.
    struct Settings: Sendable {
        /// DropEntered / DropUpdated's operation.
        var proposal = "copy"
        var precise = false
        /// DropEntered / DropUpdated answer only after this long.
        var proposalDelay: Duration?
        /// What ProvideDragItems writes (SetItems items); empty: nothing to drag.
        var items: [DBusValue] = [FerrydFixture.item([FerrydFixture.representation("public.utf8-plain-text", "dragged text")])]
        /// ProvideDragItems' allowsMove and restrictedToApp.
        var providesMove = true
        var restricts = false
        /// PerformDrop fails with this error name instead of reading.
        var performFailure: String?
        /// PerformDrop reads and answers only after this long.
        var performDelay: Duration?
        /// DropEntered tries Items and Read on the drag pasteboard (recorded in ``probes``).
        var probeOnEnter = false
    }

    static let clientPath: ObjectPath = "/org/ferry/Client"

    let appID: String
    let manifest: [UInt8]
    let connection: Connection
    let settings: Mutex<Settings>
    private let log: FakeAppLog
    /// What the app's own reads of drag pasteboards gave: "Items during DropEntered: ok" …

    private init(appID: String, manifest: [UInt8], connection: Connection, settings: Settings) {
        self.appID = appID
        self.log = FakeAppLog(appID: appID)
        self.manifest = manifest
        self.connection = connection
        self.settings = Mutex(settings)
    }

    /// Connects to the fixture's bus, exports Client1, registers and waits for its first scene.
    /// With `singleScene` the manifest's `UIApplicationSupportsMultipleScenes` is false.
    static func start(_ fixture: FerrydFixture, _ appID: String, manifest: String,
                      settings: Settings = Settings(), singleScene: Bool = false) async throws -> FakeDragApp {
        var bytes = try FerrydFixture.manifest(manifest)
        if singleScene {
            let key = "<key>UIApplicationSupportsMultipleScenes</key>"
            let text = String(decoding: bytes, as: UTF8.self)
            let range = try #require(text.range(of: key + "\n\t\t<true/>"), "\(manifest)'s manifest supports multiple scenes")
            bytes = Array(text.replacingCharacters(in: range, with: key + "\n\t\t<false/>").utf8)
        }
        return try await start(fixture, appID, manifestBytes: bytes, settings: settings)
    }

    /// Connects, exports Client1 and registers with the manifest `bytes` as they are.
    static func start(_ fixture: FerrydFixture, _ appID: String, manifestBytes bytes: [UInt8],
                      settings: Settings = Settings()) async throws -> FakeDragApp {
        let app = FakeDragApp(appID: appID, manifest: bytes, connection: try await fixture.connect(), settings: settings)
        try app.connection.export(app.client, at: clientPath)
        _ = try await FerrydFixture.call(app.connection, "RegisterApp", [
            .string(appID), .bytes(app.manifest), .objectPath(clientPath), .variantDictionary(["scenes": true]),
        ])
        return app
    }

    /// The app's connected scenes, in the order they connected.
    var scenes: [String] { calls.filter { $0.member == "ConnectScene" }.map(\.scene) }

    /// Waits for the app's `count`-th scene to connect and become active; returns its id.
    func scene(_ count: Int = 1) async throws -> String {
        let calls = try await waitForCalls { calls in
            let connected = calls.filter { $0.member == "ConnectScene" }
            guard connected.count >= count else { return false }
            let id = connected[count - 1].scene
            return calls.contains { $0.member == "SceneChanged" && $0.scene == id
                && (try? $0.dictionary.value(forKey: "state", as: Int32.self)) == 0 }
        }
        return calls.filter { $0.member == "ConnectScene" }[count - 1].scene
    }

    /// Sets a scene's frame (SceneSession1.Update from the app's own connection).
    func setFrame(_ id: String, _ x: Double, _ y: Double, _ width: Double, _ height: Double) async throws {
        let frame: VariantDictionary = ["x": .double(x), "y": .double(y), "width": .double(width), "height": .double(height)]
        try await SceneBus.update(connection, id, ["frame": frame.dbusValue])
    }

    private func record(_ member: String, _ scene: String, _ arguments: [DBusValue]) {
        log.record(Call(member: member, scene: scene, arguments: arguments))
    }

    private func probe(_ line: String) { log.probe(line) }

    /// The outcomes of the app's own reads, in order.
    var probes: [String] { log.probes }

    /// Every call so far.
    var calls: [Call] { log.calls }

    /// The drag calls (not the scene ones) so far, as "Member scene" lines.
    var dragCalls: [Call] {
        let drag: Set = ["ProvideDragItems", "DropEntered", "DropUpdated", "DropExited", "PerformDrop", "ConcludeDrop",
                         "DropEnded", "DragEnded"]
        return calls.filter { drag.contains($0.member) }
    }

    /// Waits until `predicate` holds for the calls, then returns them.
    @discardableResult
    func waitForCalls(timeout: Duration = .seconds(30), _ predicate: ([Call]) -> Bool) async throws -> [Call] {
        try await log.waitForCalls(timeout: timeout, predicate)
    }

    /// Closes the connection (the app goes away).
    func quit() async { await connection.close(gracePeriod: .zero) }

    /// Tries `Read` of item 0 on a drag pasteboard; "ok <text>" or the error's name.
    private func tryRead(_ pasteboard: String) async -> String { await FakeAppLog.tryRead(connection, pasteboard) }

    /// Tries `Items` on a drag pasteboard; "ok <count>" or the error's name.
    func tryItems(_ pasteboard: String) async -> String { await FakeAppLog.tryItems(connection, pasteboard) }

    private func proposal(_ member: String, _ call: MethodCall) async throws -> [DBusValue] {
        record(member, try call.argument(1, as: String.self), call.arguments)
        let current = settings.withLock { $0 }
        if member == "DropEntered", current.probeOnEnter {
            let pasteboard = (try? call.argument(2, as: VariantDictionary.self).value(forKey: "pasteboard", as: String.self)) ?? ""
            probe("Items during DropEntered: \(await tryItems(pasteboard))")
            probe("Read during DropEntered: \(await tryRead(pasteboard))")
        }
        if let delay = current.proposalDelay { try await Task.sleep(for: delay) }
        return [.string(current.proposal), .boolean(current.precise)]
    }

    private var client: Interface {
        Interface("org.ferry.Client1") {
            Property("Version", "u", get: { _ in .uint32(3) })
            Method("ChooseConfiguration", in: ["session": "a{sv}", "options": "a{sv}"], out: ["configuration": "s"]) { call in
                let session = try call.argument(0, as: VariantDictionary.self)
                self.record("ChooseConfiguration", (try? session.value(forKey: "persistentIdentifier", as: String.self)) ?? "",
                            call.arguments)
                return [.string("")]
            }
            Method("ConnectScene", in: ["session": "a{sv}", "options": "a{sv}"]) { call in
                let session = try call.argument(0, as: VariantDictionary.self)
                self.record("ConnectScene", (try? session.value(forKey: "persistentIdentifier", as: String.self)) ?? "",
                            call.arguments)
                return []
            }
            Method("SceneChanged", in: ["persistent_id": "s", "changes": "a{sv}"]) { call in
                self.record("SceneChanged", try call.argument(0, as: String.self), call.arguments)
                return []
            }
            Method("ContinueActivity", in: ["persistent_id": "s", "activity": "a{sv}"]) { call in
                self.record("ContinueActivity", try call.argument(0, as: String.self), call.arguments)
                return []
            }
            Method("DisconnectScene", in: ["persistent_id": "s", "options": "a{sv}"]) { call in
                self.record("DisconnectScene", try call.argument(0, as: String.self), call.arguments)
                return []
            }
            Method("DiscardSceneSessions", in: ["persistent_ids": "as"]) { call in
                self.record("DiscardSceneSessions", "", call.arguments)
                return []
            }
            Method("ProvideDragItems", in: ["drag": "s", "persistent_id": "s", "pasteboard": "o", "options": "a{sv}"],
                   out: ["result": "a{sv}"]) { call in
                self.record("ProvideDragItems", try call.argument(1, as: String.self), call.arguments)
                let current = self.settings.withLock { $0 }
                if !current.items.isEmpty {
                    try await FerrydFixture.setItems(self.connection, current.items,
                                                     at: try call.argument(2, as: ObjectPath.self))
                }
                return [.variantDictionary(["count": .uint32(UInt32(current.items.count)),
                                            "allowsMove": .boolean(current.providesMove),
                                            "restrictedToApp": .boolean(current.restricts)])]
            }
            Method("DropEntered", in: ["drag": "s", "persistent_id": "s", "info": "a{sv}"],
                   out: ["operation": "s", "precise": "b"]) { call in
                try await self.proposal("DropEntered", call)
            }
            Method("DropUpdated", in: ["drag": "s", "persistent_id": "s", "info": "a{sv}"],
                   out: ["operation": "s", "precise": "b"]) { call in
                try await self.proposal("DropUpdated", call)
            }
            Method("DropExited", in: ["drag": "s", "persistent_id": "s"]) { call in
                self.record("DropExited", try call.argument(1, as: String.self), call.arguments)
                return []
            }
            Method("PerformDrop", in: ["drag": "s", "persistent_id": "s", "info": "a{sv}"], out: ["result": "a{sv}"]) { call in
                self.record("PerformDrop", try call.argument(1, as: String.self), call.arguments)
                if let failure = self.settings.withLock({ $0.performFailure }) {
                    throw DBusError(try ErrorName(failure), "the test app refuses the drop")
                }
                if let delay = self.settings.withLock({ $0.performDelay }) { try await Task.sleep(for: delay) }
                let pasteboard = (try? call.argument(2, as: VariantDictionary.self).value(forKey: "pasteboard", as: String.self)) ?? ""
                let read = await self.tryRead(pasteboard)
                self.probe("Read during PerformDrop: \(read)")
                return [.variantDictionary(["message": .string("dropped: \(read)"),
                                            "types": .array(of: .string, ["public.utf8-plain-text"])])]
            }
            Method("ConcludeDrop", in: ["drag": "s", "persistent_id": "s"]) { call in
                self.record("ConcludeDrop", try call.argument(1, as: String.self), call.arguments)
                return []
            }
            Method("DropEnded", in: ["drag": "s", "persistent_id": "s", "operation": "s"]) { call in
                self.record("DropEnded", try call.argument(1, as: String.self), call.arguments)
                return []
            }
            Method("DragEnded", in: ["drag": "s", "persistent_id": "s", "operation": "s", "info": "a{sv}"]) { call in
                self.record("DragEnded", try call.argument(1, as: String.self), call.arguments)
                return []
            }
        }
    }
}

/// Calls on org.ferry.DragManager1 and the drag sessions.
enum DragBus {
    static let path: ObjectPath = "/org/ferry/Drag"
    static let interface: InterfaceName = "org.ferry.DragManager1"
    static let sessionInterface: InterfaceName = "org.ferry.DragSession1"

    /// A Move's answer.
    struct Proposal: Sendable, Equatable, CustomStringConvertible {
        var operation: String
        var precise = false
        var target = ""
        var edge = ""
        var description: String { "\(operation) target=\(target) edge=\(edge)\(precise ? " precise" : "")" }
    }

    /// BeginDrag; the session's and the pasteboard's paths.
    static func begin(_ connection: Connection, scene: String,
                      _ options: [String: DBusValue] = [:]) async throws -> (session: ObjectPath, pasteboard: ObjectPath) {
        let reply = try await connection.call(destination: FerrydFixture.broker, path: path, interface: interface,
                                              member: "BeginDrag", body: [.string(scene), options.dbusValue],
                                              timeout: .seconds(20))
        return (try reply[0].get(ObjectPath.self), try reply[1].get(ObjectPath.self))
    }

    static func move(_ connection: Connection, _ session: ObjectPath, _ x: Double, _ y: Double) async throws -> Proposal {
        let reply = try await connection.call(destination: FerrydFixture.broker, path: session, interface: sessionInterface,
                                              member: "Move", body: [.structure([.double(x), .double(y)])],
                                              timeout: .seconds(10))
        return Proposal(operation: try reply[0].get(String.self), precise: try reply[1].get(Bool.self),
                        target: try reply[2].get(String.self), edge: try reply[3].get(String.self))
    }

    static func drop(_ connection: Connection, _ session: ObjectPath) async throws -> VariantDictionary {
        try await connection.call(destination: FerrydFixture.broker, path: session, interface: sessionInterface,
                                  member: "Drop", timeout: .seconds(40))[0].get(VariantDictionary.self)
    }

    static func cancel(_ connection: Connection, _ session: ObjectPath) async throws {
        _ = try await connection.call(destination: FerrydFixture.broker, path: session, interface: sessionInterface,
                                      member: "Cancel", timeout: .seconds(10))
    }

    static func lastDrag(_ connection: Connection) async throws -> VariantDictionary {
        try await connection.call(destination: FerrydFixture.broker, path: path, interface: interface,
                                  member: "LastDrag", timeout: .seconds(10))[0].get(VariantDictionary.self)
    }

    /// LastDrag's points as (x, y, target, operation).
    static func points(_ drag: VariantDictionary) -> [(x: Double, y: Double, target: String, operation: String)] {
        guard case .array(_, let elements)? = drag["points"]?.unwrappingVariants else { return [] }
        return elements.compactMap { element in
            guard case .structure(let fields) = element, fields.count == 4, case .double(let x) = fields[0],
                  case .double(let y) = fields[1], case .string(let target) = fields[2],
                  case .string(let operation) = fields[3] else { return nil }
            return (x, y, target, operation)
        }
    }

    /// A string entry of an outcome or record ("" when missing).
    static func string(_ dictionary: VariantDictionary, _ key: String) -> String {
        (try? dictionary.value(forKey: key, as: String.self)) ?? ""
    }

    /// A user-activity representation (archived) for SetItems.
    static func activityRepresentation(_ type: String, userInfo: [String: PropertyListValue] = [:]) throws -> DBusValue {
        var activity = try UserActivity(activityType: type)
        activity.userInfo = userInfo
        return FerrydFixture.representation("org.ferry.user-activity", [UInt8](try activity.archivedData()))
    }

    /// The error name a call fails with ("" when it succeeds).
    static func errorName(_ body: () async throws -> Void) async -> String {
        await FerrydFixture.failure(body)?.name ?? ""
    }
}

/// Two apps with one scene each, side by side: Notes (the source) at (100, 100, 600×600) and
/// Gallery at (1000, 100, 600×600), on a 1920×1080 screen with 24 px edge zones.
struct DragStage {
    let fixture: FerrydFixture
    let daemon: ServiceProcess
    let notes: FakeDragApp
    let gallery: FakeDragApp
    let notesScene: String
    let galleryScene: String
    /// A tool's connection (the initiator of scripted drags).
    let tool: Connection

    static func start(_ extra: [String] = [], notes: FakeDragApp.Settings = .init(),
                      gallery: FakeDragApp.Settings = .init(), notesSingleScene: Bool = false) async throws -> DragStage {
        let fixture = try FerrydFixture()
        let daemon = try await fixture.start(extra)
        let notesApp = try await FakeDragApp.start(fixture, "org.ferry.notes", manifest: "Notes", settings: notes,
                                                   singleScene: notesSingleScene)
        let notesScene = try await notesApp.scene()
        try await notesApp.setFrame(notesScene, 100, 100, 600, 600)
        let galleryApp = try await FakeDragApp.start(fixture, "org.ferry.gallery", manifest: "Gallery", settings: gallery)
        let galleryScene = try await galleryApp.scene()
        try await galleryApp.setFrame(galleryScene, 1000, 100, 600, 600)
        return DragStage(fixture: fixture, daemon: daemon, notes: notesApp, gallery: galleryApp, notesScene: notesScene,
                         galleryScene: galleryScene, tool: try await fixture.connect())
    }

    /// Stops ferryd and removes its state; the connections close in the background.
    func stop() {
        daemon.stop()
        fixture.cleanUp()
        let (tool, notes, gallery) = (tool, notes, gallery)
        Task {
            await tool.close(gracePeriod: .zero)
            await notes.quit()
            await gallery.quit()
        }
    }
}

extension DragBus {
    /// A DragSession1 property.
    static func property(_ connection: Connection, _ session: ObjectPath, _ name: String) async throws -> DBusValue {
        try await connection.call(destination: FerrydFixture.broker, path: session,
                                  interface: "org.freedesktop.DBus.Properties", member: "Get",
                                  body: [.string(sessionInterface.rawValue), .string(name)],
                                  timeout: .seconds(10))[0].unwrappingVariants
    }
}
