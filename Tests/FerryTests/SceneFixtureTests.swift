import DBus
import Ferry
import FerryBus
import FerryModel
import FerryTestSupport
import Foundation
import Synchronization
import Testing

// This file holds the scene tests' fixture (a fake broker on a real private bus, and recording
// delegates) and the registration tests that exercise it.

/// A stand-in for ferryd's scene service: a raw connection that owns `org.ferry.Broker` on a
/// private bus, answers `RegisterApp`, `Scenes1`, `SceneSession1.Update` and the general
/// pasteboard's metadata and reads, and calls the app's `org.ferry.Client1` as the broker would.
final class FakeBroker: Sendable {
    let connection: Connection
    static let appID = "org.ferry.test.scenes"

    struct State {
        var app: BusName?
        var registrations: [[String: DBusValue]] = []
        var updates: [(id: String, changes: [String: DBusValue])] = []
        var sessions: [String: SceneSession] = [:]
        var exported: Set<String> = []
        var requests: [(member: String, body: [DBusValue])] = []
        /// The general pasteboard: per item, its types and bytes.
        var items: [[(type: String, bytes: [UInt8])]] = []
        var changeCount: UInt64 = 1
        var reads: [(type: String, options: [String: DBusValue])] = []
        /// Connected (once) by the next ListSessions after it has taken its list, before it
        /// answers: a scene that connects while the app waits for a list without it.
        var connectDuringList: SceneSession?
        /// Updates are taken but not answered (a broker that hangs).
        var holdUpdates = false
    }

    let state = Mutex(State())

    private init(connection: Connection) {
        self.connection = connection
    }

    /// Starts a fake broker on `bus` that knows `sessions` (archived) and takes `org.ferry.Broker`.
    /// `connectDuringList`: see ``State/connectDuringList``.
    static func start(on bus: PrivateBus, knowing sessions: [SceneSession] = [],
                      connectDuringList: SceneSession? = nil) async throws -> FakeBroker {
        let connection = try await Connection(address: bus.address)
        let broker = FakeBroker(connection: connection)
        broker.state.withLock { s in
            for session in sessions { s.sessions[session.persistentIdentifier] = session }
            s.connectDuringList = connectDuringList
        }
        try connection.export(broker.broker1(), at: "/org/ferry/Broker")
        try connection.export(broker.scenes1(), at: "/org/ferry/Scenes")
        try connection.export(broker.pasteboard1(), at: "/org/ferry/Pasteboard/general")
        let reply = try await connection.requestName("org.ferry.Broker", flags: [.doNotQueue])
        guard reply == .primaryOwner else { throw FakeBrokerError(message: "cannot own org.ferry.Broker: \(reply)") }
        return broker
    }

    var app: BusName? { state.withLock { $0.app } }
    var registrations: [[String: DBusValue]] { state.withLock { $0.registrations } }
    var updates: [(id: String, changes: [String: DBusValue])] { state.withLock { $0.updates } }

    /// The `Update` calls for session `id`.
    func updates(of id: String) -> [[String: DBusValue]] { updates.filter { $0.id == id }.map(\.changes) }

    /// Waits until `condition` holds (``FerryTestSupport/eventually(_:every:_:)``); records an
    /// issue after 30 s (a generous deadline: the machine may be loaded).
    func eventually(_ condition: () -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        if !(await FerryTestSupport.eventually(.seconds(30), condition)) {
            Issue.record("timed out waiting for a condition", sourceLocation: sourceLocation)
        }
    }

    // MARK: The broker calling the app

    /// Calls the registered app's `org.ferry.Client1`.
    @discardableResult
    func callClient(_ member: MemberName, _ body: [DBusValue]) async throws -> [DBusValue] {
        guard let app else { throw FakeBrokerError(message: "no app registered") }
        return try await connection.call(destination: app, path: FerryClient.clientPath, interface: "org.ferry.Client1",
                                         member: member, body: body, timeout: .seconds(10))
    }

