import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A connection to a D-Bus message bus.
///
/// Each connection has one thread that does all its I/O, and every libdbus call for one libdbus
/// serves (its own thread, or for the connections a ``PeerServer`` accepted, the server's, shared
/// with them); the public API is `async` calls, `AsyncSequence` signal streams and exported
/// objects whose handlers run as tasks. Close it with `close()`; calls in flight then fail with
/// `org.freedesktop.DBus.Error.Disconnected`.
///
/// ```swift
/// let bus = try await Connection.session()
/// try bus.export(Interface("org.example.Echo") {
///     Method("Echo", in: ["text": "s"], out: ["text": "s"]) { call in call.arguments }
/// }, at: "/org/example/Echo")
/// _ = try await bus.requestName("org.example.Echo", flags: [.doNotQueue])
///
/// let reply = try await bus.call(destination: "org.example.Echo", path: "/org/example/Echo",
///                                interface: "org.example.Echo", member: "Echo",
///                                body: [.string("hi")], returning: String.self)
/// for try await signal in try await bus.subscribe(to: MatchRule(interface: "org.example.Echo")) { … }
/// await bus.close()
/// ```
public final class Connection: Sendable {
    /// This connection in its loop.
    let endpoint: LoopEndpoint
    var loop: ConnectionLoop { endpoint.loop }
    let router: ConnectionRouter
    /// The objects exported on this connection itself.
    let ownObjects = ObjectRegistry()
    private let lifecycle: Lifecycle
    /// For a peer-to-peer connection a ``PeerServer`` accepted: whom its calls speak for.
    let peerLink: PeerLink?

    /// The connection's unique bus name, such as `:1.42`. On a peer-to-peer connection, which
    /// has no bus, the bus name it speaks for: the client's own bus connection's name (see
    /// ``init(peer:speakingFor:)``), or the serving bus connection's name on the server's side.
    public let uniqueName: BusName

    /// The objects that calls arriving here reach: a bound peer connection's reach the bus
    /// connection's it serves.
    var objects: ObjectRegistry { peerLink?.served?.ownObjects ?? ownObjects }

    /// Connects to the bus at `address` and registers with it (`Hello`): served by this library's
    /// own transport at a `unix:path=` or `unix:abstract=` address, unless the environment says
    /// `FERRY_BUS_TRANSPORT=libdbus`; by libdbus at any other.
    ///
    /// - Parameter address: a D-Bus address such as `unix:path=/run/user/1000/bus`.
    /// - Throws: `DBusError` when the address is invalid, the bus cannot be reached or
    ///   authentication fails.
    public convenience init(address: String) async throws {
        let wireAddress = BusTransport.servesItself ? try PeerAddress(address) : nil
        let (router, lifecycle, name) = try await Self.open { endpoint in
            if let wireAddress { return try endpoint.openWireBus(wireAddress) }
            return try endpoint.openAndRegister(address)
        }
        self.init(router: router, lifecycle: lifecycle, uniqueName: BusName(unchecked: name), peerLink: nil)
    }

    /// Connects to the peer-to-peer D-Bus server at `address` (no bus: no `Hello`, no names,
    /// no signals from others; method calls and replies, fds included).
    ///
    /// - Parameters:
    ///   - address: the server's address, such as `unix:path=/run/user/1000/ferry/direct-…`.
    ///   - name: the bus name this connection speaks for (its ``uniqueName``), usually the
    ///     unique name of the same process's bus connection that the server binds it to.
    ///   - server: when the server calls this connection back, the bus name its calls come from
    ///     (usually the server's unique name on the same bus); with `bus`, its calls reach the
    ///     objects exported on `bus`, as if `server` had made them there. Nil: calls from the
    ///     server are not served. Pass it only for a server this process trusts as `server`.
    ///   - bus: the connection whose objects the server's calls reach.
    /// - Throws: `DBusError` when the address is invalid, nobody listens there or
    ///   authentication fails (a server of another user refuses it).
    public convenience init(peer address: String, speakingFor name: BusName, callsFrom server: BusName? = nil,
                            serving bus: Connection? = nil) async throws {
        let wireAddress = PeerTransport.servesItself ? try PeerAddress(address) : nil
        let (router, lifecycle, _) = try await Self.open { endpoint in
            if let wireAddress {
                try endpoint.openWirePeer(wireAddress)
            } else {
                try endpoint.openPeer(address)
            }
            return name.rawValue
        }
        let link = server.flatMap { server in bus.map { PeerLink(boundTo: server, serving: $0) } }
        self.init(router: router, lifecycle: lifecycle, uniqueName: name, peerLink: link)
    }

