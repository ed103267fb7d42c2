import DBus
import FerryModel
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// An app on the raw D-Bus layer that takes part in shares: it exports org.ferry.Client1 version
/// 4 (the scene methods answered plainly, the share methods as its settings say), records every
/// call, registers (with scenes or without) and may register activities.
final class FakeShareApp: Sendable {
    /// One call the broker made.
    typealias Call = BrokerCall

    /// What the app answers; changed by tests while it runs.
    struct Settings: Sendable {
        /// What ProvideActivityItems writes (SetItems items); empty: count 0.
        var items: [DBusValue] = [FerrydFixture.item([FerrydFixture.representation("public.utf8-plain-text", "shared text")])]
        /// ProvideActivityItems' title, interactions and metadata.
        var title: String?
        var interactions: [String]?
        var metadata: [VariantDictionary] = []
        /// CanPerformActivities names these (nil: every type asked).
        var able: [String]?
        /// CanPerformActivities tries Items and Read on the share pasteboard (recorded in ``probes``).
        var probeDuringCanPerform = false
        /// CanPerformActivities answers only after this long.
        var canPerformDelay: Duration?
        /// PerformActivity fails with this error name instead of reading.
        var performFailure: String?
        /// PerformActivity waits this long before it reads (an app that hangs, or is quit meanwhile).
        var performDelay: Duration?
        /// PerformActivity's result.
        var completed = true
        /// The type PerformActivity reads.
        var readType = "public.plain-text"
    }

    static let clientPath: ObjectPath = "/org/ferry/Client"

    let appID: String
    let connection: Connection
    let settings: Mutex<Settings>
    private let log: FakeAppLog

    private init(appID: String, connection: Connection, settings: Settings) {
        self.appID = appID
        self.log = FakeAppLog(appID: appID)
        self.connection = connection
        self.settings = Mutex(settings)
    }

    /// Connects, exports Client1 and registers (with scenes: waits for its first scene).
    static func start(_ fixture: FerrydFixture, _ appID: String, manifest: [UInt8]? = nil, scenes: Bool = false,
                      settings: Settings = Settings()) async throws -> FakeShareApp {
        let app = FakeShareApp(appID: appID, connection: try await fixture.connect(), settings: settings)
        try app.connection.export(app.client, at: clientPath)
        _ = try await FerrydFixture.call(app.connection, "RegisterApp", [
            .string(appID), .bytes(manifest ?? Self.manifest(appID)), .objectPath(clientPath),
            .variantDictionary(["scenes": .boolean(scenes)]),
        ])
        return app
    }

    /// A minimal manifest for `appID`.
    static func manifest(_ appID: String) -> [UInt8] {
        Array("""
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0"><dict><key>CFBundleIdentifier</key><string>\(appID)</string></dict></plist>
            """.utf8)
    }

    /// Waits for the app's first scene to connect and become active; returns its id.
    func scene() async throws -> String {
        func id(_ calls: [Call]) -> String? {
            guard let connect = calls.first(where: { $0.member == "ConnectScene" }), !connect.arguments.isEmpty,
                  let session = try? VariantDictionary(dbusValue: connect.arguments[0].unwrappingVariants) else { return nil }
            return try? session.value(forKey: "persistentIdentifier", as: String.self)
        }
        let calls = try await waitForCalls { calls in
            guard let scene = id(calls) else { return false }
            return calls.contains { $0.member == "SceneChanged" && $0.string(0) == scene
                && (try? $0.dictionary.value(forKey: "state", as: Int32.self)) == 0 }
        }
        return try #require(id(calls))
    }

    /// `Sharing1.RegisterActivities` from this app's connection.
    func register(_ activities: [DBusValue]) async throws {
        try await ShareBus.register(connection, activities)
    }

    private func record(_ member: String, _ arguments: [DBusValue]) {
        log.record(Call(member: member, arguments: arguments))
    }

    private func probe(_ line: String) { log.probe(line) }

    /// The outcomes of the app's own reads, in order.
    var probes: [String] { log.probes }

    /// Every call so far.
    var calls: [Call] { log.calls }

