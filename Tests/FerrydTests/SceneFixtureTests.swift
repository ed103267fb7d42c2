import DBus
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// A small app on the raw D-Bus layer: it exports org.ferry.Client1 answering the scene methods,
/// records every call, and registers with scenes=true.
final class FakeSceneApp: Sendable {
    /// One call the broker made.
    struct Call: Sendable, CustomStringConvertible {
        var member: String
        /// The persistent identifier the call is about ("" for DiscardSceneSessions).
        var id: String
        var arguments: [DBusValue]
        /// When the app received it.
        var at = ContinuousClock.now

        /// The first `a{sv}` argument's entries (session for Choose/Connect, changes for SceneChanged).
        var dictionary: VariantDictionary {
            for argument in arguments {
                if let entries = try? VariantDictionary(dbusValue: argument.unwrappingVariants) { return entries }
            }
            return [:]
        }

        /// The second `a{sv}` argument (connection options) of ChooseConfiguration/ConnectScene.
        var options: VariantDictionary {
            guard arguments.count > 1 else { return [:] }
            return (try? VariantDictionary(dbusValue: arguments[1].unwrappingVariants)) ?? [:]
        }

        /// The connection options' user activities.
        var activities: [VariantDictionary] {
            guard case .array(_, let elements)? = options["userActivities"]?.unwrappingVariants else { return [] }
            return elements.compactMap { try? VariantDictionary(dbusValue: $0.unwrappingVariants) }
        }

        var description: String { "\(member)(\(id.prefix(8)))" }
    }

    static let clientPath: ObjectPath = "/org/ferry/Client"

    /// How the app misbehaves, for the timeout tests.
    struct Behaviour: Sendable {
        /// ChooseConfiguration answers only after this long.
        var chooseDelay: Duration?
        /// The ConnectScene call (1 = the first) in which the app closes its connection instead of
        /// answering (it dies mid-call).
        var dieInConnect: Int?
        /// DiscardSceneSessions answers only after this long.
        var discardDelay: Duration?
    }

    let appID: String
    let manifest: [UInt8]
    let connection: Connection
    private let recorded = Mutex<[Call]>([])
    /// Calls being handled now, and the most ever handled at once.
    private let inFlight = Mutex<(now: Int, most: Int)>((0, 0))
    private let connects = Mutex(0)
    /// Configuration names to answer, by the first connecting activity's type; "" otherwise.
    private let configurations: [String: String]
    private let behaviour: Behaviour

    private init(appID: String, manifest: [UInt8], connection: Connection, configurations: [String: String],
                 behaviour: Behaviour) {
        self.appID = appID
        self.manifest = manifest
        self.connection = connection
        self.configurations = configurations
        self.behaviour = behaviour
    }

    /// Connects to the fixture's bus, exports Client1 and (unless `register` is false) registers.
    static func start(_ fixture: FerrydFixture, _ appID: String, manifest: [UInt8],
                      configurations: [String: String] = [:], behaviour: Behaviour = Behaviour(),
                      register: Bool = true) async throws -> FakeSceneApp {
        let app = FakeSceneApp(appID: appID, manifest: manifest, connection: try await fixture.connect(),
                               configurations: configurations, behaviour: behaviour)
        try app.connection.export(app.client, at: clientPath)
        if register { try await app.register() }
        return app
    }

    /// RegisterApp with scenes=true.
    func register() async throws {
        _ = try await FerrydFixture.call(connection, "RegisterApp", [
            .string(appID), .bytes(manifest), .objectPath(Self.clientPath), .variantDictionary(["scenes": true]),
        ])
    }

    /// Records a call and holds it for a moment, so that calls the broker overlapped would show
    /// in ``mostCallsAtOnce``.
    private func record(_ member: String, _ id: String, _ arguments: [DBusValue]) async {
        recorded.withLock { $0.append(Call(member: member, id: id, arguments: arguments)) }
        inFlight.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
        try? await Task.sleep(for: .milliseconds(3))
        inFlight.withLock { $0.now -= 1 }
    }

    /// The most calls the app was handling at the same time.
    var mostCallsAtOnce: Int { inFlight.withLock { $0.most } }

