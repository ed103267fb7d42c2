import BenchReport
import DBus
import Synchronization

/// One benchmark app on a bus connection of its own, registered with scenes=true, exporting a
/// raw `org.ferry.Client1` (version 3) on the connection's own thread: scene calls accepted at
/// once, `DropEntered`/`DropUpdated` answered ("copy", false) at once, `ProvideDragItems` by
/// writing one small text item to the drag pasteboard, every other drag call acknowledged.
///
/// The handlers stamp when each proposal call arrived, so the benchmark (in the same process,
/// on the same clock) can split a Move's round trip into the leg to the target and the leg back.
final class DragApp: Sendable {
    let appID: String
    let connection: Connection
    /// The broker's unique name: the caller the Client1 object answers.
    let broker: BusName
    /// The benchmark's relay (the floor measurement), which it answers too.
    let relay: BusName
    /// What the Client1 object has seen.
    let log = CallLog()
    /// Its direct connection to the broker, once opened (``openDirect()``).
    let direct = Mutex<Connection?>(nil)

    /// Counts and stamps of incoming Client1 calls (shared with the handlers).
    final class CallLog: Sendable {
        /// Persistent ids of the scenes connected (and not disconnected), in connection order.
        let scenes = Mutex<[String]>([])
        let entered = Atomic<Int>(0)
        let updated = Atomic<Int>(0)
        let exited = Atomic<Int>(0)
        let provided = Atomic<Int>(0)
        let ended = Atomic<Int>(0)
        /// `now()` (µs, bit pattern) when the last DropEntered/DropUpdated arrived.
        let lastProposalCall = Atomic<UInt64>(0)
        /// Every Client1 call received.
        let calls = Atomic<Int>(0)

        /// DropEntered + DropUpdated so far.
        var proposals: Int { entered.load(ordering: .relaxed) + updated.load(ordering: .relaxed) }
        /// When the last proposal call arrived (µs on `now()`'s clock).
        var lastProposalTime: Double { Double(bitPattern: lastProposalCall.load(ordering: .acquiring)) }
        var sceneIDs: [String] { scenes.withLock { $0 } }
    }

    static let brokerName = BenchClient.brokerName
    static let clientPath = BenchClient.clientPath
    /// What the source app puts on the drag pasteboard.
    static let itemText = Array("drag-bench: one small item".utf8)

    /// Connects `appID` to the bus at `address` and exports its Client1, answering the broker
    /// and `relay`.
    init(appID: String, address: String, relay: BusName) async throws {
        self.appID = appID
        self.relay = relay
        (connection, broker) = try await BenchClient.connect(address: address)
        try connection.export(clientInterface(), at: Self.clientPath)
    }

    /// D-Bus: `org.ferry.Broker1.RegisterApp` with scenes=true.
    func register() async throws { try await BenchClient.register(connection, appID: appID) }

    /// Opens a direct connection to the broker, which then calls this app's Client1 over it.
    func openDirect() async throws {
        let opened = try await BenchClient.openDirect(from: connection, broker: broker)
        direct.withLock { $0 = opened }
    }

    /// Closes its connections.
    func close() async {
        await direct.withLock { $0 }?.close()
        await connection.close()
    }

    /// D-Bus: `org.ferry.Scenes1.RequestActivation` for a new session taking the `placement`
    /// half of the screen ("left"/"right"); returns its persistent id.
    func openScene(placement: String, requestingScene: String? = nil) async throws -> String {
        var options: [String: DBusValue] = ["placement": .string(placement)]
        if let requestingScene { options["requestingScene"] = .string(requestingScene) }
        let reply = try await connection.call(
            destination: Self.brokerName, path: "/org/ferry/Scenes", interface: "org.ferry.Scenes1",
            member: "RequestActivation", body: [.string(appID), .string(""), options.dbusValue],
            timeout: .seconds(30))
        guard reply.count == 2 else { throw Spawn.Failure(description: "RequestActivation replied \(reply.count) values") }
        return try reply[1].get(String.self)
    }