    init(router: ConnectionRouter, lifecycle: Lifecycle, uniqueName: BusName, peerLink: PeerLink?) {
        self.endpoint = router.endpoint
        self.router = router
        self.lifecycle = lifecycle
        self.uniqueName = uniqueName
        self.peerLink = peerLink
        loop.submit { [weak self] in router.connection = self }
    }

    /// Starts a loop of its own whose thread runs `open` first; returns once it has.
    private static func open(_ open: @escaping @Sendable (LoopEndpoint) throws -> String) async throws
        -> (ConnectionRouter, Lifecycle, String) {
        let endpoint = LoopEndpoint(loop: try ConnectionLoop())
        let router = ConnectionRouter(endpoint: endpoint)
        let lifecycle = Lifecycle()
        let name: String = try await withCheckedThrowingContinuation { continuation in
            do {
                try endpoint.loop.start(open: {
                    do {
                        endpoint.loop.add(endpoint)
                        Self.hook(endpoint, router: router, lifecycle: lifecycle)
                        continuation.resume(returning: try open(endpoint))
                    } catch {
                        endpoint.end(with: DBusError(.disconnected, "open failed"))
                        continuation.resume(throwing: error)
                    }
                })
            } catch {
                continuation.resume(throwing: error)
            }
        }
        return (router, lifecycle, name)
    }

    /// Routes `endpoint`'s messages to `router`, and its end to both (owner thread).
    private static func hook(_ endpoint: LoopEndpoint, router: ConnectionRouter, lifecycle: Lifecycle) {
        endpoint.incoming = { router.receive($0) }
        endpoint.teardown = {
            lifecycle.markEnding()
            router.tearDown($0)
        }
        endpoint.finished = { lifecycle.markEnded() }
    }

    /// Adopts a connection a ``PeerServer`` accepted, on the server's own thread (`loop`; this
    /// runs there); `link` says whom it serves. `prepare` runs before the connection reads
    /// anything (export what it may call there).
    static func accepted(_ conn: OpaquePointer, on loop: ConnectionLoop, serving name: BusName, link: PeerLink,
                         prepare: (Connection) -> Void) throws -> Connection {
        let handle = UInt(bitPattern: conn)
        return try accepted(on: loop, serving: name, link: link, prepare: prepare) { endpoint in
            endpoint.adopt(OpaquePointer(bitPattern: handle)!)
        }
    }

    /// ``accepted(_:on:serving:link:prepare:)`` for a socket a ``WireTransport`` serves, closed
    /// when its peer has not authenticated within `authenticationTimeout`.
    static func accepted(_ transport: WireTransport, on loop: ConnectionLoop, serving name: BusName, link: PeerLink,
                         authenticationTimeout: Duration, prepare: (Connection) -> Void) throws -> Connection {
        try accepted(on: loop, serving: name, link: link, prepare: prepare) {
            $0.adopt(transport, authenticationTimeout: authenticationTimeout)
        }
    }

    private static func accepted(on loop: ConnectionLoop, serving name: BusName, link: PeerLink,
                                 prepare: (Connection) -> Void,
                                 adopt: @escaping @Sendable (LoopEndpoint) -> Void) throws -> Connection {
        let endpoint = LoopEndpoint(loop: loop)
        let router = ConnectionRouter(endpoint: endpoint)
        let lifecycle = Lifecycle()
        loop.add(endpoint)
        hook(endpoint, router: router, lifecycle: lifecycle)
        let connection = Connection(router: router, lifecycle: lifecycle, uniqueName: name, peerLink: link)
        prepare(connection)
        // Adopted only after the router knows its connection (queued before this job) and
        // `prepare` exported what it serves: no message can be dispatched before either.
        guard loop.submit({ adopt(endpoint) }) else {
            endpoint.end(with: DBusError(.disconnected, "the server's thread stopped"))
            throw DBusError(.disconnected, "the server's thread stopped")
        }
        return connection
    }