    private var client: Interface {
        Interface("org.ferry.Client1") {
            Property("Version", "u", get: { _ in .uint32(2) })
            Method("ChooseConfiguration", in: ["session": "a{sv}", "options": "a{sv}"], out: ["configuration": "s"]) { call in
                let session = try call.argument(0, as: VariantDictionary.self)
                let options = try call.argument(1, as: VariantDictionary.self)
                await self.record("ChooseConfiguration", (try? session.value(forKey: "persistentIdentifier", as: String.self)) ?? "",
                            call.arguments)
                if let delay = self.behaviour.chooseDelay {
                    try await Task.sleep(for: delay)
                    self.recorded.withLock { $0.append(Call(member: "(late answer)", id: "", arguments: [])) }
                }
                var activities: [DBusValue] = []
                if case .array(_, let elements)? = options["userActivities"]?.unwrappingVariants { activities = elements }
                if let first = activities.first,
                   let entries = try? VariantDictionary(dbusValue: first.unwrappingVariants),
                   let type = try? entries.value(forKey: "activityType", as: String.self) {
                    return [.string(self.configurations[type] ?? "")]
                }
                return [.string(self.configurations[""] ?? "")]
            }
            Method("ConnectScene", in: ["session": "a{sv}", "options": "a{sv}"]) { call in
                let session = try call.argument(0, as: VariantDictionary.self)
                await self.record("ConnectScene", (try? session.value(forKey: "persistentIdentifier", as: String.self)) ?? "",
                            call.arguments)
                let number = self.connects.withLock { $0 += 1; return $0 }
                if number == self.behaviour.dieInConnect {
                    await self.connection.close(gracePeriod: .zero)
                    try await Task.sleep(for: .seconds(30))
                }
                return []
            }
            Method("SceneChanged", in: ["persistent_id": "s", "changes": "a{sv}"]) { call in
                await self.record("SceneChanged", try call.argument(0, as: String.self), call.arguments)
                return []
            }
            Method("ContinueActivity", in: ["persistent_id": "s", "activity": "a{sv}"]) { call in
                await self.record("ContinueActivity", try call.argument(0, as: String.self), call.arguments)
                return []
            }
            Method("RefreshScene", in: ["persistent_id": "s"]) { call in
                await self.record("RefreshScene", try call.argument(0, as: String.self), call.arguments)
                return []
            }
            Method("DisconnectScene", in: ["persistent_id": "s", "options": "a{sv}"]) { call in
                await self.record("DisconnectScene", try call.argument(0, as: String.self), call.arguments)
                return []
            }
            Method("DiscardSceneSessions", in: ["persistent_ids": "as"]) { call in
                await self.record("DiscardSceneSessions", "", call.arguments)
                if let delay = self.behaviour.discardDelay { try await Task.sleep(for: delay) }
                return []
            }
            Method("PerformPaste", in: ["persistent_id": "s", "pasteboard": "s", "options": "a{sv}"], out: ["result": "a{sv}"]) { call in
                await self.record("PerformPaste", try call.argument(0, as: String.self), call.arguments)
                return [.variantDictionary(["accepted": true, "configuration": .array(of: .string, ["public.plain-text"]),
                                            "types": .array(of: .string, ["public.utf8-plain-text"]),
                                            "message": "pasted 5 characters"])]
            }
        }
    }

    /// Every call so far.
    var calls: [Call] { recorded.withLock { $0 } }

    /// Forgets the calls so far.
    func clearCalls() { recorded.withLock { $0.removeAll() } }

    /// The state steps (SceneChanged state) a session got, in order.
    func states(of id: String) -> [Int32] {
        calls.filter { $0.member == "SceneChanged" && $0.id == id }.compactMap {
            try? $0.dictionary.value(forKey: "state", as: Int32.self)
        }
    }

    /// Waits until `predicate` holds for the calls (at most `timeout`: generous, as only a failing
    /// test waits it out and a loaded machine can be slow), then returns them.
    @discardableResult
    func waitForCalls(timeout: Duration = .seconds(30), _ predicate: ([Call]) -> Bool) async throws -> [Call] {
        var seen: [Call] = []
        let matched = await eventually(timeout, every: .milliseconds(10)) {
            seen = calls
            return predicate(seen)
        }
        guard matched else {
            throw SceneTestError(description: "the app's calls never matched: \(seen)")
        }
        return seen
    }

    /// Closes the connection (the app goes away).
    func quit() async { await connection.close(gracePeriod: .zero) }
}

