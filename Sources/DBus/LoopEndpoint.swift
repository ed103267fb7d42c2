import CDBus
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One connection, or one listening server, served by a ``ConnectionLoop``: its messages, its
/// end, and the callbacks the connection above it installs. A connection is libdbus's, or a
/// peer-to-peer socket this library serves itself (``WireTransport``); a server likewise.
///
/// A bus connection has a loop to itself. A ``PeerServer``'s loop also serves every connection
/// it accepts: one thread for them all, so a call from one peer that calls another (the broker
/// asking a source app for a promise, a drop target for its proposal) is sent from the thread
/// it arrived on, and its reply resumes the caller there, with no thread woken in between.
final class LoopEndpoint: @unchecked Sendable {
    // Thread safety: everything but `loop` is used only on the loop's owner thread.
    let loop: ConnectionLoop
    /// The connection, nil before open and after the end.
    private(set) var connection: OpaquePointer?
    /// The listening server, when this endpoint is one instead of a connection.
    private var server: OpaquePointer?
    /// The socket of a connection this library serves itself, instead of `connection`.
    private(set) var wire: WireTransport?
    /// Messages read from `wire` and not dispatched yet.
    private var inbox: [WireMessage] = []
    /// The listening socket of a server whose connections are ``WireTransport``s.
    private var listener: WireListener?
    /// Set while `listener` is not polled: accepting failed for want of fds, and a client still
    /// waiting would make every poll return at once.
    private var listenerRests = false
    /// How long the listener rests after accepting failed for want of fds.
    static let listenerRestMs: Int32 = 100
    /// Set when the connection drops during dispatch; acted on once dispatch returns.
    private var lostWith: DBusError?
    /// Whether messages may be waiting for dispatch: set when libdbus reports them (its dispatch
    /// status function) and when adopted, taken by the loop before it dispatches.
    private let needsDispatch = Atomic<Bool>(true)

    /// Called for every incoming message; returns true when handled.
    var incoming: ((Message) -> Bool)?
    /// Called once when the connection ends (closed or lost), before ``finished``.
    var teardown: ((DBusError) -> Void)?
    /// Called with each connection the server accepts (not yet referenced).
    var accepted: ((OpaquePointer) -> Void)?
    /// Called with each connection a ``WireListener`` accepts (nothing read from it yet) and the
    /// kernel's credentials of its peer; a connection not kept is closed.
    var acceptedWire: ((WireTransport, PeerProcess?) -> Void)?
    /// Called once when the endpoint has ended.
    var finished: (@Sendable () -> Void)?

    init(loop: ConnectionLoop) {
        self.loop = loop
    }

    /// Whether the endpoint still serves a connection or a server.
    var isOpen: Bool { connection != nil || server != nil || wire != nil || listener != nil }

    /// Connects to `address`, adopts the connection and registers with the bus (`Hello`).
    ///
    /// Runs on the owner thread before the loop polls it, so the blocking `Hello` round trip
    /// cannot race any other use of the connection.
    /// - Returns: the unique name the bus assigned.
    func openAndRegister(_ address: String) throws -> String {
        let conn = try DBusError.check { dbus_connection_open_private(address, $0) }
        guard let conn else { throw DBusError(.failed, "cannot connect to \(address)") }
        adopt(conn)
        let registered = try DBusError.check { dbus_bus_register(conn, $0) }
        guard registered != 0, let unique = dbus_bus_get_unique_name(conn) else {
            throw DBusError(.failed, "cannot register with the bus at \(address)")
        }
        return String(cString: unique)
    }

    /// Connects to the bus at `address` over a socket this library serves itself
    /// (``WireTransport``), registers with it (`Hello`) and adopts the connection; what the bus
    /// sent with the reply is dispatched in the loop's first round.
    ///
    /// Runs on the owner thread before the loop polls it, as ``openAndRegister(_:)``.
    /// - Returns: the unique name the bus assigned.
    func openWireBus(_ address: PeerAddress) throws -> String {
        let transport = try WireTransport.connect(to: address)
        let (name, received) = try transport.register()
        adopt(transport)
        inbox.append(contentsOf: received)
        if !inbox.isEmpty { requestDispatch() }
        return name
    }

    /// Connects to the peer at `address` and adopts the connection, without registering with
    /// a bus (a peer-to-peer connection has no bus, no `Hello` and no names).
    func openPeer(_ address: String) throws {
        let conn = try DBusError.check { dbus_connection_open_private(address, $0) }
        guard let conn else { throw DBusError(.failed, "cannot connect to \(address)") }
        adopt(conn)
    }

    /// Connects to the peer at `address` through a ``WireTransport`` (authenticating before it
    /// returns) and serves it.
    func openWirePeer(_ address: PeerAddress) throws {
        adopt(try WireTransport.connect(to: address))
    }

