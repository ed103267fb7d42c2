import DBus
import Ferry
import FerryModel
import FerryTestSupport
import Foundation
import Testing

/// The client library over ferryd's direct connections: used transparently when the broker
/// offers one, the bus otherwise, with the same results either way.
@Suite("Ferry: direct connections to the broker")
struct DirectClientTests {
    /// Whether two executors are the same object (a connection's executor is its loop).
    static func same(_ a: any TaskExecutor, _ b: any TaskExecutor) -> Bool {
        ObjectIdentifier(a as AnyObject) == ObjectIdentifier(b as AnyObject)
    }

    @Test("with a broker that offers it, pastes go direct: text, a 40 KiB image, a registered app's promise served through its callback, change counts and listings")
    func pastesGoDirect() async throws {
        let stage = try await DirectBrokerStage()
        defer { stage.stop() }
        let writer = try await FerryClient.connect(address: stage.bus.address)
        try await writer.registerCommandLineTool()
        let reader = try await FerryClient.connect(address: stage.bus.address)
        #expect(await writer.usesDirectConnection)
        #expect(await reader.usesDirectConnection)

        let counter = CallCounter()
        try await writer.general.setItemProviders([PromiseTests.lazyText("promised, direct", counter: counter)])
        #expect(try await reader.general.changeCount == 1)
        #expect(try await reader.general.items.first?.promisedTypes == [.utf8PlainText])
        #expect(try await reader.general.string == "promised, direct")
        #expect(counter.value == 1, "the writer's loader served the read")

        let image = Data((0..<40_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try await writer.general.setData(image, forType: .png)
        #expect(try await reader.general.data(forType: .image) == image)
        #expect(try await reader.pasteboardNames().first == "general")
        let log = try await reader.pasteLog(limit: 5)
        #expect(log.count == 2)
        #expect(stage.daemon.standardError.components(separatedBy: "direct connection bound to").count - 1 == 2,
                "\(stage.daemon.standardError)")

        // Hot calls made on the direct connection's own thread: none on the bus connection's.
        let executor = await reader.hotCallExecutor
        #expect(!Self.same(executor, reader.connection.taskExecutor))
        let board = reader.general
        let onItsThread = try await withTaskExecutorPreference(executor) { () async throws -> Int in
            var matching = 0
            for _ in 0..<20 where try await board.data(forType: .image) == image { matching += 1 }
            return matching
        }
        #expect(onItsThread == 20)
        await writer.close()
        await reader.close()
    }

    @Test("without a direct socket (no XDG_RUNTIME_DIR) the client stays on the bus, and pastes work the same")
    func fallsBackToTheBus() async throws {
        let stage = try await DirectBrokerStage(runtimeDirectory: false)
        defer { stage.stop() }
        let writer = try await FerryClient.connect(address: stage.bus.address)
        let reader = try await FerryClient.connect(address: stage.bus.address)
        try await writer.general.setString("over the bus")
        #expect(try await reader.general.string == "over the bus")
        #expect(await reader.usesDirectConnection == false)
        #expect(Self.same(await reader.hotCallExecutor, reader.connection.taskExecutor))
        #expect(!stage.daemon.standardError.contains("direct connection bound"))
        await writer.close()
        await reader.close()
    }

    @Test("when the broker goes away, the client binds a direct connection to its successor and keeps working")
    func survivesBrokerRestart() async throws {
        let stage = try await DirectBrokerStage()
        defer { stage.stop() }
        let client = try await FerryClient.connect(address: stage.bus.address)
        try await client.general.setString("before")
        #expect(await client.usesDirectConnection)
        stage.daemon.stop()
        _ = await stage.daemon.waitForExit()
        let successor = try await stage.startBroker()
        defer { successor.stop() }
        try await client.general.setString("after")
        #expect(try await client.general.string == "after")
        #expect(await client.usesDirectConnection, "a new direct connection to the successor")
        await client.close()
    }
}

/// A private bus and a ferryd whose `XDG_RUNTIME_DIR` is a fresh folder of this test's own.
final class DirectBrokerStage: Sendable {
    let bus: PrivateBus
    let stateDir: URL
    let runtime: String?
    let daemon: ServiceProcess

    init(runtimeDirectory: Bool = true) async throws {
        bus = try PrivateBus()
        stateDir = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-direct-test-\(UUID().uuidString)")
        if runtimeDirectory {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("fc-\(getpid())-\(UUID().uuidString.prefix(8))").path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            runtime = path
        } else {
            runtime = nil
        }
        daemon = try await Self.ferryd(bus, stateDir, runtime)
    }

    static func ferryd(_ bus: PrivateBus, _ stateDir: URL, _ runtime: String?) async throws -> ServiceProcess {
        var environment = bus.environment()
        environment["XDG_RUNTIME_DIR"] = runtime
        // --verbose: a bound direct connection is a debug line, which the tests count.
        return try await ServiceProcess(try BuiltProducts.executable("ferryd"),
                                        ["--bus", bus.address, "--state-dir", stateDir.path, "--verbose"], environment: environment)
    }

    /// Another ferryd on the same bus, state and runtime folder.
    func startBroker() async throws -> ServiceProcess {
        try await Self.ferryd(bus, stateDir, runtime)
    }

    func stop() {
        daemon.stop()
        bus.stop()
        try? FileManager.default.removeItem(at: stateDir)
        if let runtime { try? FileManager.default.removeItem(atPath: runtime) }
    }
}
