import CDBus
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A peer-to-peer D-Bus server: a listening socket whose connections skip the bus daemon.
///
/// Clients authenticate with EXTERNAL only, and the server accepts only processes of its own
/// user, checked with the kernel's peer credentials (`SO_PEERCRED`) before anything is read;
/// others are closed at once and reported to `refused`. The server's thread also serves every
/// connection it accepts (one thread for them all: a call arriving from one peer that calls
/// another is sent, and its reply resumes, with no other thread woken); each reaches only what is
/// exported on it until
/// ``Connection/bind(to:serving:)`` makes it speak for a bus name and reach that bus connection's
/// objects.
///
/// libdbus: `dbus_server_listen`, `dbus_server_set_new_connection_function`.
public final class PeerServer: Sendable {
    private let endpoint: LoopEndpoint
    private let lifecycle: Lifecycle

    /// The address clients connect to (`unix:path=…,guid=…`).
    public let address: String
    /// Whether this library serves the connections itself (``WireTransport``), not libdbus.
    let servesItself: Bool

    /// Listens on `address`.
    ///
    /// - Parameters:
    ///   - address: a D-Bus server address, such as `unix:path=/run/user/1000/ferry/direct`.
    ///   - name: the bus name accepted connections speak for until bound (their ``Connection/uniqueName``).
    ///   - accepted: called with each connection of this user, before it reads anything; export
    ///     what an unbound connection may call on it here, and keep it (a connection released is
    ///     closed).
    ///   - refused: called with the credentials of a process of another user (nil when the kernel
    ///     could not tell) whose connection was closed.
    ///   - authenticationTimeout: how long a client has to authenticate before its connection is
    ///     closed (as dbus-daemon's `auth_timeout`); with this library's transport only.
    /// - Throws: `DBusError` when the address is invalid or cannot be listened on (a socket file
    ///   already there, say).
    public init(listeningOn address: String, name: BusName, accepted: @escaping @Sendable (Connection) -> Void,
                refused: @escaping @Sendable (PeerProcess?) -> Void,
                authenticationTimeout: Duration = .seconds(30)) async throws {
        let loop = try ConnectionLoop()
        let endpoint = LoopEndpoint(loop: loop)
        let lifecycle = Lifecycle()
        let ownUID = UInt32(geteuid())
        let wireAddress = PeerTransport.servesItself ? try PeerAddress(address) : nil
        let listening: String = try await withCheckedThrowingContinuation { continuation in
            do {
                try loop.start(open: {
                    do {
                        loop.add(endpoint)
                        endpoint.finished = { lifecycle.markEnded() }
                        endpoint.acceptedWire = { transport, process in
                            guard let process, process.uid == ownUID else {
                                refused(process)
                                return
                            }
                            _ = try? Connection.accepted(transport, on: loop, serving: name,
                                                         link: PeerLink(process: process),
                                                         authenticationTimeout: authenticationTimeout, prepare: accepted)
                        }
                        endpoint.accepted = { conn in
                            let process = PeerProcess(socketOf: conn)
                            guard let process, process.uid == ownUID else {
                                dbus_connection_close(conn)
                                refused(process)
                                return
                            }
                            dbus_connection_ref(conn)
                            do {
                                _ = try Connection.accepted(conn, on: loop, serving: name, link: PeerLink(process: process),
                                                            prepare: accepted)
                            } catch {
                                dbus_connection_close(conn)
                                dbus_connection_unref(conn)
                            }
                        }
                        if let wireAddress {
                            continuation.resume(returning: try endpoint.listenWire(wireAddress))
                        } else {
                            continuation.resume(returning: try endpoint.listen(address))
                        }
                    } catch {
                        endpoint.end(with: DBusError(.disconnected, "listen failed"))
                        continuation.resume(throwing: error)
                    }
                })
            } catch {
                continuation.resume(throwing: error)
            }
        }
        self.endpoint = endpoint
        self.lifecycle = lifecycle
        self.address = listening
        servesItself = wireAddress != nil
    }

    /// Stops listening and waits until it has (connections already accepted stay open, served
    /// by the same thread until they close).
    public func close() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            guard lifecycle.addWaiter(continuation) else { return }
            endpoint.loop.submit { [endpoint] in endpoint.end(with: .closedLocally) }
        }
    }

    deinit {
        endpoint.loop.submit { [endpoint] in endpoint.end(with: .closedLocally) }
    }
}

/// The kernel's account of the process at the other end of a peer-to-peer connection, taken
/// when it connected (`SO_PEERCRED`).
public struct PeerProcess: Sendable, Hashable {
    /// The effective user id.
    public var uid: UInt32
    /// The process id.
    public var pid: UInt32

    /// The credentials of `conn`'s socket's peer; nil when there is no socket or the kernel
    /// does not say.
    init?(socketOf conn: OpaquePointer) {
        var fd: Int32 = -1
        guard dbus_connection_get_socket(conn, &fd) != 0, fd >= 0 else { return nil }
        self.init(socket: fd)
    }

    /// The credentials of the peer of the unix socket `fd`.
    init?(socket fd: Int32) {
        var uid: UInt32 = 0, pid: Int32 = 0
        guard cdbus_peer_credentials(fd, &uid, &pid) == 0, pid > 0 else { return nil }
        self.uid = uid
        self.pid = UInt32(pid)
    }
}
