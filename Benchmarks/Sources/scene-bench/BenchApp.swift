import BenchReport
import DBus
import Synchronization

/// One benchmark app: a bus connection of its own (one app per connection, as the broker
/// requires), registered with a minimal manifest (multiple scenes, one "Default" window
/// configuration) and the option scenes=true, exporting a minimal `org.ferry.Client1` that answers
/// every scene call at once on the connection's own thread.
final class BenchApp: Sendable {
    let appID: String
    let connection: Connection
    /// The broker's unique name: the only caller the Client1 object answers.
    let broker: BusName
    /// What the Client1 object has been asked so far.
    let counters = Counters()

    /// Counts of incoming Client1 calls (shared with the handlers, which must not hold the app).
    final class Counters: Sendable {
        /// Scenes connected and not disconnected since (ConnectScene − DisconnectScene).
        let connectedScenes = Atomic<Int>(0)
        /// Every Client1 call received.
        let calls = Atomic<Int>(0)
    }

    static let brokerName = BenchClient.brokerName

    /// Connects app number `index` (1-based) to the bus at `address` and exports its Client1.
    init(index: Int, address: String) async throws {
        appID = Self.appID(index)
        (connection, broker) = try await BenchClient.connect(address: address)
        try connection.export(clientInterface(), at: BenchClient.clientPath)
    }

    /// `org.ferry.bench.app001` …
    static func appID(_ index: Int) -> String {
        let digits = String(index)
        return "org.ferry.bench.app" + String(repeating: "0", count: max(0, 3 - digits.count)) + digits
    }

    /// D-Bus: `org.ferry.Broker1.RegisterApp` with scenes=true.
    func register() async throws { try await BenchClient.register(connection, appID: appID) }

    /// D-Bus: `org.ferry.Scenes1.RequestActivation` for a new session; returns its persistent id.
    @discardableResult
    func openScene() async throws -> String {
        let reply = try await connection.call(
            destination: Self.brokerName, path: "/org/ferry/Scenes", interface: "org.ferry.Scenes1",
            member: "RequestActivation", body: [.string(appID), .string(""), [String: DBusValue]().dbusValue],
            timeout: .seconds(30))
        guard reply.count == 2 else { throw Spawn.Failure(description: "RequestActivation replied \(reply.count) values") }
        return try reply[1].get(String.self)
    }

    /// The minimal Client1: configuration "Default", every other scene call accepted with an
    /// empty reply, pastes declined, no promised data.
    private func clientInterface() -> Interface {
        let broker = self.broker, counters = self.counters
        @Sendable func fromBroker(_ call: MethodCall) throws {
            counters.calls.add(1, ordering: .relaxed)
            guard call.sender == broker else {
                throw DBusError(BenchClient.permissionDenied, "only the owner of org.ferry.Broker may call org.ferry.Client1")
            }
        }
        return Interface("org.ferry.Client1") {
            Property("Version", "u", get: { _ in .uint32(2) })
            BenchClient.sceneMethods(bench: "scene-bench", check: fromBroker,
                                     connected: { _ in counters.connectedScenes.add(1, ordering: .relaxed) },
                                     disconnected: { _ in counters.connectedScenes.add(-1, ordering: .relaxed) })
        }
    }
}
