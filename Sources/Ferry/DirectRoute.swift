import DBus
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A client's direct connection to the broker, when it has one: opened on the first hot call
/// (`Broker1.OpenDirect` over the bus, connect, `Direct1.Bind` with the token), used for the
/// calls that go direct, and given up for the bus when the broker has none (an older broker,
/// no `$XDG_RUNTIME_DIR`), refuses it (another user, a sandbox) or `FERRY_DIRECT=0` is set.
final class DirectRoute: Sendable {
    static let directPath: ObjectPath = "/org/ferry/Direct"
    static let directInterface: InterfaceName = "org.ferry.Direct1"

    private enum Phase: Sendable {
        case untried
        case opening(Task<Connection?, Never>)
        case open(Connection)
        /// The bus only, for this client's life.
        case off
    }

    private let phase: Mutex<Phase>

    init() {
        phase = Mutex(Self.enabled ? .untried : .off)
    }

    /// False when the environment says `FERRY_DIRECT=0`.
    static var enabled: Bool {
        guard let value = getenv("FERRY_DIRECT") else { return true }
        return String(cString: value) != "0"
    }

    /// The direct connection, opened now when not tried yet or lost; nil: use the bus.
    func connection(over bus: Connection) async -> Connection? {
        let task = phase.withLock { phase -> Task<Connection?, Never>? in
            // A direct connection lost (the broker went away) is tried once more: a successor
            // may offer one.
            if case .open(let connection) = phase, !connection.isConnected { phase = .untried }
            switch phase {
            case .open, .off: return nil
            case .opening(let task): return task
            case .untried:
                let task = Task { await Self.open(over: bus) }
                phase = .opening(task)
                return task
            }
        }
        if let task {
            let opened = await task.value
            phase.withLock { phase in
                if case .opening = phase { phase = opened.map(Phase.open) ?? .off }
            }
        }
        return phase.withLock { phase -> Connection? in
            if case .open(let connection) = phase, connection.isConnected { return connection }
            return nil
        }
    }

    /// Forgets a direct connection that was lost (the broker restarted, say): the next hot call
    /// tries once more.
    func lost(_ connection: Connection) {
        phase.withLock { phase in
            if case .open(let current) = phase, current === connection { phase = .untried }
        }
    }

    /// Closes the direct connection; the bus only from now on.
    func close() async {
        let open = phase.withLock { phase -> Connection? in
            defer { phase = .off }
            if case .open(let connection) = phase { return connection }
            return nil
        }
        await open?.close()
    }

    /// Bind's options: this client serves its `Client1` calls on the connection, `ProvideBytes` too.
    static let bindOptions = DBusValue.variantDictionary(["callbacks": .boolean(true), "provideBytes": .boolean(true)])

    /// Asks the broker over the bus for a token, connects and binds; nil on any failure.
    ///
    /// The broker may call this client's `Client1` object over the connection (`callbacks`), and
    /// ask it for a small promise's bytes in a reply (`provideBytes`):
    /// those calls arrive as from the broker's unique name, which the client object checks as it
    /// does on the bus. The address came from that broker over the bus, and only a process of
    /// this user can listen in `$XDG_RUNTIME_DIR/ferry`.
    private static func open(over bus: Connection) async -> Connection? {
        guard let reply = try? await bus.call(destination: FerryClient.brokerName, path: FerryClient.brokerPath,
                                              interface: FerryClient.brokerInterface, member: "OpenDirect",
                                              body: [], timeout: .seconds(10)),
              reply.count == 2, case .string(let address) = reply[0], case .bytes(let token) = reply[1],
              let broker = try? await bus.owner(of: FerryClient.brokerName),
              let direct = try? await Connection(peer: address, speakingFor: bus.uniqueName, callsFrom: broker, serving: bus)
        else { return nil }
        do {
            _ = try await direct.call(destination: FerryClient.brokerName, path: directPath, interface: directInterface,
                                      member: "Bind", body: [.bytes(token), bindOptions],
                                      timeout: .seconds(10))
            return direct
        } catch {
            await direct.close(gracePeriod: .zero)
            return nil
        }
    }
}

extension FerryClient {
    /// Calls the broker over the direct connection when there is one, else over the bus. A call
    /// that finds the direct connection lost (the broker went away) is made again over the bus,
    /// which starts a broker when none runs.
    func callHot(path: ObjectPath, interface: InterfaceName, member: MemberName, body: [DBusValue],
                 timeout: Duration) async throws -> [DBusValue] {
        if let direct = await direct.connection(over: connection) {
            do {
                return try await direct.call(destination: Self.brokerName, path: path, interface: interface,
                                             member: member, body: body, timeout: timeout)
            } catch let error as DBusError where error.name == .disconnected && !direct.isConnected {
                self.direct.lost(direct)
            }
        }
        return try await connection.call(destination: Self.brokerName, path: path, interface: interface,
                                         member: member, body: body, timeout: timeout)
    }

    /// ``callHot(path:interface:member:body:timeout:)`` with arguments marshalled straight from
    /// typed values, returning the reply for a typed read (`Message.arguments(as:)`): no
    /// `DBusValue` tree either way on the hot path.
    func callHot<each A: DBusRepresentable>(path: ObjectPath, interface: InterfaceName, member: MemberName,
                                            arguments: repeat each A, timeout: Duration) async throws -> Message {
        func message() throws -> Message {
            try Message.methodCall(destination: Self.brokerName, path: path, interface: interface, member: member,
                                   arguments: repeat each arguments)
        }
        if let direct = await direct.connection(over: connection) {
            do {
                return try await direct.call(try message(), timeout: timeout)
            } catch let error as DBusError where error.name == .disconnected && !direct.isConnected {
                self.direct.lost(direct)
            }
        }
        return try await connection.call(try message(), timeout: timeout)
    }

    /// Whether this client's hot calls (pasteboard reads, writes and listings) go over a direct
    /// connection to the broker, opening it now when not tried yet; false: over the bus.
    public var usesDirectConnection: Bool {
        get async { await direct.connection(over: connection) != nil }
    }

    /// The connection the hot calls go over now: the direct one, or the bus.
    func hotConnection() async -> Connection {
        await direct.connection(over: connection) ?? connection
    }

    /// The executor on which this client's hot calls (pasteboard reads and writes, drag moves,
    /// the scene listing) cost least: the thread of the connection they go over, the direct one
    /// when there is one (opened now when not tried yet), else the bus connection's. A call made
    /// there is sent without waking that thread, and its reply resumes the caller without waking
    /// another; from anywhere else each costs a hand-over between threads. Code that makes many
    /// such calls in a row can run there (`withTaskExecutorPreference`); it must not block.
    public var hotCallExecutor: any TaskExecutor {
        get async { await hotConnection().taskExecutor }
    }
}
