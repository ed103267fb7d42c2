import DBus
import Dispatch
import Ferry
import FerryModel
import FerryTestSupport
import Foundation
import Synchronization

/// A private bus with a running `ferryd`, and Ferry clients connected to it.
final class ClientFixture: Sendable {
    let bus: PrivateBus
    let stateDir: URL
    let daemon: ServiceProcess?
    /// The `XDG_RUNTIME_DIR` ferryd was given (where it listens for direct connections), if any.
    let runtime: URL?

    /// Starts a private bus and, unless `withBroker` is false, a ferryd on it with `ferrydArguments`;
    /// with `directConnections`, an `XDG_RUNTIME_DIR` of its own for ferryd, so that it offers
    /// direct connections (which the clients then use).
    init(withBroker: Bool = true, ferrydArguments: [String] = [], directConnections: Bool = false) async throws {
        bus = try PrivateBus()
        stateDir = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-client-test-\(UUID().uuidString)")
        runtime = directConnections
            ? FileManager.default.temporaryDirectory.appendingPathComponent("fr-\(UUID().uuidString.prefix(8))") : nil
        if let runtime {
            try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        }
        if withBroker {
            daemon = try await ServiceProcess.ferryd(on: bus, stateDir: stateDir, ferrydArguments,
                                                     environment: runtime.map { ["XDG_RUNTIME_DIR": $0.path] } ?? [:])
        } else {
            daemon = nil
        }
    }

    /// A new client on the private bus.
    func client() async throws -> FerryClient { try await FerryClient.connect(address: bus.address) }

    /// A new client registered as a command-line tool.
    func registeredClient() async throws -> FerryClient {
        let client = try await client()
        try await client.registerCommandLineTool()
        return client
    }

    /// A raw connection on the private bus.
    func connection() async throws -> Connection { try await Connection(address: bus.address) }

    /// Stops the daemon and the bus and removes the state.
    func tearDown() {
        daemon?.stop()
        bus.stop()
        try? FileManager.default.removeItem(at: stateDir)
        if let runtime { try? FileManager.default.removeItem(at: runtime) }
    }

    /// Tears down on a thread of its own (``offThePool(_:)``): stopping the daemon and the bus
    /// blocks until the processes exit.
    func tearDownOffThePool() async {
        await offThePool { self.tearDown() }
    }

    /// Runs `body` with a fresh fixture, tearing it down afterwards.
    static func with<T>(withBroker: Bool = true, ferrydArguments: [String] = [], directConnections: Bool = false,
                        _ body: (ClientFixture) async throws -> T) async throws -> T {
        let fixture = try await ClientFixture(withBroker: withBroker, ferrydArguments: ferrydArguments,
                                              directConnections: directConnections)
        do {
            let result = try await body(fixture)
            await fixture.tearDownOffThePool()
            return result
        } catch {
            await fixture.tearDownOffThePool()
            throw error
        }
    }
}

/// Bytes that look like a PNG (signature first), `count` long, deterministic.
func pngLikeBytes(_ count: Int, seed: UInt8 = 7) -> Data {
    var bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    var x = UInt32(seed) &* 2_654_435_761
    while bytes.count < count {
        x = x &* 1_103_515_245 &+ 12345
        bytes.append(UInt8(truncatingIfNeeded: x >> 16))
    }
    return Data(bytes.prefix(count))
}

/// Counts calls from loaders.
final class CallCounter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