    /// Serves `transport` (a connection accepted, or one just connected). One accepted whose peer
    /// has not authenticated within `authenticationTimeout` is closed (`AuthFailed`).
    func adopt(_ transport: WireTransport, authenticationTimeout: Duration? = nil) {
        wire = transport
        guard let authenticationTimeout, !transport.isAuthenticated else { return }
        let ms = Connection.milliseconds(authenticationTimeout)
        guard ms > 0 else { return }  // longer than a timer holds: no deadline
        loop.addTimer(of: self, milliseconds: ms) { [weak self] in
            guard let self, let wire = self.wire, !wire.isAuthenticated, self.lostWith == nil else { return }
            self.lostWith = DBusError(.authFailed, "the peer did not authenticate within \(authenticationTimeout)")
            self.requestDispatch()
        }
    }

    /// Listens on `address` for peer-to-peer connections served by ``WireTransport`` and hands
    /// each new one to ``acceptedWire``.
    /// - Returns: the address clients connect to (with the server's guid).
    func listenWire(_ address: PeerAddress) throws -> String {
        let listener = try WireListener(address)
        self.listener = listener
        return listener.address
    }

    /// The descriptor the loop polls for this endpoint's own socket, and for what; nil for
    /// libdbus's (polled through its watches).
    var pollEntry: pollfd? {
        if let wire {
            let events = (wire.pausesReading ? 0 : Int16(POLLIN)) | (wire.wantsToWrite ? Int16(POLLOUT) : 0)
            return pollfd(fd: wire.fd, events: events, revents: 0)
        }
        if let listener, !listenerRests { return pollfd(fd: listener.fd, events: Int16(POLLIN), revents: 0) }
        return nil
    }

