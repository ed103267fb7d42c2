import CDBus
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The one thread that owns a libdbus connection.
///
/// Every libdbus call on the connection happens on this thread: other threads hand it closures
/// through `submit(_:)` (a mutex-protected queue plus an eventfd write). The thread polls the
/// connection's watches (read and write, so big messages drain), its timeouts and the eventfd.
/// This avoids the libdbus traps measured in `reference/libdbus-from-swift.md`: a thread blocked
/// in `read_write_dispatch` hanging another thread's call, and `set_notify` racing a reply.
final class ConnectionLoop: @unchecked Sendable {
    // Thread safety: `queue` is guarded by its mutex; `wakeFD` is immutable; every other stored
    // property is read and written only on the owner thread.
    private let queue = Mutex<Queue>(Queue())
    private let wakeFD: Int32
    /// The owner thread's id (`pthread_self`), 0 before it starts.
    private let ownerThread = Atomic<UInt>(0)

    /// The connection, nil before open and after close. Owner thread only.
    private(set) var connection: OpaquePointer?
    private var watches: [OpaquePointer] = []
    /// libdbus's timeouts and when each next fires (monotonic nanoseconds). Usually one or two
    /// (one per pending call), so a plain array beats a dictionary.
    private var timeouts: [(timeout: OpaquePointer, deadline: Int64)] = []
    private var pollSet: [pollfd] = []
    private var pollOwners: [OpaquePointer?] = []
    /// Spare storage for `runJobs`, swapped with the queue's.
    private var spareJobs: [Work] = []
    private var running = true
    /// Set when the bus connection drops during dispatch; acted on once dispatch returns.
    private var lostWith: DBusError?
    private var finished: (@Sendable () -> Void)?

    /// Called on the owner thread for every incoming message; returns true when handled.
    var incoming: ((Message) -> Bool)?
    /// Called once on the owner thread when the connection ends (closed or lost).
    var teardown: ((DBusError) -> Void)?
    /// The listening server, when this loop serves one instead of a connection. Owner thread only.
    private var server: OpaquePointer?
    /// Called on the owner thread with each connection the server accepts (not yet referenced).
    var accepted: ((OpaquePointer) -> Void)?
    /// Tasks waiting for a descriptor, polled beside the connection's (``DescriptorWait``).
    /// Owner thread only.
    var descriptorWaits: [DescriptorWait] = []

    init() throws(DBusError) {
        let fd = cdbus_eventfd()
        guard fd >= 0 else { throw DBusError.system("eventfd", errno: cdbus_errno()) }
        wakeFD = fd
    }

    deinit { close(wakeFD) }

    // MARK: Any thread

