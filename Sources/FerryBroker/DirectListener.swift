import BrokerCore
import DBus
import FerryBus
import FerryModel
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// ferryd's peer-to-peer socket: direct connections that skip dbus-daemon's two hops on the hot
/// paths, each bound to the bus identity of the client that asked for it.
///
/// A client asks over the bus (`Broker1.OpenDirect`) for the address and a one-time token,
/// connects, and presents the token as its first call (`org.ferry.Direct1.Bind`). From then on
/// every call on that connection arrives as if the client's bus connection had sent it: same
/// unique name, so the same credentials, app registration, access rules and paste policy.
/// The socket is `$XDG_RUNTIME_DIR/ferry/direct-<hash of the bus address>` in a 0700 folder,
/// itself 0600; the kernel's peer credentials keep other users out before they say anything.
package final class DirectListener: Sendable {
    /// The interface an unbound direct connection serves.
    package static let interfaceName: InterfaceName = "org.ferry.Direct1"
    /// Where it serves it.
    package static let path: ObjectPath = "/org/ferry/Direct"
    /// Its version (its `Version` property).
    package static let version: UInt32 = 2
    /// How long a token stays good by default.
    package static let defaultTokenLifetime: Duration = .seconds(10)
    /// How long a connection may stay unbound before it is closed.
    static let bindTimeout: Duration = .seconds(10)
    /// The most tokens one bus connection may hold unused.
    static let tokensPerCaller = 8

    private let bus: Connection
    private let ownUID: UInt32
    private let tokenLifetime: Duration
    private let socketPath: String?
    private let logger: Logger
    private let state = Mutex(State())

    private struct State {
        var server: PeerServer?
        var tokens: [[UInt8]: Grant] = [:]
        /// Bound connections by the bus name they speak for.
        var bound: [String: [Connection]] = [:]
        /// The bound connections whose client serves its `Client1` calls on them, by bus name.
        var callbacks: [String: Callbacks] = [:]
    }

    /// A connection a client serves its `Client1` calls on, and whether it answers `ProvideBytes`.
    struct Callbacks {
        var connection: Connection
        var providesBytes: Bool
    }

    /// What a token grants: the bus caller who asked, until when.
    private struct Grant {
        var name: BusName
        var uid: UInt32
        var expires: ContinuousClock.Instant
    }

    /// Prepares the listener for the bus at `busAddress`; ``open()`` starts listening.
    /// - Parameters:
    ///   - bus: the broker's bus connection, whose objects bound connections reach.
    ///   - busAddress: names the socket (its hash), so ferryds of different buses never share one.
    ///   - runtimeDirectory: `$XDG_RUNTIME_DIR`; nil or empty: no direct connections.
    ///   - tokenLifetime: how long a token stays good.
    ///   - logger: gets refusals (warnings), failures to listen (errors) and connections bound (debug).
    package init(bus: Connection, busAddress: String, runtimeDirectory: String?, ownUID: UInt32,
                tokenLifetime: Duration = defaultTokenLifetime, logger: Logger) {
        self.bus = bus
        self.ownUID = ownUID
        self.tokenLifetime = tokenLifetime
        self.logger = logger
        if let runtimeDirectory, !runtimeDirectory.isEmpty {
            socketPath = "\(runtimeDirectory)/ferry/direct-\(Self.hash(busAddress))"
        } else {
            socketPath = nil
        }
    }

    /// The listener for ferryd's bus, its socket under `$XDG_RUNTIME_DIR`; not listening yet.
    package convenience init(bus: Connection, busAddress: String, tokenLifetime: Duration = defaultTokenLifetime,
                            logger: Logger) {
        let runtime = getenv("XDG_RUNTIME_DIR").map { String(cString: $0) }
        self.init(bus: bus, busAddress: busAddress, runtimeDirectory: runtime, ownUID: getuid(), tokenLifetime: tokenLifetime,
                  logger: logger)
    }

    /// The address clients connect to, listening first when not yet (a live socket of another
    /// ferryd still in place at start-up, say); nil when there is none.
    package func open() async -> String? {
        if let server = state.withLock({ $0.server }) { return server.address }
        guard let socketPath else { return nil }
        do {
            try Self.prepare(socketPath)
        } catch {
            logger.error("direct connections off: \(error)")
            return nil
        }
        do {
            let server = try await PeerServer(
                listeningOn: "unix:path=\(Self.escaped(socketPath))", name: bus.uniqueName,
                accepted: { [weak self] connection in self?.accepted(connection) },
                refused: { [logger] process in
                    logger.warning("refused a direct connection of another user",
                                   metadata: ["uid": "\(process.map { String($0.uid) } ?? "?")", "pid": "\(process.map { String($0.pid) } ?? "?")"])
                })
            chmod(socketPath, 0o600)
            let kept = state.withLock { s -> PeerServer in
                if let existing = s.server { return existing }
                s.server = server
                return server
            }
            if kept !== server { await server.close() }
            return kept.address
        } catch {
            logger.error("direct connections off: cannot listen on \(socketPath): \(error)")
            return nil
        }
    }

    /// Stops listening, closes every direct connection and removes the socket.
    package func close() async {
        let (server, connections) = state.withLock { s in
            defer { s = State() }
            return (s.server, s.bound.values.flatMap { $0 })
        }
        guard let server else { return }
        await server.close()
        if let socketPath { unlink(socketPath) }
        for connection in connections { await connection.close(gracePeriod: .zero) }
    }

    /// A one-time token for `caller` and the address to present it at (`Broker1.OpenDirect`).
    /// - Throws: `FerryModelError` `.unavailable` when this broker has no socket;
    ///   `.permissionDenied` past ``tokensPerCaller`` unused tokens.
    func grant(to caller: Caller) async throws -> (address: String, token: [UInt8]) {
        guard let address = await open() else {
            throw FerryModelError(.unavailable, "this broker serves no direct connections"
                                  + (socketPath == nil ? " (XDG_RUNTIME_DIR is not set)" : ""))
        }
        var generator = SystemRandomNumberGenerator()
        let token = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let now = ContinuousClock.now
        try state.withLock { s in
            s.tokens = s.tokens.filter { $0.value.expires > now }
            guard s.tokens.values.count(where: { $0.name.rawValue == caller.uniqueName }) < Self.tokensPerCaller else {
                throw FerryModelError(.permissionDenied, "\(caller.uniqueName) holds \(Self.tokensPerCaller) unused direct tokens already")
            }
            s.tokens[token] = Grant(name: try BusName(caller.uniqueName), uid: caller.uid,
                                    expires: now + tokenLifetime)
        }
        return (address, token)
    }

    /// The direct connection to call `uniqueName`'s `Client1` object over, when it bound one
    /// with `callbacks` and it is still open; nil: call it over the bus.
    package func callbackConnection(for uniqueName: String) -> Connection? {
        callbacks(for: uniqueName)?.connection
    }

    /// ``callbackConnection(for:)``, when its client also answers `Client1.ProvideBytes` (it bound
    /// with `provideBytes`).
    package func bytesConnection(for uniqueName: String) -> Connection? {
        callbacks(for: uniqueName).flatMap { $0.providesBytes ? $0.connection : nil }
    }

    private func callbacks(for uniqueName: String) -> Callbacks? {
        state.withLock { s in
            guard let callbacks = s.callbacks[uniqueName], callbacks.connection.isConnected else { return nil }
            return callbacks
        }
    }

    /// Forgets a bus connection that left: its tokens, and its direct connections, closed.
    package func connectionClosed(_ uniqueName: String) async {
        let closing = state.withLock { s -> [Connection] in
            s.tokens = s.tokens.filter { $0.value.name.rawValue != uniqueName }
            s.callbacks[uniqueName] = nil
            return s.bound.removeValue(forKey: uniqueName) ?? []
        }
        for connection in closing { await connection.close(gracePeriod: .zero) }
    }

    /// A new connection of this user: serve `Direct1` on it until it binds, for a while.
    private func accepted(_ connection: Connection) {
        do {
            try connection.export(gate, at: Self.path)
        } catch {
            Task { await connection.close(gracePeriod: .zero) }
            return
        }
        // This task holds the connection until it binds (then ``bind(_:token:)``'s table holds
        // it) or its time is up: a connection released is closed.
        Task {
            try? await Task.sleep(for: Self.bindTimeout)
            guard connection.boundName == nil else { return }
            await connection.close(gracePeriod: .zero)
        }
    }

    /// Binds `connection` to the bus caller `token` was granted to; refused (and the connection
    /// closed) when the token is unknown, used, expired, or granted to another uid than the
    /// connection's peer.
    private func bind(_ connection: Connection, token: [UInt8], callbacks: Bool, providesBytes: Bool) throws {
        let now = ContinuousClock.now
        let grant = state.withLock { $0.tokens.removeValue(forKey: token) }
        guard let grant, grant.expires > now else {
            throw FerryModelError(.permissionDenied, "the direct token is unknown, used already or expired")
        }
        guard let process = connection.peerProcess, process.uid == grant.uid, process.uid == ownUID else {
            throw FerryModelError(.permissionDenied, "the direct token was granted to another user")
        }
        try connection.bind(to: grant.name, serving: bus)
        logger.debug("direct connection bound to \(grant.name)", metadata: ["pid": "\(process.pid)"])
        state.withLock { s in
            var list = (s.bound[grant.name.rawValue] ?? []).filter(\.isConnected)
            list.append(connection)
            s.bound[grant.name.rawValue] = list
            if callbacks { s.callbacks[grant.name.rawValue] = Callbacks(connection: connection, providesBytes: providesBytes) }
        }
    }

    private var gate: Interface {
        Interface(Self.interfaceName) {
            Property("Version", "u", get: { _ in .uint32(Self.version) })
            Method("Bind", in: ["token": "ay", "options": "a{sv}"]) { [weak self] call in
                guard let self else { throw FerryModelError(.unavailable, "the broker is shutting down") }
                do {
                    let (token, options) = try call.arguments([UInt8].self, VariantDictionary.self)
                    let reader = WireReader(dbus: options, path: "options")
                    try bind(call.connection, token: token, callbacks: try reader.bool("callbacks") ?? false,
                             providesBytes: try reader.bool("provideBytes") ?? false)
                } catch {
                    logger.warning("refused a direct connection: \(error)",
                                   metadata: ["pid": "\(call.connection.peerProcess.map { String($0.pid) } ?? "?")"])
                    // After the refusal's reply: nothing but Bind was possible on it anyway.
                    let connection = call.connection
                    Task { await connection.close(gracePeriod: .seconds(1)) }
                    throw error
                }
                return []
            }
        }
    }

    /// Makes the socket's folder (0700, ours) and removes a stale socket a dead ferryd left; a
    /// live one (another ferryd still serving this bus) is never replaced.
    /// - Throws: `FerryModelError` `.unavailable` naming what is in the way.
    static func prepare(_ socketPath: String) throws {
        let folder = String(socketPath[..<socketPath.lastIndex(of: "/")!])
        if mkdir(folder, 0o700) != 0 && errno != EEXIST {
            throw FerryModelError(.unavailable, "cannot create \(folder): \(String(cString: strerror(errno)))")
        }
        var info = stat()
        guard lstat(folder, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR, info.st_uid == geteuid() else {
            throw FerryModelError(.unavailable, "\(folder) is not a folder of this user")
        }
        if info.st_mode & 0o077 != 0 { chmod(folder, 0o700) }
        guard lstat(socketPath, &info) == 0 else { return }
        guard (info.st_mode & S_IFMT) == S_IFSOCK else {
            throw FerryModelError(.unavailable, "\(socketPath) is in the way and not a socket")
        }
        guard !isLive(socketPath) else {
            throw FerryModelError(.unavailable, "another ferryd is listening on \(socketPath)")
        }
        unlink(socketPath)
    }

    /// Whether something accepts connections on the unix socket at `path`.
    static func isLive(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { Glibc.close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (i, byte) in bytes.enumerated() { buffer[i] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return result == 0
    }

    /// FNV-1a (64 bits) of `text`, in hex: short, stable across runs, and the same in every process.
    static func hash(_ text: String) -> String {
        var value: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            value ^= UInt64(byte)
            value &*= 0x0000_0100_0000_01b3
        }
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// `path` escaped for a D-Bus address value (bytes outside `[-0-9A-Za-z_/.\*]` as `%xx`).
    static func escaped(_ path: String) -> String {
        var result = ""
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "/"), UInt8(ascii: "."), UInt8(ascii: "\\"), UInt8(ascii: "*"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16)
                result += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return result
    }
}
