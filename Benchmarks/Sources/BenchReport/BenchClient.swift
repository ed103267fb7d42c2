import DBus

/// What the benchmarks' fake apps (scene-bench, drag-bench) share: each is a bus connection of
/// its own, registered with ``benchManifest(appID:)`` and scenes=true, exporting a raw
/// `org.ferry.Client1` whose scene calls are answered at once on the connection's thread.
public enum BenchClient {
    /// The broker's well-known name.
    public static let brokerName: BusName = "org.ferry.Broker"
    /// Where every fake app exports its Client1 object.
    public static let clientPath: ObjectPath = "/org/ferry/bench/Client"
    /// What a fake app answers a caller that is not the broker.
    public static let permissionDenied: ErrorName = "org.ferry.Error.PermissionDenied"
    /// What a fake app answers for promised data it never has.
    public static let notFound: ErrorName = "org.ferry.Error.NotFound"

    /// Connects to the bus at `address`; returns the connection and the broker's unique name.
    /// - Throws: `Spawn.Failure` when nobody owns `org.ferry.Broker` there.
    public static func connect(address: String) async throws -> (Connection, broker: BusName) {
        let connection = try await Connection(address: address)
        guard let owner = try await connection.owner(of: brokerName) else {
            throw Spawn.Failure(description: "nobody owns \(brokerName) on the private bus")
        }
        return (connection, owner)
    }

    /// A direct connection to the broker bound to `bus`'s unique name with callbacks, as the
    /// client library opens one (`Broker1.OpenDirect` over the bus, connect, `Direct1.Bind`):
    /// the broker's calls over it reach the objects exported on `bus`, as from `broker`.
    /// - Throws: when the broker offers none (no `XDG_RUNTIME_DIR`) or refuses the binding.
    public static func openDirect(from bus: Connection, broker: BusName) async throws -> Connection {
        let reply = try await bus.call(destination: brokerName, path: "/org/ferry/Broker", interface: "org.ferry.Broker1",
                                       member: "OpenDirect", body: [], timeout: .seconds(10))
        guard reply.count == 2, case .string(let address) = reply[0], case .bytes(let token) = reply[1] else {
            throw Spawn.Failure(description: "OpenDirect replied \(reply.count) values")
        }
        let direct = try await Connection(peer: address, speakingFor: bus.uniqueName, callsFrom: broker, serving: bus)
        _ = try await direct.call(destination: brokerName, path: "/org/ferry/Direct", interface: "org.ferry.Direct1",
                                  member: "Bind", body: [.bytes(token), ["callbacks": DBusValue.boolean(true)].dbusValue],
                                  timeout: .seconds(10))
        return direct
    }

    /// D-Bus: `org.ferry.Broker1.RegisterApp` of `appID` with scenes=true.
    public static func register(_ connection: Connection, appID: String) async throws {
        _ = try await connection.call(
            destination: brokerName, path: "/org/ferry/Broker", interface: "org.ferry.Broker1", member: "RegisterApp",
            body: [.string(appID), .bytes(benchManifest(appID: appID)), .objectPath(clientPath),
                   ["scenes": DBusValue.boolean(true)].dbusValue],
            timeout: .seconds(30))
    }

    /// Client1's scene methods, on the connection's thread, each after `check` (which throws
    /// for a caller it does not answer): configuration "Default", `connected`/`disconnected`
    /// told each scene's persistent id, pastes declined, no promised data, every other scene
    /// call (and each of `acknowledging`) answered with an empty reply.
    /// - Parameter bench: the benchmark's name, for its refusals.
    public static func sceneMethods(
        bench: String, check: @escaping @Sendable (MethodCall) throws -> Void,
        connected: @escaping @Sendable (String) -> Void, disconnected: @escaping @Sendable (String) -> Void,
        acknowledging extra: [(MemberName, KeyValuePairs<String, Signature>)] = []
    ) -> [InterfaceMember] {
        let acknowledged: [(MemberName, KeyValuePairs<String, Signature>)] = [
            ("SceneChanged", ["persistent_id": "s", "changes": "a{sv}"]),
            ("ContinueActivity", ["persistent_id": "s", "activity": "a{sv}"]),
            ("RefreshScene", ["persistent_id": "s"]),
            ("DiscardSceneSessions", ["persistent_ids": "as"]),
        ] + extra
        var members: [InterfaceMember] = [
            .method(Method("ProvideRepresentation", in: ["item_id": "s", "type": "s", "fd": "h", "options": "a{sv}"],
                           out: ["size": "t"], execution: .connectionThread) { call in
                try? call.argument(2, as: FileDescriptor.self).close()
                try check(call)
                throw DBusError(notFound, "\(bench) promises nothing")
            }),
            .method(Method("ChooseConfiguration", in: ["session": "a{sv}", "options": "a{sv}"], out: ["configuration": "s"],
                           execution: .connectionThread) { call in
                try check(call)
                return [.string("Default")]
            }),
            .method(Method("ConnectScene", in: ["session": "a{sv}", "options": "a{sv}"], execution: .connectionThread) { call in
                try check(call)
                let session = try call.argument(0, as: [String: DBusValue].self)
                connected(try session.value(forKey: "persistentIdentifier", as: String.self))
                return []
            }),
            .method(Method("DisconnectScene", in: ["persistent_id": "s", "options": "a{sv}"], execution: .connectionThread) { call in
                try check(call)
                disconnected(try call.argument(0, as: String.self))
                return []
            }),
            .method(Method("PerformPaste", in: ["persistent_id": "s", "pasteboard": "s", "options": "a{sv}"],
                           out: ["result": "a{sv}"], execution: .connectionThread) { call in
                try check(call)
                let result: [String: DBusValue] = [
                    "accepted": .boolean(false), "configuration": [String]().dbusValue,
                    "reason": .string("\(bench) accepts no pastes"), "message": .string(""),
                ]
                return [result.dbusValue]
            }),
        ]
        for (name, inputs) in acknowledged {
            members.append(.method(Method(name, in: inputs, execution: .connectionThread) { call in
                try check(call)
                return []
            }))
        }
        return members
    }
}