    /// Queues `job` to run on the owner thread. Returns false once the loop has stopped.
    @discardableResult
    func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        submit(.closure(job))
    }

    /// Queues one unit of work; see `submit(_:)`.
    func submit(_ job: Work) -> Bool {
        let (accepted, asleep) = queue.withLock { q -> (Bool, Bool) in
            guard q.accepting else { return (false, false) }
            q.jobs.append(job)
            defer { q.sleeping = false }
            return (true, q.sleeping)
        }
        // Only a loop asleep in `poll` needs the eventfd: one that is running looks at the queue
        // before it polls again (so the owner thread never wakes itself, and a busy loop costs
        // its submitters no syscall), and the first submitter's wake-up serves the others.
        if asleep { wake() }
        return accepted
    }

    /// Whether the loop still serves a connection or a server. Owner thread only.
    var hasEndpoint: Bool { running && (connection != nil || server != nil) }

    /// Whether the caller is the owner thread.
    var onOwnerThread: Bool { ownerThread.load(ordering: .relaxed) == UInt(pthread_self()) }

    private var hasQueuedJobs: Bool { queue.withLock { !$0.jobs.isEmpty } }

    /// Wakes the owner thread from `poll`.
    func wake() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { write(wakeFD, $0.baseAddress, 8) }
    }

    /// Starts the owner thread, which runs `open` first and then the loop until close.
    /// `finished` runs on the owner thread just before it exits.
    func start(open: @escaping @Sendable () -> Void, finished: @escaping @Sendable () -> Void) throws(DBusError) {
        self.finished = finished
        submit(open)
        let box = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, { arg in
            let loop = Unmanaged<ConnectionLoop>.fromOpaque(arg!).takeRetainedValue()
            loop.run()
            return nil
        }, box)
        guard rc == 0 else {
            Unmanaged<ConnectionLoop>.fromOpaque(box).release()
            throw DBusError.system("pthread_create", errno: rc)
        }
        pthread_detach(thread)
    }

    // MARK: Owner thread

    /// Connects to `address`, adopts the connection and registers with the bus (`Hello`).
    ///
    /// Runs on the owner thread before the loop starts, so the blocking `Hello` round trip
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

    /// Connects to the peer at `address` and adopts the connection, without registering with
    /// a bus (a peer-to-peer connection has no bus, no `Hello` and no names).
    func openPeer(_ address: String) throws {
        let conn = try DBusError.check { dbus_connection_open_private(address, $0) }
        guard let conn else { throw DBusError(.failed, "cannot connect to \(address)") }
        adopt(conn)
    }

    /// Adopts a connection a ``PeerServer`` accepted (referenced by the caller for this loop).
    func adoptAccepted(_ conn: OpaquePointer) {
        adopt(conn)
    }

    /// Takes ownership of an opened connection and hooks its watches, timeouts and messages.
    private func adopt(_ conn: OpaquePointer) {
        connection = conn
        let me = Unmanaged.passUnretained(self).toOpaque()
        dbus_connection_set_exit_on_disconnect(conn, 0)
        _ = dbus_connection_set_watch_functions(conn, Self.addWatch, Self.removeWatch, Self.toggleWatch, me, nil)
        _ = dbus_connection_set_timeout_functions(conn, Self.addTimeout, Self.removeTimeout, Self.toggleTimeout, me, nil)
        dbus_connection_set_wakeup_main_function(conn, { data in
            // libdbus asks for a wake-up when it has new work for the loop (a message queued to
            // send or to dispatch). Called on the owner thread, from inside a libdbus call the
            // loop made, it needs none: the loop dispatches and re-reads the watches before it
            // polls again. (libdbus is only ever called on the owner thread.)
            let loop = Unmanaged<ConnectionLoop>.fromOpaque(data!).takeUnretainedValue()
            if !loop.onOwnerThread { loop.wake() }
        }, me, nil)
        _ = dbus_connection_add_filter(conn, { _, message, data in
            let loop = Unmanaged<ConnectionLoop>.fromOpaque(data!).takeUnretainedValue()
            guard let message else { return DBusHandlerResult(UInt32(CDBUS_HANDLER_RESULT_NOT_YET_HANDLED)) }
            let handled = loop.receive(message)
            return DBusHandlerResult(UInt32(handled ? CDBUS_HANDLER_RESULT_HANDLED : CDBUS_HANDLER_RESULT_NOT_YET_HANDLED))
        }, me, nil)
    }

    // The watch and timeout callbacks, shared by connections and servers (`data` is the loop).
    private static let addWatch: DBusAddWatchFunction = { watch, data in
        Unmanaged<ConnectionLoop>.fromOpaque(data!).takeUnretainedValue().watches.append(watch!)
        return 1
    }
    private static let removeWatch: DBusRemoveWatchFunction = { watch, data in
        let loop = Unmanaged<ConnectionLoop>.fromOpaque(data!).takeUnretainedValue()
        loop.watches.removeAll { $0 == watch }
    }
    private static let toggleWatch: DBusWatchToggledFunction = { _, data in
        // The loop reads each watch's enabled flag before it polls. libdbus may re-enable the
        // read watch from another thread (a message released there brings the connection
        // back under its receive limit): wake the loop so it polls that watch again.
        let loop = Unmanaged<ConnectionLoop>.fromOpaque(data!).takeUnretainedValue()
        if !loop.onOwnerThread { loop.wake() }
    }
    private static let addTimeout: DBusAddTimeoutFunction = { timeout, data in
        let loop = Unmanaged<ConnectionLoop>.fromOpaque(data!).takeUnretainedValue()
        loop.timeouts.append((timeout!, ConnectionLoop.deadline(of: timeout!)))
        return 1
    }
    private static let removeTimeout: DBusRemoveTimeoutFunction = { timeout, data in
        let loop = Unmanaged<ConnectionLoop>.fromOpaque(data!).takeUnretainedValue()
        if let i = loop.timeouts.firstIndex(where: { $0.timeout == timeout }) { loop.timeouts.remove(at: i) }
    }
    private static let toggleTimeout: DBusTimeoutToggledFunction = { timeout, data in
        let loop = Unmanaged<ConnectionLoop>.fromOpaque(data!).takeUnretainedValue()
        if let i = loop.timeouts.firstIndex(where: { $0.timeout == timeout }) {
            loop.timeouts[i].deadline = ConnectionLoop.deadline(of: timeout!)
        }
    }

    /// Listens on `address` for peer-to-peer connections (EXTERNAL authentication only) and
    /// hands each new one to ``accepted`` on the owner thread; the loop then serves the
    /// listening socket instead of a connection.
    /// - Returns: the address clients connect to.
    func listen(_ address: String) throws -> String {
        let server = try DBusError.check { dbus_server_listen(address, $0) }
        guard let server else { throw DBusError(.failed, "cannot listen on \(address)") }
        self.server = server
        let me = Unmanaged.passUnretained(self).toOpaque()
        let external = strdup("EXTERNAL")
        defer { free(external) }
        var mechanisms: [UnsafePointer<CChar>?] = [UnsafePointer(external), nil]
        _ = mechanisms.withUnsafeMutableBufferPointer { dbus_server_set_auth_mechanisms(server, $0.baseAddress) }
        _ = dbus_server_set_watch_functions(server, Self.addWatch, Self.removeWatch, Self.toggleWatch, me, nil)
        _ = dbus_server_set_timeout_functions(server, Self.addTimeout, Self.removeTimeout, Self.toggleTimeout, me, nil)
        dbus_server_set_new_connection_function(server, { _, conn, data in
            let loop = Unmanaged<ConnectionLoop>.fromOpaque(data!).takeUnretainedValue()
            // Not referenced here, a connection is closed and freed when this returns.
            guard let conn, let accepted = loop.accepted else { return }
            accepted(conn)
        }, me, nil)
        guard let text = dbus_server_get_address(server) else { return address }
        defer { dbus_free(text) }
        return String(cString: text)
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

    /// Closes the connection (if open), fails everything pending, and stops the loop.
    func end(with error: DBusError) {
        if let conn = connection {
            let handler = teardown
            teardown = nil
            incoming = nil
            handler?(error)
            // Replies and signals already queued go out before a local close.
            if error == DBusError.closedLocally { dbus_connection_flush(conn) }
            dbus_connection_close(conn)
            dbus_connection_unref(conn)
            connection = nil
        }
        if let server {
            accepted = nil
            dbus_server_disconnect(server)
            dbus_server_unref(server)
            self.server = nil
        }
        running = false
    }

    private func run() {
        ownerThread.store(UInt(pthread_self()), ordering: .relaxed)
        var rounds = 0
        while running {
            runJobs()
            guard running else { break }
            dispatch()
            guard running else { break }
            // Dispatching a reply usually resumes a task on this executor, which queues a job
            // here: run it (it typically sends the next call) without a poll first, but poll
            // at least every few rounds so I/O is never starved.
            if rounds < 4, hasQueuedJobs {
                rounds += 1
                continue
            }
            rounds = 0
            waitAndHandle()
        }
        // Refuse new jobs, then let the queued ones see the closed connection and fail.
        queue.withLock { $0.accepting = false; $0.sleeping = false }
        runJobs()
        for wait in descriptorWaits { wait.finish(.failure(DBusError(.disconnected, "the connection is closed"))) }
        descriptorWaits = []
        watches = []
        timeouts = []
        let done = finished
        finished = nil
        done?()
    }

    private func runJobs() {
        // Swap the queue's storage with a spare array so that neither allocates per round.
        var jobs = spareJobs
        spareJobs = []
        defer {
            jobs.removeAll(keepingCapacity: true)
            spareJobs = jobs
        }
        while true {
            queue.withLock { q in
                q.sleeping = false
                swap(&q.jobs, &jobs)
            }
            if jobs.isEmpty { return }
            for job in jobs { job.run(on: self) }
            jobs.removeAll(keepingCapacity: true)
        }
    }

    private func dispatch() {
        guard let conn = connection else { return }
        while lostWith == nil, dbus_connection_dispatch(conn).rawValue == UInt32(CDBUS_DISPATCH_DATA_REMAINS) {}
        if let error = lostWith {
            lostWith = nil
            end(with: error)
        }
    }

    private func waitAndHandle() {
        // Reuse the arrays' storage: this runs once per 2 KiB read of a big message.
        var fds = pollSet, owners = pollOwners
        pollSet = []
        pollOwners = []
        defer {
            fds.removeAll(keepingCapacity: true)
            owners.removeAll(keepingCapacity: true)
            pollSet = fds
            pollOwners = owners
        }
        fds.append(pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0))
        owners.append(nil)
        for watch in watches where dbus_watch_get_enabled(watch) != 0 {
            let flags = dbus_watch_get_flags(watch)
            var events: Int16 = 0
            if flags & CDBUS_WATCH_READABLE != 0 { events |= Int16(POLLIN) }
            if flags & CDBUS_WATCH_WRITABLE != 0 { events |= Int16(POLLOUT) }
            fds.append(pollfd(fd: dbus_watch_get_unix_fd(watch), events: events, revents: 0))
            owners.append(watch)
        }
        let firstWait = fds.count
        for wait in descriptorWaits {
            fds.append(pollfd(fd: wait.descriptor, events: wait.events, revents: 0))
            owners.append(nil)
        }
        var wait: Int32 = -1
        if let next = timeouts.lazy.map(\.deadline).min() {
            let ms = (next - Self.monotonicNow() + 999_999) / 1_000_000
            wait = Int32(max(0, min(ms, 60_000)))
        }
        // Jobs the owner thread queued for itself (it does not wake itself) must not wait;
        // otherwise the loop marks itself asleep, so that the next submitter wakes it.
        let idle = queue.withLock { q -> Bool in
            guard q.jobs.isEmpty else { return false }
            q.sleeping = true
            return true
        }
        if !idle { wait = 0 }
        let n = poll(&fds, nfds_t(fds.count), wait)
        if n > 0 {
            if fds[0].revents != 0 {
                var value: UInt64 = 0
                _ = withUnsafeMutableBytes(of: &value) { read(wakeFD, $0.baseAddress, 8) }
            }
            for i in 1..<firstWait where fds[i].revents != 0 {
                // Handling one watch may remove another: only handle watches still registered.
                guard let watch = owners[i], watches.contains(watch), connection != nil || server != nil else { continue }
                var condition: UInt32 = 0
                let revents = Int32(fds[i].revents)
                if revents & Int32(POLLIN) != 0 { condition |= CDBUS_WATCH_READABLE }
                if revents & Int32(POLLOUT) != 0 { condition |= CDBUS_WATCH_WRITABLE }
                if revents & Int32(POLLERR) != 0 { condition |= CDBUS_WATCH_ERROR }
                if revents & Int32(POLLHUP) != 0 { condition |= CDBUS_WATCH_HANGUP }
                _ = dbus_watch_handle(watch, condition)
            }
            if firstWait < fds.count { resumeReadyWaits(fds[firstWait...]) }
        }
        guard !timeouts.isEmpty else { return }
        let later = Self.monotonicNow()
        for (timeout, deadline) in timeouts where deadline <= later {
            // Handling one timeout may remove another: only handle timeouts still registered.
            guard connection != nil || server != nil, let i = timeouts.firstIndex(where: { $0.timeout == timeout }) else { continue }
            timeouts[i].deadline = ConnectionLoop.deadline(of: timeout)
            if dbus_timeout_get_enabled(timeout) != 0 { _ = dbus_timeout_handle(timeout) }
        }
    }

    /// When `timeout` next fires, in monotonic nanoseconds (an hour away when disabled).
    private static func deadline(of timeout: OpaquePointer) -> Int64 {
        let interval = dbus_timeout_get_enabled(timeout) == 0 ? 3_600_000 : Int64(dbus_timeout_get_interval(timeout))
        return monotonicNow() + interval * 1_000_000
    }

    /// CLOCK_MONOTONIC in nanoseconds (cheaper than `ContinuousClock.now` plus `Duration` maths).
    private static func monotonicNow() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}

extension ConnectionLoop {
    /// The jobs waiting for the owner thread and whether it is asleep in `poll`.
    struct Queue {
        var jobs: [Work] = []
        /// False once the loop has stopped: `submit` then refuses jobs.
        var accepting = true
        /// Set by the owner thread when it is about to poll with no job waiting, cleared by the
        /// first job submitted after that (which then wakes it) and when it runs its jobs.
        var sleeping = false
    }

    /// One unit of work for the owner thread.
    enum Work: Sendable {
        /// A closure from `submit(_:)`.
        case closure(@Sendable () -> Void)
        /// A task job for the connection's executor (no closure to allocate per enqueue).
        case job(SendableJob)

        func run(on loop: ConnectionLoop) {
            switch self {
            case .closure(let body): body()
            case .job(let job): job.unowned.runSynchronously(on: loop.asUnownedTaskExecutor())
            }
        }
    }
}
