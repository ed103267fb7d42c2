import DBus
import FerryModel
import Synchronization

/// A connection to the Ferry broker: the entry point of the client library, for apps and the CLI.
///
/// ```swift
/// let client = try await FerryClient.connect()
/// try await client.general.setString("hello")
/// print(try await client.general.string ?? "")
/// ```
/// A client that writes promised representations (registered apps, `ferry copy --lazy`) must stay
/// connected to serve them; ``flush()`` (or ``close()``, or ``flushOnTermination()``) hands them
/// to the broker first so they outlive the process.
public final class FerryClient: Sendable {
    static let brokerName: BusName = "org.ferry.Broker"
    static let brokerPath: ObjectPath = "/org/ferry/Broker"
    static let brokerInterface: InterfaceName = "org.ferry.Broker1"
    /// The object path where the client exports `org.ferry.Client1`.
    public static let clientPath: ObjectPath = "/org/ferry/Client"

    /// The bus connection this client talks over (its own private connection).
    public let connection: Connection
    let promises: PromiseKeeper
    /// Loads `ProvideBytes` started for a `ProvideRepresentation` to resume.
    let keptLoads = KeptLoads()
    /// The direct connection to the broker for the hot paths, when it has one.
    let direct = DirectRoute()
    let state = Mutex(State())
    /// Who waits for ``pastesServed()``.
    let servedPastes = ServedPasteAnnouncer()

    struct State {
        var appID: String?
        /// The registered app's manifest, to register again with a broker that restarted.
        var manifest: [UInt8]?
        var exported = false
        var brokerOwner: BusName?
        var ownerWatch: Task<Void, Never>?
        var closed = false
        /// A ``FerryClient/FlushService`` owns the flush on the way out: no `atexit` hook.
        var flushedByService = false
    }

    init(connection: Connection) {
        self.connection = connection
        self.promises = PromiseKeeper()
    }

    /// Connects to the session bus (or to `address`). Does not register an app and does not
    /// contact the broker yet.
    /// - Parameter address: a D-Bus address (`unix:path=…`); nil for the session bus.
    /// - Throws: `FerryError` `.noBroker` when the bus cannot be reached.
    public static func connect(address: String? = nil) async throws(FerryError) -> FerryClient {
        do {
            let connection = if let address { try await Connection(address: address) } else { try await Connection.session() }
            return FerryClient(connection: connection)
        } catch {
            throw FerryError(.noBroker, "cannot connect to the \(address == nil ? "session bus" : "bus at \(address!)"): \(FerryError.converting(error).message)")
        }
    }

    /// The process-wide client on the session bus, connected on first use (once, however many
    /// tasks ask at the same time; a failed attempt is retried by the next use).
    /// - Throws: `FerryError` `.noBroker` when the session bus cannot be reached.
    public static var shared: FerryClient {
        get async throws(FerryError) { try await SharedClient.instance.client() }
    }

    /// The registered app id, nil until ``register(appID:manifest:)`` succeeds.
    public var appID: String? { state.withLock { $0.appID } }

    /// Whether this client is a registered app (so its `.loader` representations are promised).
    public var isRegistered: Bool { appID != nil }

    /// The general pasteboard, through this client.
    public var general: Pasteboard {
        Pasteboard(source: .client(self), name: PasteboardName.general, path: Pasteboard.generalPath)
    }

    /// The pasteboard called `name`, created when it does not exist yet unless `creating` is false.
    ///
    /// Ask with `creating: false` to read, list, clear or watch: a mistyped name then leaves no
    /// pasteboard behind.
    /// - Parameters:
    ///   - name: the pasteboard's name.
    ///   - creating: whether a named pasteboard that does not exist is created (the default).
    /// - Throws: `FerryError` `.invalidArgument` for a bad name, `.notFound` for a pasteboard that
    ///   does not exist when `creating` is false, `.noBroker`.
    ///
    /// D-Bus: `org.ferry.Broker1.Pasteboard`.
    public func pasteboard(named name: String, creating: Bool = true) async throws(FerryError) -> Pasteboard {
        do { try PasteboardName.validate(name) } catch { throw FerryError.converting(error) }
        if name == PasteboardName.general { return general }
        let options: [String: DBusValue] = creating ? [:] : ["create": .boolean(false)]
        let reply = try await callBroker("Pasteboard", [.string(name), options.dbusValue], direct: true)
        guard case .objectPath(let path)? = reply.first else {
            throw FerryError(.bus, "Broker1.Pasteboard answered without an object path")
        }
        return Pasteboard(source: .client(self), name: name, path: path)
    }

    /// The names of all pasteboards, `general` first.
    ///
    /// D-Bus: `org.ferry.Broker1.ListPasteboards`.
    public func pasteboardNames() async throws(FerryError) -> [String] {
        let reply = try await callBroker("ListPasteboards", direct: true)
        return try FerryError.bridgingSync { try reply.first?.get([String].self) ?? [] }
    }

    /// Removes a named pasteboard and its items.
    /// - Throws: `FerryError` `.notFound` when it does not exist, `.invalidArgument` for `general`.
    ///
    /// D-Bus: `org.ferry.Broker1.RemovePasteboard`.
    public func removePasteboard(named name: String) async throws(FerryError) {
        _ = try await callBroker("RemovePasteboard", [.string(name)])
    }

    /// The last `limit` pastes (at most 10000), newest first.
    ///
    /// D-Bus: `org.ferry.Broker1.PasteLog`.
    public func pasteLog(limit: Int = 100) async throws(FerryError) -> [PasteLogEntry] {
        let reply = try await callBroker("PasteLog", [.uint32(UInt32(clamping: max(0, limit)))], direct: true)
        guard let value = reply.first else { return [] }
        let entries = try FerryError.bridgingSync { try WireBridge.dictionaries(value) }
        var result: [PasteLogEntry] = []
        for entry in entries { result.append(try PasteLogEntry(dbus: entry)) }
        return result
    }

    /// Flushes (see ``flush()``; errors are ignored), then closes the connection. Promised
    /// representations that could not be handed over become unavailable to readers.
    public func close() async {
        try? await flush()
        let watch = state.withLock { s in
            s.closed = true
            defer { s.ownerWatch = nil }
            return s.ownerWatch
        }
        watch?.cancel()
        promises.stopWatching()
        await direct.close()
        await connection.close()
    }

    /// Calls a `org.ferry.Broker1` method, over the direct connection when `direct` and there is one.
    func callBroker(_ member: MemberName, _ body: [DBusValue] = [], timeout: Duration = .seconds(30), direct: Bool = false)
        async throws(FerryError) -> [DBusValue] {
        try await FerryError.bridging {
            if direct {
                return try await callHot(path: Self.brokerPath, interface: Self.brokerInterface, member: member, body: body,
                                         timeout: timeout)
            }
            return try await connection.call(destination: Self.brokerName, path: Self.brokerPath, interface: Self.brokerInterface,
                                             member: member, body: body, timeout: timeout)
        }
    }
}

/// The lazily connected process-wide client behind ``FerryClient/shared``.
final class SharedClient: Sendable {
    static let instance = SharedClient()
    private let pending = Mutex<Task<FerryClient, any Error>?>(nil)

    func client() async throws(FerryError) -> FerryClient {
        let task = pending.withLock { current in
            if let current { return current }
            let made = Task<FerryClient, any Error> { try await FerryClient.connect() }
            current = made
            return made
        }
        do {
            return try await task.value
        } catch {
            pending.withLock { current in if current == task { current = nil } }
            throw FerryError.converting(error)
        }
    }
}