    /// Handles what `poll` found on ``pollEntry``: accepts, writes, reads. A failure ends the
    /// connection once the messages read before it are dispatched.
    func handle(_ revents: Int16) {
        if let listener {
            let (sockets, exhausted) = listener.acceptAll()
            for (fd, process) in sockets {
                // EXTERNAL accepts only the uid the kernel gives (none when it gives none).
                let transport = WireTransport.accepted(fd, uid: process?.uid ?? UInt32.max, guid: listener.guid)
                acceptedWire?(transport, process)
            }
            if exhausted {
                listenerRests = true
                loop.addTimer(of: listener, milliseconds: Self.listenerRestMs) { [weak self] in self?.listenerRests = false }
            }
            return
        }
        guard let wire, lostWith == nil else { return }
        do {
            if revents & Int16(POLLOUT) != 0 { try wire.writable() }
            if revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                let (messages, failure) = wire.readable()
                inbox.append(contentsOf: messages)
                if let failure { throw failure }
            }
        } catch {
            lostWith = DBusError(converting: error)
        }
        if !inbox.isEmpty || lostWith != nil { requestDispatch() }
    }

    /// Takes ownership of an opened connection (referenced for this endpoint: one a
    /// ``PeerServer`` accepted, or one just opened) and hooks its watches, timeouts and messages.
    func adopt(_ conn: OpaquePointer) {
        connection = conn
        let loopData = Unmanaged.passUnretained(loop).toOpaque()
        let me = Unmanaged.passUnretained(self).toOpaque()
        dbus_connection_set_exit_on_disconnect(conn, 0)
        _ = dbus_connection_set_watch_functions(conn, ConnectionLoop.addWatch, ConnectionLoop.removeWatch,
                                                ConnectionLoop.toggleWatch, loopData, nil)
        _ = dbus_connection_set_timeout_functions(conn, ConnectionLoop.addTimeout, ConnectionLoop.removeTimeout,
                                                  ConnectionLoop.toggleTimeout, loopData, nil)
        dbus_connection_set_wakeup_main_function(conn, { data in
            // libdbus asks for a wake-up when it has new work for the loop (a message queued to
            // send or to dispatch). Called on the owner thread, from inside a libdbus call the
            // loop made, it needs none: the loop dispatches and re-reads the watches before it
            // polls again. (libdbus is only ever called on the owner thread.)
            let loop = Unmanaged<ConnectionLoop>.fromOpaque(data!).takeUnretainedValue()
            if !loop.onOwnerThread { loop.wake() }
        }, loopData, nil)
        requestDispatch()
        dbus_connection_set_dispatch_status_function(conn, { _, status, data in
            guard status.rawValue == UInt32(CDBUS_DISPATCH_DATA_REMAINS) else { return }
            Unmanaged<LoopEndpoint>.fromOpaque(data!).takeUnretainedValue().requestDispatch()
        }, me, nil)
        _ = dbus_connection_add_filter(conn, { _, message, data in
            let endpoint = Unmanaged<LoopEndpoint>.fromOpaque(data!).takeUnretainedValue()
            guard let message else { return DBusHandlerResult(UInt32(CDBUS_HANDLER_RESULT_NOT_YET_HANDLED)) }
            let handled = endpoint.receive(message)
            return DBusHandlerResult(UInt32(handled ? CDBUS_HANDLER_RESULT_HANDLED : CDBUS_HANDLER_RESULT_NOT_YET_HANDLED))
        }, me, nil)
    }

    /// Listens on `address` for peer-to-peer connections (EXTERNAL authentication only) and
    /// hands each new one to ``accepted``.
    /// - Returns: the address clients connect to.
    func listen(_ address: String) throws -> String {
        let server = try DBusError.check { dbus_server_listen(address, $0) }
        guard let server else { throw DBusError(.failed, "cannot listen on \(address)") }
        self.server = server
        let loopData = Unmanaged.passUnretained(loop).toOpaque()
        let me = Unmanaged.passUnretained(self).toOpaque()
        let external = strdup("EXTERNAL")
        defer { free(external) }
        var mechanisms: [UnsafePointer<CChar>?] = [UnsafePointer(external), nil]
        _ = mechanisms.withUnsafeMutableBufferPointer { dbus_server_set_auth_mechanisms(server, $0.baseAddress) }
        _ = dbus_server_set_watch_functions(server, ConnectionLoop.addWatch, ConnectionLoop.removeWatch,
                                            ConnectionLoop.toggleWatch, loopData, nil)
        _ = dbus_server_set_timeout_functions(server, ConnectionLoop.addTimeout, ConnectionLoop.removeTimeout,
                                              ConnectionLoop.toggleTimeout, loopData, nil)
        dbus_server_set_new_connection_function(server, { _, conn, data in
            let endpoint = Unmanaged<LoopEndpoint>.fromOpaque(data!).takeUnretainedValue()
            // Not referenced here, a connection is closed and freed when this returns.
            guard let conn, let accepted = endpoint.accepted else { return }
            accepted(conn)
        }, me, nil)
        guard let text = dbus_server_get_address(server) else { return address }
        defer { dbus_free(text) }
        return String(cString: text)
    }

    /// Sends `message` on the connection's ``WireTransport``; false when it has none.
    /// - Throws: `DBusError` when the socket failed or the message cannot go (unix fds the peer
    ///   did not agree to).
    func sendOnWire(_ message: Message, markingNoReply: Bool = false) throws -> Bool {
        guard let wire else { return false }
        do {
            try wire.send(try message.wireForm(), markingNoReply: markingNoReply)
        } catch let error as DBusError where error.name == .disconnected {
            // Ends the connection once what was read before is dispatched.
            if lostWith == nil { lostWith = error }
            requestDispatch()
            throw error
        }
        return true
    }

    private func receive(_ raw: OpaquePointer) -> Bool {
        let message = Message(taking: dbus_message_ref(raw))
        // The type first: it spares every method call and reply the two string comparisons.
        if dbus_message_get_type(raw) == CDBUS_MESSAGE_TYPE_SIGNAL,
           dbus_message_is_signal(raw, DBUS_INTERFACE_LOCAL, "Disconnected") != 0 {
            lostWith = DBusError(.disconnected, "the connection to the bus was lost")
            return true
        }
        return incoming?(message) ?? false
    }

    /// Notes that messages may be waiting: the loop dispatches them in its next round.
    func requestDispatch() {
        needsDispatch.store(true, ordering: .relaxed)
    }

    /// Takes the request made by ``requestDispatch()``: true when there was one.
    func takeDispatchRequest() -> Bool {
        needsDispatch.exchange(false, ordering: .relaxed)
    }

    /// Dispatches the connection's queued messages; ends the endpoint if it was lost meanwhile.
    func dispatch() {
        if wire != nil {
            dispatchInbox()
            return
        }
        guard let conn = connection else { return }
        while lostWith == nil, dbus_connection_dispatch(conn).rawValue == UInt32(CDBUS_DISPATCH_DATA_REMAINS) {}
        if let error = lostWith {
            lostWith = nil
            end(with: error)
        }
    }

    /// Hands the messages read from `wire` to ``incoming``, in order; then ends the connection if
    /// it failed meanwhile.
    private func dispatchInbox() {
        var index = 0
        while index < inbox.count, wire != nil {
            let message = Message(inbox[index])
            index += 1
            _ = incoming?(message)
        }
        inbox.removeFirst(min(index, inbox.count))
        if wire != nil, let error = lostWith {
            lostWith = nil
            end(with: error)
        }
    }

    /// Closes the connection (if open), fails everything pending, stops listening, and leaves
    /// the loop (which stops with its last endpoint). Safe to call again: it then does nothing.
    func end(with error: DBusError) {
        if connection != nil || wire != nil {
            let handler = teardown
            teardown = nil
            incoming = nil
            handler?(error)
        }
        // Replies and signals already queued go out before a local close.
        let flush = error == DBusError.closedLocally
        if let conn = connection {
            if flush { dbus_connection_flush(conn) }
            dbus_connection_close(conn)
            dbus_connection_unref(conn)
            connection = nil
        }
        if let wire {
            loop.removeTimer(of: self)
            if flush { wire.flush(timeoutMs: 1000) }
            self.wire = nil // closes the socket
            inbox = []
        }
        if let listener {
            loop.removeTimer(of: listener)
            acceptedWire = nil
            listener.close()
            self.listener = nil
        }
        if let server {
            accepted = nil
            dbus_server_disconnect(server)
            dbus_server_unref(server)
            self.server = nil
        }
        loop.removeEndpoint(self)
        let done = finished
        finished = nil
        done?()
    }
}