    /// A new session of the test app (not connected).
    func newSession(title: String? = nil, restoration: UserActivity? = nil) throws -> SceneSession {
        try SceneSession(persistentIdentifier: SceneSession.makePersistentIdentifier(), bundleIdentifier: Self.appID,
                         title: title, frame: Rect(x: 48, y: 48, width: 960, height: 640),
                         stateRestorationActivity: restoration)
    }

    /// Connects `session` as ferryd does: ChooseConfiguration, then ConnectScene with the chosen
    /// configuration. Returns the configuration's name.
    @discardableResult
    func connect(_ session: SceneSession, options: SceneConnectionOptions = .init()) async throws -> String {
        exportSession(session.persistentIdentifier)
        let options = try Self.dbus(options.wireDictionary())
        let chosen = try await callClient("ChooseConfiguration", [try Self.dbus(session.wireDictionary()), options])
        var connecting = session
        connecting.configurationName = try chosen[0].get(String.self)
        connecting.activationState = .unattached
        state.withLock { $0.sessions[session.persistentIdentifier] = connecting }
        try await callClient("ConnectScene", [try Self.dbus(connecting.wireDictionary()), options])
        return connecting.configurationName ?? ""
    }

    /// Moves a connected scene through `states`, one SceneChanged each.
    func change(_ id: String, through states: [SceneActivationState]) async throws {
        for next in states {
            try await callClient("SceneChanged", [.string(id), ["state": DBusValue.int32(next.rawValue)].dbusValue])
        }
    }

    // MARK: Exported objects

    private func broker1() -> Interface {
        Interface("org.ferry.Broker1") {
            Property("Version", "u", get: { _ in .uint32(2) })
            Method("RegisterApp", in: ["app_id": "s", "manifest": "ay", "client_path": "o", "options": "a{sv}"]) { [weak self] call in
                let options = try call.argument(3, as: [String: DBusValue].self)
                self?.state.withLock { s in
                    s.app = call.sender
                    s.registrations.append(options)
                }
                return []
            }
        }
    }

    private func scenes1() -> Interface {
        Interface("org.ferry.Scenes1") {
            Method("RequestActivation", in: ["app_id": "s", "persistent_id": "s", "options": "a{sv}"],
                   out: ["session": "o", "persistent_id": "s"]) { [weak self] call in
                guard let self else { return [] }
                self.state.withLock { $0.requests.append(("RequestActivation", call.arguments)) }
                let (_, existing, options) = try call.arguments(String.self, String.self, [String: DBusValue].self)
                if existing == "not-a-session" { throw DBusError(ErrorName("org.ferry.Error.NotFound"), "no such session") }
                if existing == "second" {
                    throw DBusError(ErrorName("org.ferry.Error.MultipleScenesNotSupported"), "one scene only")
                }
                if !existing.isEmpty {
                    return [.objectPath(try ObjectPath(SceneSession.objectPath(existing))), .string(existing)]
                }
                var connection = SceneConnectionOptions()
                if let activity = options["userActivity"] {
                    connection.userActivities = [try UserActivity(wireDictionary: Self.wire(activity.unwrappingVariants))]
                }
                let session = try self.newSession()
                try await self.connect(session, options: connection)
                try await self.change(session.persistentIdentifier, through: [.foregroundInactive, .foregroundActive])
                return [.objectPath(try ObjectPath(SceneSession.objectPath(session.persistentIdentifier))),
                        .string(session.persistentIdentifier)]
            }
            Method("RequestRefresh", in: ["persistent_id": "s"]) { [weak self] call in
                guard let self else { return [] }
                let id = try call.argument(0, as: String.self)
                self.state.withLock { $0.requests.append(("RequestRefresh", call.arguments)) }
                try await self.callClient("RefreshScene", [.string(id)])
                return []
            }
            Method("RequestDestruction", in: ["persistent_id": "s", "options": "a{sv}"]) { [weak self] call in
                guard let self else { return [] }
                let id = try call.argument(0, as: String.self)
                self.state.withLock { $0.requests.append(("RequestDestruction", call.arguments)) }
                let animation = try call.argument(1, as: [String: DBusValue].self)["animation"] ?? .string("standard")
                try await self.callClient("DisconnectScene", [.string(id), ["reason": DBusValue.string("destroyed"),
                                                                          "animation": animation].dbusValue])
                try await self.callClient("DiscardSceneSessions", [.array(of: .string, [.string(id)])])
                self.state.withLock { _ = $0.sessions.removeValue(forKey: id) }
                return []
            }
            Method("ListSessions", in: ["options": "a{sv}"], out: ["sessions": "aa{sv}"]) { [weak self] call in
                guard let self else { return [] }
                let sessions = self.state.withLock { $0.sessions.values.sorted { $0.persistentIdentifier < $1.persistentIdentifier } }
                if let late = self.state.withLock({ s in defer { s.connectDuringList = nil }; return s.connectDuringList }) {
                    try await self.connect(late)
                }
                var values: [DBusValue] = []
                for session in sessions {
                    guard case .dictionary(let k, let v, var entries) = try Self.dbus(session.wireDictionary()) else { continue }
                    entries.append(DBusDictionaryEntry(key: .string("stackIndex"), value: .variant(.uint32(0))))
                    values.append(.dictionary(key: k, value: v, entries: entries))
                }
                return [.array(of: "a{sv}", values)]
            }
        }
    }