    /// The share calls so far.
    var shareCalls: [Call] {
        let share: Set = ["ProvideActivityItems", "CanPerformActivities", "PerformActivity", "ShareCompleted"]
        return calls.filter { share.contains($0.member) }
    }

    /// Waits until `predicate` holds for the calls, then returns them.
    @discardableResult
    func waitForCalls(timeout: Duration = .seconds(30), _ predicate: ([Call]) -> Bool) async throws -> [Call] {
        try await log.waitForCalls(timeout: timeout, predicate)
    }

    /// Closes the connection (the app goes away).
    func quit() async { await connection.close(gracePeriod: .zero) }

    /// Tries `Read` of item 0 on a share pasteboard; "ok <text>" or the error's name.
    func tryRead(_ pasteboard: String, type: String = "public.plain-text") async -> String {
        await FakeAppLog.tryRead(connection, pasteboard, type: type)
    }

    /// Tries `Items` on a share pasteboard; "ok <count>" or the error's name.
    func tryItems(_ pasteboard: String) async -> String { await FakeAppLog.tryItems(connection, pasteboard) }

    private var client: Interface {
        Interface("org.ferry.Client1") {
            Property("Version", "u", get: { _ in .uint32(4) })
            Method("ChooseConfiguration", in: ["session": "a{sv}", "options": "a{sv}"], out: ["configuration": "s"]) { call in
                self.record("ChooseConfiguration", call.arguments)
                return [.string("")]
            }
            Method("ConnectScene", in: ["session": "a{sv}", "options": "a{sv}"]) { call in
                self.record("ConnectScene", call.arguments)
                return []
            }
            Method("SceneChanged", in: ["persistent_id": "s", "changes": "a{sv}"]) { call in
                self.record("SceneChanged", call.arguments)
                return []
            }
            Method("ContinueActivity", in: ["persistent_id": "s", "activity": "a{sv}"]) { call in
                self.record("ContinueActivity", call.arguments)
                return []
            }
            Method("DisconnectScene", in: ["persistent_id": "s", "options": "a{sv}"]) { call in
                self.record("DisconnectScene", call.arguments)
                return []
            }
            Method("DiscardSceneSessions", in: ["persistent_ids": "as"]) { call in
                self.record("DiscardSceneSessions", call.arguments)
                return []
            }
            Method("ProvideActivityItems", in: ["share": "s", "persistent_id": "s", "pasteboard": "o", "options": "a{sv}"],
                   out: ["result": "a{sv}"]) { call in
                self.record("ProvideActivityItems", call.arguments)
                let current = self.settings.withLock { $0 }
                if !current.items.isEmpty {
                    try await FerrydFixture.setItems(self.connection, current.items, at: try call.argument(2, as: ObjectPath.self))
                }
                var result: VariantDictionary = ["count": .uint32(UInt32(current.items.count))]
                if let title = current.title { result["title"] = .string(title) }
                if let interactions = current.interactions { result["interactions"] = .array(of: .string, interactions.map(DBusValue.string)) }
                if !current.metadata.isEmpty { result["metadata"] = .array(of: "a{sv}", current.metadata.map(\.dbusValue)) }
                return [result.dbusValue]
            }
            Method("CanPerformActivities", in: ["share": "s", "activity_types": "as", "info": "a{sv}"], out: ["able": "as"]) { call in
                self.record("CanPerformActivities", call.arguments)
                let current = self.settings.withLock { $0 }
                let pasteboard = (try? call.argument(2, as: VariantDictionary.self).value(forKey: "pasteboard", as: String.self)) ?? ""
                if current.probeDuringCanPerform {
                    self.probe("Items during CanPerformActivities: \(await self.tryItems(pasteboard))")
                    self.probe("Read during CanPerformActivities: \(await self.tryRead(pasteboard, type: current.readType))")
                }
                if let delay = current.canPerformDelay { try await Task.sleep(for: delay) }
                let asked = try call.argument(1, as: [String].self)
                return [.array(of: .string, (current.able ?? asked).map(DBusValue.string))]
            }
            Method("PerformActivity", in: ["share": "s", "activity_type": "s", "info": "a{sv}"], out: ["result": "a{sv}"]) { call in
                self.record("PerformActivity", call.arguments)
                let current = self.settings.withLock { $0 }
                if let failure = current.performFailure {
                    throw DBusError(try ErrorName(failure), "the test app refuses to perform")
                }
                if let delay = current.performDelay { try await Task.sleep(for: delay) }
                let pasteboard = (try? call.argument(2, as: VariantDictionary.self).value(forKey: "pasteboard", as: String.self)) ?? ""
                let read = await self.tryRead(pasteboard, type: current.readType)
                self.probe("Read during PerformActivity: \(read)")
                return [.variantDictionary([
                    "completed": .boolean(current.completed),
                    "message": .string("performed: \(read)"),
                    "returnedItems": .array(of: "a{sv}", [(["note": .string("n1"), "count": .uint32(3)] as VariantDictionary).dbusValue]),
                ])]
            }
            Method("ShareCompleted", in: ["share": "s", "persistent_id": "s", "completion": "a{sv}"]) { call in
                self.record("ShareCompleted", call.arguments)
                return []
            }
        }
    }
}

