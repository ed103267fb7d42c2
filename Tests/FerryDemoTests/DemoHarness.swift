import FerryTestSupport
import Foundation
import Testing

/// A private bus with a real `ferryd`, and real `ferry-demo` processes on it, each test its own.
/// Requests go to the broker as D-Bus calls with `gdbus` (the `org.ferry.Scenes1` contract).
final class DemoHarness: Sendable {
    let bus: PrivateBus
    let brokerState: URL
    /// The demo apps' state directories live under here (`notes/`, `gallery/`).
    let appState: URL
    let daemon: ServiceProcess

    init() async throws {
        bus = try PrivateBus()
        let id = UUID().uuidString.prefix(8)
        brokerState = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-demo-broker-\(id)")
        appState = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-demo-apps-\(id)")
        do {
            daemon = try await ServiceProcess.ferryd(on: bus, stateDir: brokerState)
        } catch {
            bus.stop()
            throw error
        }
    }

    /// Runs `body` with a fresh bus and broker, tearing them down afterwards.
    static func with<T>(_ body: (DemoHarness) async throws -> T) async throws -> T {
        try await withTearDown(try await DemoHarness(), { $0.tearDown() }, body)
    }

    func tearDown() {
        daemon.stop()
        bus.stop()
        try? FileManager.default.removeItem(at: brokerState)
        try? FileManager.default.removeItem(at: appState)
    }

    /// The state directory of app `name` (`Notes`).
    func stateDirectory(_ name: String) -> URL { appState.appendingPathComponent(name) }

    /// The per-scene state file of a session.
    func sceneFile(_ name: String, _ session: String) -> URL {
        stateDirectory(name).appendingPathComponent("scenes/\(session).plist")
    }

    /// Starts `ferry-demo Fixtures/Apps/<name> --json` (plus `extra` arguments) on this bus and
    /// waits for READY.
    func startDemo(_ name: String = "Notes", _ extra: [String] = []) async throws -> DemoProcess {
        let process = try await ServiceProcess(
            try BuiltProducts.executable("ferry-demo"),
            [TestPaths.fixtures.appendingPathComponent("Apps/\(name)").path, "--bus", bus.address, "--json",
             "--state-dir", stateDirectory(name).path] + extra,
            environment: bus.environment())
        return DemoProcess(process)
    }

    /// `gdbus call` on this bus to the broker; returns its GVariant text output.
    func call(_ path: String, _ method: String, _ arguments: String...) async throws -> String {
        let result = try await ChildProcess.run(
            try ChildProcess.resolve("gdbus"),
            ["call", "--session", "--dest", "org.ferry.Broker", "--object-path", path, "--method", method] + arguments,
            environment: bus.environment(), timeout: .seconds(20))
        guard result.succeeded else {
            throw DemoTestError("gdbus \(method) failed: \(result.stderr)")
        }
        return result.stdout
    }

    /// `Scenes1.RequestActivation` of `app` with `activityType` naming `item` (userInfo `key` and
    /// target content); returns the persistent identifier of the session that got it.
    func open(_ app: String, activityType: String, key: String, item: String) async throws -> String {
        let options = "{'userActivity': <{'activityType': <'\(activityType)'>, 'userInfo': <{'\(key)': <'\(item)'>}>, "
            + "'targetContentIdentifier': <'\(item)'>}>}"
        let reply = try await call("/org/ferry/Scenes", "org.ferry.Scenes1.RequestActivation", app, "", options)
        // (objectpath '/org/ferry/Scenes/…', 'PERSISTENT-ID')
        let quoted = reply.split(separator: "'").map(String.init)
        guard quoted.count >= 4 else { throw DemoTestError("unexpected RequestActivation reply: \(reply)") }
        return quoted[3]
    }

    /// `Scenes1.ListSessions` of one app, as gdbus prints it.
    func sessions(of app: String) async throws -> String {
        try await call("/org/ferry/Scenes", "org.ferry.Scenes1.ListSessions", "{'app': <'\(app)'>}")
    }

}

/// One JSON event line of `ferry-demo --json`, values as text (lists joined by ","; a flag such
/// as `restored` is present or not).
struct DemoEventLine: Sendable, CustomStringConvertible {
    var fields: [String: String]

    subscript(key: String) -> String? { fields[key] }
    var name: String { fields["event"] ?? "" }
    var session: String { fields["session"] ?? "" }
    var description: String { fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ") }

    init?(_ line: Substring) {
        guard line.hasPrefix("{"), let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        else { return nil }
        var fields: [String: String] = [:]
        for (key, value) in object {
            switch value {
            case let text as String: fields[key] = text
            case let list as [Any]: fields[key] = list.map { "\($0)" }.joined(separator: ",")
            default: fields[key] = "\(value)"
            }
        }
        self.fields = fields
    }
}

/// A running `ferry-demo --json`, its events parsed from what it printed so far.
final class DemoProcess: Sendable {
    let process: ServiceProcess

    init(_ process: ServiceProcess) { self.process = process }

    /// Every event line so far.
    var events: [DemoEventLine] {
        process.standardOutput.split(separator: "\n").compactMap(DemoEventLine.init)
    }

    /// The first event that satisfies `match`, waiting at most `timeout`.
    func event(_ name: String, timeout: Duration = .seconds(10),
               where match: @Sendable (DemoEventLine) -> Bool = { _ in true }) async throws -> DemoEventLine {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let found = events.first(where: { $0.name == name && match($0) }) { return found }
            if ContinuousClock.now > deadline || !process.isRunning {
                // The line may have come in with the exit, after the look above: read the rest.
                if !process.isRunning { _ = await process.waitForExit(timeout: .seconds(2)) }
                if let found = events.first(where: { $0.name == name && match($0) }) { return found }
                throw DemoTestError("no \(name) event; stdout:\n\(process.standardOutput)\nstderr:\n\(process.standardError)")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// The first scene's connect event, once the scene has also sent its title and activation
    /// conditions (its `saved` event follows them): requests made before that could land in it.
    func settled() async throws -> DemoEventLine {
        let connect = try await event("connect")
        _ = try await event("saved") { $0.session == connect.session }
        return connect
    }

    /// Sends SIGTERM and waits for the exit status.
    func terminate() async -> Int32? {
        process.send(SIGTERM)
        return await process.waitForExit(timeout: .seconds(10))
    }

    /// SIGKILL: the app dies without saving anything more.
    func kill() async {
        process.send(SIGKILL)
        _ = await process.waitForExit(timeout: .seconds(10))
    }
}

/// A harness failure, with what the processes printed.
struct DemoTestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