    private func exportSession(_ id: String) {
        let fresh = state.withLock { $0.exported.insert(id).inserted }
        guard fresh else { return }
        let interface = Interface("org.ferry.SceneSession1") {
            Method("Update", in: ["changes": "a{sv}"]) { [weak self] call in
                let changes = try call.argument(0, as: [String: DBusValue].self)
                let hold = self?.state.withLock { s in
                    s.updates.append((id, changes))
                    return s.holdUpdates
                } ?? false
                if hold { try await Task.sleep(for: .seconds(60)) }
                return []
            }
        }
        guard let path = try? ObjectPath(SceneSession.objectPath(id)) else { return }
        try? connection.export(interface, at: path)
    }

    private func pasteboard1() -> Interface {
        Interface("org.ferry.Pasteboard1") {
            Property("ChangeCount", "t", get: { [weak self] _ in .uint64(self?.state.withLock { $0.changeCount } ?? 0) })
            Method("Items", out: ["items": "aa{sv}"]) { [weak self] _ in
                let items = self?.state.withLock { $0.items } ?? []
                let values: [DBusValue] = items.enumerated().map { index, item in
                    let representations: [DBusValue] = item.map { ["type": DBusValue.string($0.type)].dbusValue }
                    return ["id": DBusValue.string(UUID(uuidString: "00000000-0000-4000-8000-00000000000\(index)")!.uuidString),
                            "representations": .array(of: "a{sv}", representations)].dbusValue
                }
                return [.array(of: "a{sv}", values)]
            }
            Method("Read", in: ["item": "u", "type": "s", "options": "a{sv}"],
                   out: ["type": "s", "size": "x", "data": "v", "transfer": "s"]) { [weak self] call in
                guard let self else { return [] }
                let (index, type, options) = try call.arguments(UInt32.self, String.self, [String: DBusValue].self)
                let found = self.state.withLock { s -> (String, [UInt8])? in
                    s.reads.append((type, options))
                    guard Int(index) < s.items.count else { return nil }
                    guard let wanted = ContentType(importedAs: type) else { return nil }
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

    // MARK: Wire conversions

    /// A wire dictionary as `a{sv}`.
    static func dbus(_ dictionary: [String: WireValue]) -> DBusValue { dictionary.dbusValue }

    /// An `a{sv}` as a wire dictionary (empty when it is not one).
    static func wire(_ value: DBusValue) -> [String: WireValue] {
        (try? [String: WireValue](dbusValue: value)) ?? [:]
    }
}

/// A failure of the fake broker itself.
struct FakeBrokerError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// What the recording delegates saw, in order (`connect <id> <config>`, `state <id> a->b`, …).
final class SceneEvents: Sendable {
    let events = Mutex<[String]>([])
    func add(_ event: String) { events.withLock { $0.append(event) } }
    var all: [String] { events.withLock { $0 } }
    func of(_ id: String) -> [String] { all.filter { $0.contains(id) } }
}

/// An app delegate that chooses "Viewer" for `org.ferry.test.view` and records everything.
final class RecordingAppDelegate: ApplicationDelegate {
    let events: SceneEvents
    let pasteConfiguration: PasteConfiguration?
    init(events: SceneEvents, pasteConfiguration: PasteConfiguration? = nil) {
        self.events = events
        self.pasteConfiguration = pasteConfiguration
    }

    func application(_ application: Application, configurationForConnecting session: SceneSession,
                     options: SceneConnectionOptions) async -> SceneConfiguration? {
        let type = options.userActivities.first?.activityType ?? session.stateRestorationActivity?.activityType
        events.add("configure \(session.persistentIdentifier) \(type ?? "-")")
        return type == "org.ferry.test.view" ? SceneConfiguration(name: "Viewer", role: session.role) : nil
    }

    func application(_ application: Application, sceneDelegateFor session: SceneSession) -> any SceneDelegate {
        RecordingSceneDelegate(events: events, pasteConfiguration: pasteConfiguration)
    }

    func application(_ application: Application, didDiscardSceneSessions persistentIdentifiers: [String]) async {
        events.add("discard \(persistentIdentifiers.joined(separator: ","))")
    }
}

/// A scene delegate that records events and restores to `org.ferry.test.view` with the item it shows.
final class RecordingSceneDelegate: SceneDelegate {
    let events: SceneEvents
    let pasteConfiguration: PasteConfiguration?
    let item = Mutex<String?>(nil)
    init(events: SceneEvents, pasteConfiguration: PasteConfiguration?) {
        self.events = events
        self.pasteConfiguration = pasteConfiguration
    }

    func scene(_ scene: Scene, willConnectTo session: SceneSession, options: SceneConnectionOptions) async {
        let activity = options.userActivities.first ?? session.stateRestorationActivity
        let shown = activity?.userInfo["item"]?.stringValue
        item.withLock { $0 = shown }
        events.add("connect \(scene.persistentIdentifier) \(session.configurationName ?? "-") item=\(shown ?? "-")")
    }

    func sceneDidDisconnect(_ scene: Scene) async { events.add("disconnect \(scene.persistentIdentifier)") }

    func scene(_ scene: Scene, didChangeActivationStateFrom old: SceneActivationState, to new: SceneActivationState) async {
        events.add("state \(scene.persistentIdentifier) \(old)->\(new)")
    }

    func stateRestorationActivity(for scene: Scene) async -> UserActivity? {
        guard let shown = item.withLock({ $0 }) else { return nil }
        var activity = try? UserActivity(activityType: "org.ferry.test.view")
        activity?.userInfo["item"] = .string(shown)
        return activity
    }

    func scene(_ scene: Scene, continue activity: UserActivity) async {
        let shown = activity.userInfo["item"]?.stringValue
        item.withLock { $0 = shown }
        events.add("continue \(scene.persistentIdentifier) item=\(shown ?? "-")")
    }

    func sceneDidRefresh(_ scene: Scene) async { events.add("refresh \(scene.persistentIdentifier)") }

    func pasteConfiguration(for scene: Scene) -> PasteConfiguration? { pasteConfiguration }

    func scene(_ scene: Scene, paste itemProviders: [ItemProvider]) async throws -> String {
        var texts: [String] = []
        for provider in itemProviders where provider.hasRepresentationConforming(to: .plainText) {
            let data = try await provider.loadData(for: .plainText)
            texts.append(String(decoding: data.data, as: UTF8.self))
        }
        events.add("paste \(scene.persistentIdentifier) \(texts.joined(separator: "|"))")
        return "pasted \(texts.count) text(s)"
    }
}

/// The test app's Info.plist: multiple scenes, configurations Default and Viewer, activity type
/// `org.ferry.test.view`.
func sceneTestManifest(appID: String = FakeBroker.appID, multipleScenes: Bool = true) -> [UInt8] {
    Array("""
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
          <key>CFBundleIdentifier</key><string>\(appID)</string>
          <key>CFBundleName</key><string>Scene Test</string>
          <key>NSUserActivityTypes</key><array><string>org.ferry.test.view</string></array>
          <key>UIApplicationSceneManifest</key>
          <dict>
            <key>UIApplicationSupportsMultipleScenes</key><\(multipleScenes ? "true" : "false")/>
            <key>UISceneConfigurations</key>
            <dict>
              <key>UIWindowSceneSessionRoleApplication</key>
              <array>
                <dict><key>UISceneConfigurationName</key><string>Default</string></dict>
                <dict><key>UISceneConfigurationName</key><string>Viewer</string></dict>
              </array>
            </dict>
          </dict>
        </dict>
        </plist>

        """.utf8)
}

/// A fake broker and a registered application on a fresh private bus.
struct SceneFixture {
    let bus: PrivateBus
    let broker: FakeBroker
    let client: FerryClient
    let application: Application
    let events: SceneEvents

    static func with(pasteConfiguration: PasteConfiguration? = nil,
                     _ body: (SceneFixture) async throws -> Void) async throws {
        try await ClientFixture.with(withBroker: false) { fixture in
            let broker = try await FakeBroker.start(on: fixture.bus)
            let client = try await fixture.client()
            let events = SceneEvents()
            let application = try await Application.register(
                client: client, manifest: sceneTestManifest(),
                delegate: RecordingAppDelegate(events: events, pasteConfiguration: pasteConfiguration))
            let scene = SceneFixture(bus: fixture.bus, broker: broker, client: client, application: application, events: events)
            do {
                try await body(scene)
            } catch {
                await client.close()
                await broker.connection.close()
                throw error
            }
            await client.close()
            await broker.connection.close()
        }
    }
}

@Suite("Ferry: Application.register with scenes")
struct SceneRegistrationTests {
    @Test("Application.register sends RegisterApp with scenes=true and the manifest's app id; a second one is refused")
    func registersWithScenes() async throws {
        try await SceneFixture.with { fixture in
            #expect(fixture.broker.registrations.count == 1)
            #expect(fixture.broker.registrations.first?["scenes"]?.unwrappingVariants == .boolean(true))
            #expect(fixture.application.appID == FakeBroker.appID)
            #expect(fixture.client.appID == FakeBroker.appID)
            #expect(fixture.application.supportsMultipleScenes)
            await #expect(throws: FerryError.self) {
                try await Application.register(client: fixture.client, manifest: sceneTestManifest(),
                                               delegate: RecordingAppDelegate(events: SceneEvents()))
            }
        }
    }

    @Test("an app registered without Application: no scenes option; scene calls are Unavailable")
    func plainRegistration() async throws {
        try await ClientFixture.with(withBroker: false) { fixture in
            let broker = try await FakeBroker.start(on: fixture.bus)
            let client = try await fixture.client()
            try await client.registerCommandLineTool()
            #expect(broker.registrations.first?["scenes"] == nil)
            let session = try broker.newSession()
            await #expect {
                try await broker.callClient("ConnectScene", [FakeBroker.dbus(try session.wireDictionary()),
                                                             [String: DBusValue]().dbusValue])
            } throws: { ($0 as? DBusError)?.name.rawValue == "org.ferry.Error.Unavailable" }
            await client.close()
            await broker.connection.close()
        }
    }

    @Test("a malformed manifest is InvalidArgument naming the key, before anything is registered")
    func malformedManifest() async throws {
        try await ClientFixture.with(withBroker: false) { fixture in
            let broker = try await FakeBroker.start(on: fixture.bus)
            let client = try await fixture.client()
            let bad = Array(String(decoding: sceneTestManifest(), as: UTF8.self)
                .replacingOccurrences(of: "<string>org.ferry.test.view</string>", with: "<string>not a type!</string>").utf8)
            let error = await #expect(throws: FerryError.self) {
                try await Application.register(client: client, manifest: bad, delegate: RecordingAppDelegate(events: SceneEvents()))
            }
            #expect(error?.code == .invalidArgument)
            #expect(error?.message.contains("NSUserActivityTypes[0]") == true)
            #expect(broker.registrations.isEmpty)
            await client.close()
            await broker.connection.close()
        }
    }
}