    /// Waits at most `seconds` until at least `count` scenes are connected.
    func waitForScenes(_ count: Int, seconds: Double) async throws {
        let deadline = now() + seconds * 1e6
        while log.sceneIDs.count < count {
            guard now() < deadline else {
                throw Spawn.Failure(description: "\(appID): \(log.sceneIDs.count) of \(count) scenes connected")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// D-Bus: `org.ferry.Pasteboard1.SetItems` of the one small item on `pasteboard` (the
    /// option append when `append`).
    static func writeItem(on connection: Connection, pasteboard: ObjectPath) async throws {
        let representation: [String: DBusValue] = ["type": .string("public.utf8-plain-text"), "data": .bytes(itemText)]
        let item: [String: DBusValue] = ["representations": .array(of: .variant, [.variant(representation.dbusValue)])]
        _ = try await connection.call(
            destination: brokerName, path: pasteboard, interface: "org.ferry.Pasteboard1", member: "SetItems",
            body: [.array(of: .variantDictionary, [item.dbusValue]), [String: DBusValue]().dbusValue],
            timeout: .seconds(10))
    }

    private func clientInterface() -> Interface {
        let broker = self.broker, relay = self.relay, log = self.log
        @Sendable func fromBroker(_ call: MethodCall) throws {
            log.calls.add(1, ordering: .relaxed)
            guard call.sender == broker || call.sender == relay else {
                throw DBusError(BenchClient.permissionDenied, "only the owner of org.ferry.Broker may call org.ferry.Client1")
            }
        }
        @Sendable func propose(_ call: MethodCall, entering: Bool) throws -> [DBusValue] {
            log.lastProposalCall.store(now().bitPattern, ordering: .releasing)
            try fromBroker(call)
            if entering { log.entered.add(1, ordering: .relaxed) } else { log.updated.add(1, ordering: .relaxed) }
            return [.string("copy"), .boolean(false)]
        }
        return Interface("org.ferry.Client1") {
            Property("Version", "u", get: { _ in .uint32(3) })
            BenchClient.sceneMethods(bench: "drag-bench", check: fromBroker,
                                     connected: { id in log.scenes.withLock { $0.append(id) } },
                                     disconnected: { id in log.scenes.withLock { $0.removeAll { $0 == id } } },
                                     acknowledging: Self.acknowledged)
            Method("ProvideDragItems", in: ["drag": "s", "persistent_id": "s", "pasteboard": "o", "options": "a{sv}"],
                   out: ["result": "a{sv}"]) { call in
                try fromBroker(call)
                try await Self.writeItem(on: call.connection, pasteboard: try call.argument(2, as: ObjectPath.self))
                log.provided.add(1, ordering: .relaxed)
                let result: [String: DBusValue] = [
                    "count": .uint32(1), "allowsMove": .boolean(true), "restrictedToApp": .boolean(false),
                ]
                return [result.dbusValue]
            }
            Method("DropEntered", in: ["drag": "s", "persistent_id": "s", "info": "a{sv}"],
                   out: ["operation": "s", "precise": "b"], execution: .connectionThread) { call in
                try propose(call, entering: true)
            }
            Method("DropUpdated", in: ["drag": "s", "persistent_id": "s", "info": "a{sv}"],
                   out: ["operation": "s", "precise": "b"], execution: .connectionThread) { call in
                try propose(call, entering: false)
            }
            Method("DropExited", in: ["drag": "s", "persistent_id": "s"], execution: .connectionThread) { call in
                try fromBroker(call)
                log.exited.add(1, ordering: .relaxed)
                return []
            }
            Method("PerformDrop", in: ["drag": "s", "persistent_id": "s", "info": "a{sv}"], out: ["result": "a{sv}"],
                   execution: .connectionThread) { call in
                try fromBroker(call)
                let result: [String: DBusValue] = ["message": .string("drag-bench read nothing"), "types": [String]().dbusValue]
                return [result.dbusValue]
            }
            Method("DragEnded", in: ["drag": "s", "persistent_id": "s", "operation": "s", "info": "a{sv}"],
                   execution: .connectionThread) { call in
                try fromBroker(call)
                log.ended.add(1, ordering: .relaxed)
                return []
            }
        }
    }

    /// Drag calls answered with an empty reply and nothing else.
    static let acknowledged: [(MemberName, KeyValuePairs<String, Signature>)] = [
        ("ConcludeDrop", ["drag": "s", "persistent_id": "s"]),
        ("DropEnded", ["drag": "s", "persistent_id": "s", "operation": "s"]),
    ]
}