    /// Connects to the session bus named by `DBUS_SESSION_BUS_ADDRESS`, or
    /// `$XDG_RUNTIME_DIR/bus` when that variable is unset.
    ///
    /// - Throws: `DBusError` when no session bus address is known or it cannot be reached.
    public static func session() async throws -> Connection {
        if let address = environment("DBUS_SESSION_BUS_ADDRESS"), !address.isEmpty {
            return try await Connection(address: address)
        }
        if let runtime = environment("XDG_RUNTIME_DIR"), !runtime.isEmpty {
            return try await Connection(address: "unix:path=\(runtime)/bus")
        }
        throw DBusError(.failed, "no session bus: DBUS_SESSION_BUS_ADDRESS is not set")
    }

    /// Connects to the system bus (`DBUS_SYSTEM_BUS_ADDRESS`, or the standard socket).
    ///
    /// - Throws: `DBusError` when the system bus cannot be reached.
    public static func system() async throws -> Connection {
        let address = environment("DBUS_SYSTEM_BUS_ADDRESS") ?? "unix:path=/run/dbus/system_bus_socket"
        return try await Connection(address: address)
    }

    private static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// True until the connection is closed or lost.
    public var isConnected: Bool { !lifecycle.ending }

    /// Closes the connection gracefully and waits until it has ended.
    ///
    /// Incoming calls are refused from now on; method handlers already running get up to
    /// `gracePeriod` to finish, and their replies are sent before the connection closes. Then
    /// this connection's own calls in flight fail with `org.freedesktop.DBus.Error.Disconnected`
    /// and signal streams end. Safe to call more than once.
    public func close(gracePeriod: Duration = .seconds(5)) async {
        let router = self.router
        if loop.submit({ router.closing = true }) {
            let deadline = ContinuousClock.now + gracePeriod
            while router.handlersInFlight.load(ordering: .relaxed) > 0, ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(1))
            }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            guard lifecycle.addWaiter(continuation) else { return }
            loop.submit { [endpoint] in endpoint.end(with: .closedLocally) }
        }
    }

    deinit {
        loop.submit { [endpoint] in endpoint.end(with: DBusError(.disconnected, "the connection was released")) }
    }

    /// Runs `body` on the owner thread while the connection is open.
    ///
    /// - Throws: `org.freedesktop.DBus.Error.Disconnected` when the connection is closed.
    func perform<R: Sendable>(_ body: @escaping @Sendable () throws -> R) async throws -> R {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<R, any Error>) in
            let accepted = loop.submit { [endpoint] in
                guard endpoint.isOpen else {
                    continuation.resume(throwing: DBusError(.disconnected, "the connection is closed"))
                    return
                }
                continuation.resume(with: Result { try body() })
            }
            if !accepted {
                continuation.resume(throwing: DBusError(.disconnected, "the connection is closed"))
            }
        }
    }

    /// Runs `body` on the owner thread without waiting.
    ///
    /// - Throws: `org.freedesktop.DBus.Error.Disconnected` when the connection is closed.
    func enqueue(_ body: @escaping @Sendable () -> Void) throws(DBusError) {
        guard loop.submit(body) else { throw DBusError(.disconnected, "the connection is closed") }
    }
}

/// Whether a connection's thread has stopped, and who waits for it to.
final class Lifecycle: Sendable {
    private let state = Mutex<(ending: Bool, ended: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, false, []))

    var ended: Bool { state.withLock { $0.ended } }

    /// Whether the connection is closed or lost: set before its pending calls and signal streams
    /// fail, so a task they resume never sees it still connected.
    var ending: Bool { state.withLock { $0.ending } }

    /// Marks the connection closed or lost (its thread may still be winding down).
    func markEnding() {
        state.withLock { $0.ending = true }
    }

    /// Marks the thread stopped and resumes the waiters.
    func markEnded() {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.ending = true
            s.ended = true
            defer { s.waiters = [] }
            return s.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Adds a waiter; if the thread already stopped, resumes it and returns false.
    func addWaiter(_ continuation: CheckedContinuation<Void, Never>) -> Bool {
        let added = state.withLock { s -> Bool in
            if !s.ended { s.waiters.append(continuation) }
            return !s.ended
        }
        if !added { continuation.resume() }
        return added
    }
}