/// Calls on org.ferry.Sharing1.
enum ShareBus {
    /// The start of a python-dbus script on the bus at argv[1]: `call(method, signature, args)` on
    /// Sharing1, and `attempt(name, fn)`, which prints the name and OK or the error's name.
    static let pythonPrelude = #"""
        import dbus, sys
        bus = dbus.bus.BusConnection(sys.argv[1])
        def call(method, signature, args):
            return bus.call_blocking("org.ferry.Broker", "/org/ferry/Sharing", "org.ferry.Sharing1", method, signature, args, timeout=30)
        def attempt(name, fn):
            try:
                fn()
                print(name, "OK")
            except dbus.DBusException as e:
                print(name, e.get_dbus_name())
            sys.stdout.flush()
        """#

    static let path: ObjectPath = "/org/ferry/Sharing"
    static let interface: InterfaceName = "org.ferry.Sharing1"

    static func call(_ connection: Connection, _ member: MemberName, _ body: [DBusValue],
                     timeout: Duration = .seconds(40)) async throws -> [DBusValue] {
        try await connection.call(destination: FerrydFixture.broker, path: path, interface: interface, member: member,
                                  body: body, timeout: timeout)
    }

    /// An activity entry for RegisterActivities.
    static func activity(_ type: String, _ title: String, accepts: [String], category: String? = nil,
                         maximum: UInt32? = nil) -> DBusValue {
        var entries: VariantDictionary = ["activityType": .string(type), "title": .string(title),
                                          "acceptableTypes": .array(of: .string, accepts.map(DBusValue.string))]
        if let category { entries["category"] = .string(category) }
        if let maximum { entries["maximumItemCount"] = .uint32(maximum) }
        return entries.dbusValue
    }

    static func register(_ connection: Connection, _ activities: [DBusValue]) async throws {
        _ = try await call(connection, "RegisterActivities", [.array(of: "a{sv}", activities)])
    }

    /// BeginShare: the share's id and its pasteboard's path.
    static func begin(_ connection: Connection, _ options: VariantDictionary = [:]) async throws -> (share: String, pasteboard: ObjectPath) {
        let reply = try await call(connection, "BeginShare", [options.dbusValue])
        return (try reply[0].get(String.self), try reply[1].get(ObjectPath.self))
    }

    /// BeginShare without a scene, then SetItems of `items` as the sharer.
    static func share(_ connection: Connection, _ items: [DBusValue],
                      _ options: VariantDictionary = [:]) async throws -> (share: String, pasteboard: ObjectPath) {
        let begun = try await begin(connection, options)
        try await FerrydFixture.setItems(connection, items, at: begun.pasteboard)
        return begun
    }

    /// ListActivities as (type, app) pairs; app "" for a built-in.
    static func list(_ connection: Connection, _ share: String) async throws -> [VariantDictionary] {
        try await call(connection, "ListActivities", [.string(share)])[0].get([VariantDictionary].self)
    }

    /// The listed activity types, in order.
    static func types(_ connection: Connection, _ share: String) async throws -> [String] {
        try await list(connection, share).map { try $0.value(forKey: "activityType", as: String.self) }
    }

    /// The listed types once they are `expected`: each listing asks the apps again, and on a
    /// loaded machine an app may miss its 250 ms. The last listing after `timeout`.
    static func types(_ connection: Connection, _ share: String, settlingOn expected: [String],
                      timeout: Duration = .seconds(10)) async throws -> [String] {
        var listed: [String] = []
        _ = try await eventually(timeout, every: .milliseconds(200)) {
            listed = try await types(connection, share)
            return listed == expected
        }
        return listed
    }

    /// Expects the listing to be `expected` (settling as ``types(_:_:settlingOn:timeout:)`` does).
    static func expectTypes(_ connection: Connection, _ share: String, _ expected: [String],
                            sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let listed = try await types(connection, share, settlingOn: expected)
        #expect(listed == expected, sourceLocation: sourceLocation)
    }

    static func perform(_ connection: Connection, _ share: String, _ type: String,
                        _ options: VariantDictionary = [:]) async throws -> VariantDictionary {
        try await call(connection, "Perform", [.string(share), .string(type), options.dbusValue])[0].get(VariantDictionary.self)
    }

    static func end(_ connection: Connection, _ share: String) async throws {
        _ = try await call(connection, "EndShare", [.string(share)])
    }

    /// A string entry ("" when missing).
    static func string(_ dictionary: VariantDictionary, _ key: String) -> String {
        (try? dictionary.value(forKey: key, as: String.self)) ?? ""
    }

    /// The error name and message a call fails with (("", "") when it succeeds).
    static func error(_ body: () async throws -> Void) async -> (name: String, message: String) {
        await FerrydFixture.failure(body) ?? ("", "")
    }

    /// A text item, a PNG item, a user-activity item.
    static let text = FerrydFixture.item([FerrydFixture.representation("public.utf8-plain-text", "hello")])
    static let png = FerrydFixture.item([FerrydFixture.representation("public.png", [0x89, 0x50, 0x4E, 0x47])])
    static func userActivity(_ type: String) throws -> DBusValue {
        FerrydFixture.item([try DragBus.activityRepresentation(type)])
    }

    /// The three demo-like activities: Gallery's add-to-album (images), Notes' append (text).
    static let addToAlbum = activity("org.ferry.gallery.add-to-album", "Add to Album", accepts: ["public.image"])
    static let append = activity("org.ferry.notes.append", "Append to Note", accepts: ["public.plain-text"], category: "share")
}

/// ferryd with a tool's connection (the sharer) and room for apps.
final class ShareStage: Sendable {
    let fixture: FerrydFixture
    let daemon: ServiceProcess
    let tool: Connection
    let apps: Mutex<[FakeShareApp]>

    private init(fixture: FerrydFixture, daemon: ServiceProcess, tool: Connection) {
        self.fixture = fixture
        self.daemon = daemon
        self.tool = tool
        self.apps = Mutex([])
    }

    static func start(_ extra: [String] = []) async throws -> ShareStage {
        let fixture = try FerrydFixture()
        let daemon = try await fixture.start(extra)
        return ShareStage(fixture: fixture, daemon: daemon, tool: try await fixture.connect())
    }

    /// Starts an app (stopped with the stage).
    func app(_ appID: String, manifest: [UInt8]? = nil, scenes: Bool = false, settings: FakeShareApp.Settings = .init(),
             activities: [DBusValue] = []) async throws -> FakeShareApp {
        let app = try await FakeShareApp.start(fixture, appID, manifest: manifest, scenes: scenes, settings: settings)
        apps.withLock { $0.append(app) }
        if !activities.isEmpty { try await app.register(activities) }
        return app
    }

    /// Gallery (add-to-album) and Notes (append), without scenes.
    func galleryAndNotes() async throws -> (gallery: FakeShareApp, notes: FakeShareApp) {
        (try await app("org.ferry.gallery", activities: [ShareBus.addToAlbum]),
         try await app("org.ferry.notes", activities: [ShareBus.append]))
    }

    /// Stops ferryd and removes its state; the connections close in the background.
    func stop() {
        daemon.stop()
        fixture.cleanUp()
        let (tool, apps) = (tool, apps.withLock { $0 })
        Task {
            await tool.close(gracePeriod: .zero)
            for app in apps { await app.quit() }
        }
    }
}
