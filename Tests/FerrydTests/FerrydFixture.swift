import DBus
import FerryBroker
import FerryTestSupport
import Foundation
import Logging

/// A private bus with a running `ferryd` on it, and helpers to talk to it.
struct FerrydFixture {
    static let broker: BusName = "org.ferry.Broker"
    static let path: ObjectPath = "/org/ferry/Broker"
    static let interface: InterfaceName = "org.ferry.Broker1"

    let bus: PrivateBus
    let stateDir: URL

    init(bus: PrivateBus? = nil) throws {
        self.bus = try bus ?? PrivateBus()
        stateDir = FileManager.default.temporaryDirectory.appendingPathComponent("ferryd-test-\(UUID().uuidString)")
    }

    /// Starts a ferryd on this bus (READY once it owns the name).
    func start(_ extra: [String] = [], stateDir: URL? = nil) async throws -> ServiceProcess {
        try await ServiceProcess.ferryd(on: bus, stateDir: stateDir ?? self.stateDir, extra)
    }

    /// Runs ferryd to completion (for the failing start-ups).
    func run(_ extra: [String] = [], stateDir: URL? = nil) async throws -> (status: Int32?, stderr: String) {
        let child = try RunningProcess(try BuiltProducts.executable("ferryd"),
                                       ["--bus", bus.address, "--state-dir", (stateDir ?? self.stateDir).path] + extra,
                                       environment: bus.environment())
        let status = await child.waitForExit(timeout: .seconds(10))
        if status == nil { child.kill() }
        let err = FileHandle(fileDescriptor: child.standardError, closeOnDealloc: false).readDataToEndOfFile()
        return (status, String(decoding: err, as: UTF8.self))
    }

    func connect() async throws -> Connection { try await Connection(address: bus.address) }

    /// Starts ferryd's `Broker` in this process on this bus (no READY, no log; the paste policy
    /// file in the state directory), with `configure` changing its options, and serves it in a
    /// task; stop it with `Running.stop(reason:)` and await the task.
    func startBroker(_ configure: (inout Broker.Options) -> Void = { _ in }) async throws
        -> (running: Broker.Running, serving: Task<Void, Never>) {
        var options = Broker.Options(busAddress: bus.address, stateDirectory: stateDir.path)
        options.announcesReady = false
        options.policyPath = stateDir.path + "/paste-policy"
        configure(&options)
        let running = try await Broker(options: options, logger: Logger(label: "ferryd") { _ in SwiftLogNoOpLogHandler() }).start()
        return (running, Task { await running.serve() })
    }

    static func call(_ connection: Connection, _ member: MemberName, _ body: [DBusValue] = []) async throws -> [DBusValue] {
        try await connection.call(destination: broker, path: path, interface: interface, member: member, body: body,
                                  timeout: .seconds(10))
    }

    static func manifest(_ app: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: TestPaths.fixtures.appendingPathComponent("Apps/\(app)/Info.plist")))
    }

    static func register(_ connection: Connection, _ appID: String, manifest: [UInt8],
                         clientPath: ObjectPath = "/org/ferry/Client") async throws {
        _ = try await call(connection, "RegisterApp", [
            .string(appID), .bytes(manifest), .objectPath(clientPath), .variantDictionary(["future-option": .boolean(true)]),
        ])
    }

    func cleanUp() {
        try? FileManager.default.removeItem(at: stateDir)
    }
}