/// A test gave up waiting.
struct SceneTestError: Error, CustomStringConvertible {
    var description: String
}

/// Calls on org.ferry.Scenes1 and its sessions.
enum SceneBus {
    static let path: ObjectPath = "/org/ferry/Scenes"
    static let interface: InterfaceName = "org.ferry.Scenes1"

    static func call(_ connection: Connection, _ member: MemberName, _ body: [DBusValue]) async throws -> [DBusValue] {
        try await connection.call(destination: FerrydFixture.broker, path: path, interface: interface, member: member,
                                  body: body, timeout: .seconds(20))
    }

    /// RequestActivation; returns the persistent identifier.
    static func activate(_ connection: Connection, app: String, session: String = "",
                         _ options: [String: DBusValue] = [:]) async throws -> String {
        try await call(connection, "RequestActivation", [.string(app), .string(session), options.dbusValue])[1].get(String.self)
    }

    static func sessions(_ connection: Connection, app: String? = nil) async throws -> [VariantDictionary] {
        let options: [String: DBusValue] = app.map { ["app": .string($0)] } ?? [:]
        return try await call(connection, "ListSessions", [options.dbusValue])[0].get([VariantDictionary].self)
    }

    static func session(_ connection: Connection, _ id: String) async throws -> VariantDictionary? {
        try await sessions(connection).first { (try? $0.value(forKey: "persistentIdentifier", as: String.self)) == id }
    }

    static func frame(_ session: VariantDictionary) throws -> [Double] {
        let frame = try session.value(forKey: "frame", as: VariantDictionary.self)
        return try ["x", "y", "width", "height"].map { try frame.value(forKey: $0, as: Double.self) }
    }

    static func sessionPath(_ id: String) -> ObjectPath {
        var element = ""
        for byte in id.utf8 {
            let isAlphanumeric = (byte >= 0x30 && byte <= 0x39) || ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A)
            element += isAlphanumeric ? String(UnicodeScalar(byte)) : "_" + String(format: "%02x", byte)
        }
        return ObjectPath(stringLiteral: "/org/ferry/Scenes/" + element)
    }

    static func update(_ connection: Connection, _ id: String, _ changes: [String: DBusValue]) async throws {
        _ = try await connection.call(destination: FerrydFixture.broker, path: sessionPath(id),
                                      interface: "org.ferry.SceneSession1", member: "Update", body: [changes.dbusValue],
                                      timeout: .seconds(10))
    }

    static func property(_ connection: Connection, _ id: String, _ name: String) async throws -> DBusValue {
        try await connection.call(destination: FerrydFixture.broker, path: sessionPath(id),
                                  interface: "org.freedesktop.DBus.Properties", member: "Get",
                                  body: [.string("org.ferry.SceneSession1"), .string(name)],
                                  timeout: .seconds(10))[0].unwrappingVariants
    }

    /// A user activity wire dictionary.
    static func activity(_ type: String, target: String? = nil, userInfo: [String: DBusValue] = [:]) -> DBusValue {
        var entries: [String: DBusValue] = ["activityType": .string(type)]
        if let target { entries["targetContentIdentifier"] = .string(target) }
        if !userInfo.isEmpty { entries["userInfo"] = userInfo.dbusValue }
        return entries.dbusValue
    }

    /// The Notes manifest with UIApplicationSupportsMultipleScenes false.
    static func singleSceneNotes() throws -> [UInt8] {
        let text = String(decoding: try FerrydFixture.manifest("Notes"), as: UTF8.self)
        let edited = text.replacingOccurrences(of: "<key>UIApplicationSupportsMultipleScenes</key>\n\t\t<true/>",
                                               with: "<key>UIApplicationSupportsMultipleScenes</key>\n\t\t<false/>")
        precondition(edited != text, "the Notes fixture changed shape")
        return Array(edited.utf8)
    }

}

@Suite("ferryd scenes: the test app")
struct SceneFixtureTests {
    @Test("the single-scene Notes manifest differs from Notes only in UIApplicationSupportsMultipleScenes")
    func singleSceneManifest() throws {
        let single = String(decoding: try SceneBus.singleSceneNotes(), as: UTF8.self)
        #expect(single.contains("<false/>"))
        #expect(single.replacingOccurrences(of: "<false/>", with: "<true/>")
            == String(decoding: try FerrydFixture.manifest("Notes"), as: UTF8.self))
    }
}
