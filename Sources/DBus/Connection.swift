import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A connection to a D-Bus message bus.
///
/// Each connection owns one thread that performs every libdbus call for it; the public API is
/// `async` calls, `AsyncSequence` signal streams and exported objects whose handlers run as
/// tasks. Close it with `close()`; calls in flight then fail with
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
    let loop: ConnectionLoop
    let router: ConnectionRouter
    let objects = ObjectRegistry()
    private let lifecycle: Lifecycle

    /// The connection's unique bus name, such as `:1.42`.
    public let uniqueName: BusName

    /// Connects to the bus at `address` and registers with it (`Hello`).
    ///
    /// - Parameter address: a D-Bus address such as `unix:path=/run/user/1000/bus`.
    /// - Throws: `DBusError` when the address is invalid, the bus cannot be reached or
    ///   authentication fails.
    public init(address: String) async throws {
        let loop = try ConnectionLoop()
        let router = ConnectionRouter(loop: loop)
        let lifecycle = Lifecycle()
        let name: String = try await withCheckedThrowingContinuation { continuation in
            do {
                try loop.start(open: {
                    do {
                        loop.incoming = { router.receive($0) }
                        loop.teardown = { router.tearDown($0) }
                        continuation.resume(returning: try loop.openAndRegister(address))
                    } catch {
                        loop.end(with: DBusError(.disconnected, "open failed"))
                        continuation.resume(throwing: error)
                    }
                }, finished: {
                    lifecycle.markEnded()
                })
            } catch {
                continuation.resume(throwing: error)
            }
        }
        self.loop = loop
        self.router = router
        self.lifecycle = lifecycle
        self.uniqueName = BusName(unchecked: name)
        loop.submit { [weak self] in router.connection = self }
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
    public var isConnected: Bool { !lifecycle.ended }

    /// Closes the connection gracefully and waits for its thread to stop.
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
            loop.submit { [loop] in loop.end(with: .closedLocally) }
        }
    }

    deinit {
        loop.submit { [loop] in loop.end(with: DBusError(.disconnected, "the connection was released")) }
    }

    /// Runs `body` on the owner thread with the open libdbus connection.
    ///
    /// - Throws: `org.freedesktop.DBus.Error.Disconnected` when the connection is closed.
    func perform<R: Sendable>(_ body: @escaping @Sendable (OpaquePointer) throws -> R) async throws -> R {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<R, any Error>) in
            let accepted = loop.submit { [loop] in
                guard let conn = loop.connection else {
                    continuation.resume(throwing: DBusError(.disconnected, "the connection is closed"))
                    return
                }
                continuation.resume(with: Result { try body(conn) })
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
private final class Lifecycle: Sendable {
    private let state = Mutex<(ended: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    var ended: Bool { state.withLock { $0.ended } }

    /// Marks the thread stopped and resumes the waiters.
    func markEnded() {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
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
