import CDBus
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The one thread that owns one or more connections (or a listening server and the connections
/// it accepted): each is a ``LoopEndpoint``, libdbus's or a socket this library serves itself
/// (``WireTransport``).
///
/// Every libdbus call, and every read and write of its own sockets, happens on this thread:
/// other threads hand it closures through `submit(_:)` (a mutex-protected queue plus an eventfd
/// write, which another loop's thread makes when its round ends: ``wakeDeferred()``). The thread
/// polls the endpoints' watches and sockets (read and write, so big messages drain), their
/// timeouts and timers, the descriptors tasks wait for (``DescriptorWait``) and the eventfd. This avoids the libdbus traps measured in
/// `reference/libdbus-from-swift.md`: a thread blocked in `read_write_dispatch` hanging another
/// thread's call, and `set_notify` racing a reply. The thread stops when its last endpoint ends.
final class ConnectionLoop: @unchecked Sendable {
    // Thread safety: `queue` is guarded by its mutex; `wakeFD` is immutable; every other stored
    // property is read and written only on the owner thread.
    private let queue = Mutex<Queue>(Queue())
    private let wakeFD: Int32
    /// The owner thread's id (`pthread_self`), 0 before it starts.
    private let ownerThread = Atomic<UInt>(0)

    /// The connections and servers served, in the order they were added. Owner thread only.
    private var endpoints: [LoopEndpoint] = []
    /// Every endpoint's watches: libdbus adds and removes them through the callbacks below.
    private var watches: [OpaquePointer] = []
    /// The enabled watches as `poll` entries, rebuilt only when a watch is added, removed or
    /// toggled: a server's loop may serve hundreds of connections, and reading every watch's
    /// flags from libdbus before every poll cost more than the poll.
    private var watchPoll: [pollfd] = []
    private var watchPollOwners: [OpaquePointer] = []
    /// Set by the watch callbacks (a toggle may come from another thread).
    private let watchesChanged = Atomic<Bool>(true)
    /// libdbus's timeouts and when each next fires (monotonic nanoseconds). Usually one or two
    /// (one per pending call), so a plain array beats a dictionary.
    private var timeouts: [(timeout: OpaquePointer, deadline: Int64)] = []
    private var pollSet: [pollfd] = []
    /// Spare storage for `runJobs`, swapped with the queue's.
    private var spareJobs: [Work] = []
    private var running = true
    /// Tasks waiting for a descriptor, polled beside the endpoints' (``DescriptorWait``).
    /// Owner thread only.
    var descriptorWaits: [DescriptorWait] = []
    /// Other loops this thread queued work for while they slept, woken when the round ends
    /// (``wakeDeferred()``). Owner thread only.
    private var deferredWakes: [ConnectionLoop] = []
    /// The endpoints polled through their own socket (``LoopEndpoint/pollEntry``) in the last
    /// poll, in the order of their entries. Owner thread only.
    private var polledEndpoints: [LoopEndpoint] = []
    /// Deadlines this library keeps itself (calls waiting on a ``WireTransport``), in monotonic
    /// nanoseconds, each with what to do when it passes. Few at a time: a plain array. Owner thread.
    private var timers: [(owner: ObjectIdentifier, deadline: Int64, fire: () -> Void)] = []

    /// The loop whose owner thread this is (set as its thread starts).
    private static let currentKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// The loop whose owner thread is calling, if any.
    private static var current: ConnectionLoop? {
        pthread_getspecific(currentKey).map { Unmanaged<ConnectionLoop>.fromOpaque($0).takeUnretainedValue() }
    }

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
        guard asleep else { return accepted }
        if let current = Self.current {
            // The owner thread itself, between its poll and its next round, needs no wake-up: it
            // runs its queue before it polls again. Another loop's thread (ferryd's direct
            // connections handing a signal to the bus connection, say) wakes this one when its
            // round ends, after the replies the round sends, not before them.
            if current !== self { current.deferWake(of: self) }
        } else {
            wake()
        }
        return accepted
    }

    /// Whether the caller is the owner thread.
    var onOwnerThread: Bool { ownerThread.load(ordering: .relaxed) == UInt(pthread_self()) }

    private var hasQueuedJobs: Bool { queue.withLock { !$0.jobs.isEmpty } }

    /// Wakes the owner thread from `poll`.
    func wake() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { write(wakeFD, $0.baseAddress, 8) }
    }

    /// Starts the owner thread, which runs `open` first (it adds the first endpoint) and then the
    /// loop until its last endpoint ends.
    func start(open: @escaping @Sendable () -> Void) throws(DBusError) {
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

    /// Remembers to wake `loop` when this round ends. Owner thread.
    private func deferWake(of loop: ConnectionLoop) {
        if !deferredWakes.contains(where: { $0 === loop }) { deferredWakes.append(loop) }
    }

    /// Wakes the loops this round queued work for. Owner thread; never polls with some left.
    private func wakeDeferred() {
        guard !deferredWakes.isEmpty else { return }
        for loop in deferredWakes { loop.wake() }
        deferredWakes.removeAll(keepingCapacity: true)
    }

    /// Starts serving `endpoint` (it is not open yet). Owner thread.
    func add(_ endpoint: LoopEndpoint) {
        endpoints.append(endpoint)
    }

    /// Calls `fire` once `milliseconds` have passed, unless ``removeTimer(of:)`` comes first.
    /// `owner` has one timer at most. Owner thread.
    func addTimer(of owner: AnyObject, milliseconds: Int32, _ fire: @escaping () -> Void) {
        removeTimer(of: owner)
        timers.append((ObjectIdentifier(owner), Self.monotonicNow() + Int64(milliseconds) * 1_000_000, fire))
    }

    /// Cancels `owner`'s timer, if it has one. Owner thread.
    func removeTimer(of owner: AnyObject) {
        let id = ObjectIdentifier(owner)
        if let index = timers.firstIndex(where: { $0.owner == id }) { timers.remove(at: index) }
    }

    /// Forgets an endpoint that ended; the loop stops with its last one. Owner thread.
    func removeEndpoint(_ endpoint: LoopEndpoint) {
        endpoints.removeAll { $0 === endpoint }
        let failed = descriptorWaits.filter { $0.endpoint === endpoint }
        descriptorWaits.removeAll { $0.endpoint === endpoint }
        for wait in failed { wait.finish(.failure(DBusError(.disconnected, "the connection is closed"))) }
        if endpoints.isEmpty {
            running = false
            // Refused from now on, not once the thread has wound down: whoever learns of the end
            // (a `close()` returning) finds the queue closed.
            queue.withLock { $0.accepting = false }
        }
    }

    // The watch and timeout callbacks, shared by connections and servers (`data` is the loop).
    static let addWatch: DBusAddWatchFunction = { watch, data in
        let loop = Unmanaged<ConnectionLoop>.fromOpaque(data!).takeUnretainedValue()
        loop.watches.append(watch!)
        loop.watchesChanged.store(true, ordering: .relaxed)
        return 1
    }
    static let removeWatch: DBusRemoveWatchFunction = { watch, data in
        let loop = Unmanaged<ConnectionLoop>.fromOpaque(data!).takeUnretainedValue()
        loop.watches.removeAll { $0 == watch }
        loop.watchesChanged.store(true, ordering: .relaxed)
    }
    static let toggleWatch: DBusWatchToggledFunction = { _, data in
        // The loop reads the watches' enabled flags again before it next polls. libdbus may
        // re-enable the read watch from another thread (a message released there brings the
        // connection back under its receive limit): wake the loop so it polls that watch again.
        let loop = Unmanaged<ConnectionLoop>.fromOpaque(data!).takeUnretainedValue()
        loop.watchesChanged.store(true, ordering: .releasing)
        if !loop.onOwnerThread { loop.wake() }
    }
    static let addTimeout: DBusAddTimeoutFunction = { timeout, data in
        let loop = Unmanaged<ConnectionLoop>.fromOpaque(data!).takeUnretainedValue()
        loop.timeouts.append((timeout!, ConnectionLoop.deadline(of: timeout!)))
        return 1
    }
    static let removeTimeout: DBusRemoveTimeoutFunction = { timeout, data in
        let loop = Unmanaged<ConnectionLoop>.fromOpaque(data!).takeUnretainedValue()
        if let i = loop.timeouts.firstIndex(where: { $0.timeout == timeout }) { loop.timeouts.remove(at: i) }
    }
    static let toggleTimeout: DBusTimeoutToggledFunction = { timeout, data in
        let loop = Unmanaged<ConnectionLoop>.fromOpaque(data!).takeUnretainedValue()
        if let i = loop.timeouts.firstIndex(where: { $0.timeout == timeout }) {
            loop.timeouts[i].deadline = ConnectionLoop.deadline(of: timeout!)
        }
    }

    private func run() {
        ownerThread.store(UInt(pthread_self()), ordering: .relaxed)
        pthread_setspecific(Self.currentKey, Unmanaged.passUnretained(self).toOpaque())
        defer { pthread_setspecific(Self.currentKey, nil) }
        var rounds = 0
        while running {
            runJobs()
            guard running else { break }
            dispatch()
            wakeDeferred()
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
        wakeDeferred()
        for wait in descriptorWaits { wait.finish(.failure(DBusError(.disconnected, "the connection is closed"))) }
        descriptorWaits = []
        watches = []
        timeouts = []
        timers = []
        // The last round's endpoints hold this loop: kept, they would never let it go (nor its eventfd).
        polledEndpoints = []
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

    /// Dispatches the queued messages of every endpoint that has some (libdbus says so as they
    /// arrive: ``LoopEndpoint/requestDispatch()``).
    private func dispatch() {
        var index = 0
        while index < endpoints.count {
            let endpoint = endpoints[index]
            if endpoint.takeDispatchRequest() {
                endpoint.dispatch()  // may end it, removing it from `endpoints`
            }
            if index < endpoints.count, endpoints[index] === endpoint { index += 1 }
        }
    }

    /// Rebuilds the watches' `poll` entries from libdbus's watches.
    private func rebuildWatchPoll() {
        watchPoll.removeAll(keepingCapacity: true)
        watchPollOwners.removeAll(keepingCapacity: true)
        for watch in watches where dbus_watch_get_enabled(watch) != 0 {
            let flags = dbus_watch_get_flags(watch)
            var events: Int16 = 0
            if flags & CDBUS_WATCH_READABLE != 0 { events |= Int16(POLLIN) }
            if flags & CDBUS_WATCH_WRITABLE != 0 { events |= Int16(POLLOUT) }
            watchPoll.append(pollfd(fd: dbus_watch_get_unix_fd(watch), events: events, revents: 0))
            watchPollOwners.append(watch)
        }
    }

    private func waitAndHandle() {
        // Reuse the arrays' storage: this runs once per 2 KiB read of a big message.
        var fds = pollSet
        pollSet = []
        defer {
            fds.removeAll(keepingCapacity: true)
            pollSet = fds
        }
        if watchesChanged.exchange(false, ordering: .acquiring) { rebuildWatchPoll() }
        // The poll entries: the wake-up, the watches (`watchPollOwners` in order), the sockets
        // of endpoints that poll their own (`polledEndpoints` in order), the waits.
        let owners = watchPollOwners
        fds.append(pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0))
        fds.append(contentsOf: watchPoll)
        let firstEndpoint = fds.count
        polledEndpoints.removeAll(keepingCapacity: true)
        for endpoint in endpoints {
            guard let entry = endpoint.pollEntry else { continue }
            fds.append(entry)
            polledEndpoints.append(endpoint)
        }
        let firstWait = fds.count
        for wait in descriptorWaits {
            fds.append(pollfd(fd: wait.descriptor, events: wait.events, revents: 0))
        }
        var wait: Int32 = -1
        let ownNext = timers.lazy.map(\.deadline).min()
        if let next = timeouts.lazy.map(\.deadline).min().map({ min($0, ownNext ?? $0) }) ?? ownNext {
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
            for i in 1..<firstEndpoint where fds[i].revents != 0 {
                // Handling one watch may remove another: only handle watches still registered.
                let watch = owners[i - 1]
                guard watches.contains(watch) else { continue }
                var condition: UInt32 = 0
                let revents = Int32(fds[i].revents)
                if revents & Int32(POLLIN) != 0 { condition |= CDBUS_WATCH_READABLE }
                if revents & Int32(POLLOUT) != 0 { condition |= CDBUS_WATCH_WRITABLE }
                if revents & Int32(POLLERR) != 0 { condition |= CDBUS_WATCH_ERROR }
                if revents & Int32(POLLHUP) != 0 { condition |= CDBUS_WATCH_HANGUP }
                _ = dbus_watch_handle(watch, condition)
            }
            for i in firstEndpoint..<firstWait where fds[i].revents != 0 {
                polledEndpoints[i - firstEndpoint].handle(fds[i].revents)
            }
            if firstWait < fds.count { resumeReadyWaits(fds[firstWait...]) }
        }
        if ownNext != nil { fireTimers() }
        guard !timeouts.isEmpty else { return }
        let later = Self.monotonicNow()
        for (timeout, deadline) in timeouts where deadline <= later {
            // Handling one timeout may remove another: only handle timeouts still registered.
            guard let i = timeouts.firstIndex(where: { $0.timeout == timeout }) else { continue }
            timeouts[i].deadline = ConnectionLoop.deadline(of: timeout)
            if dbus_timeout_get_enabled(timeout) != 0 {
                _ = dbus_timeout_handle(timeout)
                // A call that timed out gets a synthesized error reply to dispatch; which
                // endpoint's it was is not said (libdbus also reports it, this is a backstop).
                for endpoint in endpoints { endpoint.requestDispatch() }
            }
        }
    }

    /// Fires the timers whose deadline has passed (each once: it is removed first).
    private func fireTimers() {
        let now = Self.monotonicNow()
        let due = timers.filter { $0.deadline <= now }
        guard !due.isEmpty else { return }
        timers.removeAll { $0.deadline <= now }
        for timer in due { timer.fire() }
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
