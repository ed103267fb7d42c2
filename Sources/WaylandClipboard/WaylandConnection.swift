import CDataControl
import CWayland
import DesktopClipboard
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One connection to a Wayland compositor and the one thread that touches it.
///
/// Every libwayland call after `open` happens on the display thread: other threads hand it
/// closures through `submit(_:)` (a mutex-protected queue plus a wake pipe). The thread polls the
/// display's fd with `prepare_read`/`read_events`/`dispatch_pending`, so listeners (in
/// `WaylandConnection+DataControl.swift`) run on it too.
final class WaylandConnection: @unchecked Sendable {
    // Thread safety: `jobs` is guarded by its mutex; the `let`s are immutable; every `var` below
    // is read and written only on the display thread (before it starts: only by `open`, which
    // runs before anyone else can see the object).
    private let jobs = Mutex<(accepting: Bool, queue: [@Sendable (WaylandConnection) -> Void],
                              stopped: [CheckedContinuation<Void, Never>], ended: Bool)>(
        (true, [], [], false))
    private let wakeRead: Int32
    private let wakeWrite: Int32

    let display: OpaquePointer
    let family: ferry_dc_family
    /// The bound version of the manager: PRIMARY needs ext (1) or wlr 2.
    let managerVersion: UInt32
    /// `ext-data-control-v1` or `wlr-data-control-vN`.
    let protocolName: String
    let supportsPrimary: Bool
    let continuation: AsyncThrowingStream<DesktopEvent, any Error>.Continuation

    var seat: OpaquePointer?
    var manager: OpaquePointer?
    var device: OpaquePointer?
    /// False once the display thread stopped (or the connection broke): jobs fail then.
    var isOpen = true
    private var stopRequested = false

    /// Offers introduced by `data_offer` and the types their `offer` events named, in order,
    /// until a `selection`/`primary_selection` event uses them.
    var introduced: [OpaquePointer: [String]] = [:]
    /// The foreign offer now on each selection.
    var current: [DesktopSelection: (offer: OpaquePointer, id: UInt64, types: [String])] = [:]
    /// The backend's own live (not cancelled) source on each selection.
    var ownSource: [DesktopSelection: OpaquePointer] = [:]
    /// Every source of the backend's not yet destroyed, with what it serves.
    var sources: [OpaquePointer: OwnSource] = [:]
    /// Whether the last thing reported about each selection is that it has an owner (a foreign
    /// `.offered` or the backend's confirmed ownership): only then is an empty selection news.
    var announced: [DesktopSelection: Bool] = [:]
    var nextOfferID: UInt64 = 1
    /// `wl_display_sync` callbacks waiting for their `done`.
    var syncWaiters: [OpaquePointer: (Bool) -> Void] = [:]

    let deviceListener: UnsafeMutablePointer<ferry_dc_device_listener>
    let sourceListener: UnsafeMutablePointer<ferry_dc_source_listener>
    let offerListener: UnsafeMutablePointer<ferry_dc_offer_listener>
    let callbackListener: UnsafeMutablePointer<wl_callback_listener>

    /// A source the backend created by `own`.
    struct OwnSource {
        var selection: DesktopSelection
        var serve: @Sendable (String, Int32) -> Void
        /// Set when the compositor confirmed the ownership (sync done with the source live).
        var confirmed = false
    }

    private init(display: OpaquePointer, family: ferry_dc_family, managerVersion: UInt32,
                 continuation: AsyncThrowingStream<DesktopEvent, any Error>.Continuation,
                 wake: (Int32, Int32)) {
        self.display = display
        self.family = family
        self.managerVersion = managerVersion
        self.protocolName = family == FERRY_DC_EXT ? "ext-data-control-v1" : "wlr-data-control-v\(managerVersion)"
        self.supportsPrimary = family == FERRY_DC_EXT || managerVersion >= 2
        self.continuation = continuation
        (wakeRead, wakeWrite) = wake
        deviceListener = .allocate(capacity: 1)
        sourceListener = .allocate(capacity: 1)
        offerListener = .allocate(capacity: 1)
        callbackListener = .allocate(capacity: 1)
        installListeners()
    }

    deinit {
        close(wakeRead)
        close(wakeWrite)
        deviceListener.deallocate()
        sourceListener.deallocate()
        offerListener.deallocate()
        callbackListener.deallocate()
    }

    // MARK: Opening

    /// The globals the registry announced that the backend binds.
    private final class Globals {
        var seat: (name: UInt32, version: UInt32)?
        var managers: [(family: ferry_dc_family, name: UInt32, version: UInt32)] = []
    }

    /// Connects to `name`, binds the first seat and a data-control manager (ext-data-control-v1
    /// first, else zwlr_data_control_manager_v1), gets the seat's data device and starts the
    /// display thread.
    static func open(_ name: String,
                     continuation: AsyncThrowingStream<DesktopEvent, any Error>.Continuation)
        throws(DesktopClipboardError) -> WaylandConnection {
        guard let display = name.withCString({ wl_display_connect($0) }) else {
            let reason = String(cString: strerror(cwayland_errno()))
            throw DesktopClipboardError(.unavailable, "cannot connect to the Wayland display \(name): \(reason)")
        }
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else {
            wl_display_disconnect(display)
            throw DesktopClipboardError(.unavailable, "cannot make a wake pipe: \(String(cString: strerror(errno)))")
        }
        for fd in pipeEnds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }

        // The registry is only needed here: it is destroyed (client side) once the globals are
        // bound, so its listener never runs later with a context that is gone.
        let globals = Globals()
        var registryListener = wl_registry_listener(
            global: { data, _, name, interface, version in
                guard let data, let interface else { return }
                let globals = Unmanaged<Globals>.fromOpaque(data).takeUnretainedValue()
                let announced = String(cString: interface)
                if announced == "wl_seat", globals.seat == nil {
                    globals.seat = (name, version)
                }
                for family in [FERRY_DC_EXT, FERRY_DC_WLR]
                where announced == String(cString: ferry_dc_manager_name(family)) {
                    globals.managers.append((family, name, version))
                }
            },
            global_remove: { _, _, _ in })
        let registry = wl_display_get_registry(display)
        let unbound: (String) -> DesktopClipboardError = { why in
            close(pipeEnds[0]); close(pipeEnds[1])
            wl_display_disconnect(display)
            return DesktopClipboardError(.unavailable, why)
        }
        let added = withUnsafeMutablePointer(to: &registryListener) { listener in
            let context = Unmanaged.passUnretained(globals).toOpaque()
            _ = wl_registry_add_listener(registry, listener, context)
            return wl_display_roundtrip(display)
        }
        guard added >= 0 else {
            throw unbound("the Wayland display \(name) broke while listing its globals")
        }
        guard let seatGlobal = globals.seat else {
            wl_registry_destroy(registry)
            throw unbound("the Wayland display \(name) has no seat")
        }
        let chosen = globals.managers.first { $0.family == FERRY_DC_EXT }
            ?? globals.managers.first { $0.family == FERRY_DC_WLR }
        guard let chosen else {
            wl_registry_destroy(registry)
            throw unbound("the compositor at \(name) offers no clipboard access for managers: "
                + "neither ext_data_control_manager_v1 nor zwlr_data_control_manager_v1 is announced "
                + "(GNOME's mutter has neither; use the X11 backend on Xwayland there)")
        }
        let version = min(chosen.version, ferry_dc_manager_max_version(chosen.family))
        let seat = OpaquePointer(wl_registry_bind(registry, seatGlobal.name, cwayland_seat_interface(), 1))
        let manager = OpaquePointer(wl_registry_bind(registry, chosen.name,
                                                     ferry_dc_manager_interface(chosen.family), version))
        wl_registry_destroy(registry)

        let connection = WaylandConnection(display: display, family: chosen.family, managerVersion: version,
                                           continuation: continuation, wake: (pipeEnds[0], pipeEnds[1]))
        connection.seat = seat
        connection.manager = manager
        let device = ferry_dc_get_data_device(chosen.family, manager, seat)
        connection.device = device
        _ = ferry_dc_device_add_listener(device, connection.deviceListener,
                                         Unmanaged.passUnretained(connection).toOpaque())
        // The first selection events arrive now; a protocol error (say, a manager that refuses
        // this client) shows here rather than on the display thread.
        guard wl_display_roundtrip(display) >= 0 else {
            let why = connection.brokenReason()
            connection.destroyObjects()
            wl_display_disconnect(display)
            throw DesktopClipboardError(.unavailable, "the Wayland display \(name) refused data control: \(why)")
        }
        connection.startThread()
        return connection
    }

    // MARK: Any thread

    /// Queues `job` to run on the display thread. Returns false once the thread has stopped:
    /// then the job never runs.
    @discardableResult
    func submit(_ job: @escaping @Sendable (WaylandConnection) -> Void) -> Bool {
        let accepted = jobs.withLock { state -> Bool in
            guard state.accepting else { return false }
            state.queue.append(job)
            return true
        }
        if accepted {
            var byte: UInt8 = 1
            _ = write(wakeWrite, &byte, 1)
        }
        return accepted
    }

    /// Runs `body` on the display thread and returns what it passes to its completion.
    /// - Parameters:
    ///   - refused: runs (on the caller's thread) when the display thread has stopped.
    func perform<T: Sendable>(
        refused: @escaping @Sendable () -> Void = {},
        _ body: @escaping @Sendable (WaylandConnection, @escaping (Result<T, DesktopClipboardError>) -> Void) -> Void
    ) async throws(DesktopClipboardError) -> T {
        let result: Result<T, DesktopClipboardError> = await withCheckedContinuation { waiter in
            let accepted = submit { connection in
                // Resumed exactly once: either here, or by the body's completion.
                guard connection.isOpen else {
                    refused()
                    waiter.resume(returning: .failure(Self.closed))
                    return
                }
                body(connection) { waiter.resume(returning: $0) }
            }
            if !accepted {
                refused()
                waiter.resume(returning: .failure(Self.closed))
            }
        }
        return try result.get()
    }

    /// Asks the display thread to stop and waits until it has (the stream is finished then).
    func stop() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let ended = jobs.withLock { state -> Bool in
                if state.ended { return true }
                state.stopped.append(waiter)
                return false
            }
            if ended { waiter.resume(); return }
            requestStop()
        }
    }

    /// Asks the display thread to stop, without waiting.
    func requestStop() {
        submit { $0.stopRequested = true }
    }

    static let closed = DesktopClipboardError(.disconnected, "the Wayland connection is closed")

    // MARK: The display thread

    private func startThread() {
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let rc = pthread_create(&thread, nil, { context in
            let connection = Unmanaged<WaylandConnection>.fromOpaque(context!).takeRetainedValue()
            connection.run()
            return nil
        }, context)
        if rc == 0 {
            pthread_detach(thread)
        } else {
            // Without a thread there is no connection to speak of.
            let connection = Unmanaged<WaylandConnection>.fromOpaque(context).takeRetainedValue()
            connection.end(DesktopClipboardError(.disconnected, "cannot start the Wayland display thread (error \(rc))"))
        }
    }

    private func run() {
        let displayFD = wl_display_get_fd(display)
        var failure: DesktopClipboardError?
        loop: while true {
            runJobs()
            if stopRequested || !isOpen { break }
            while wl_display_prepare_read(display) != 0 {
                if wl_display_dispatch_pending(display) < 0 { failure = broken(); break loop }
            }
            var wantsWrite = false
            if wl_display_flush(display) < 0 {
                if cwayland_errno() == EAGAIN {
                    wantsWrite = true
                } else {
                    wl_display_cancel_read(display)
                    failure = broken()
                    break
                }
            }
            var fds = [pollfd(fd: displayFD, events: Int16(POLLIN) | (wantsWrite ? Int16(POLLOUT) : 0), revents: 0),
                       pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, 2, -1)
            if ready < 0 && errno != EINTR {
                wl_display_cancel_read(display)
                failure = DesktopClipboardError(.disconnected, "poll failed: \(String(cString: strerror(errno)))")
                break
            }
            if fds[0].revents & Int16(POLLIN | POLLERR | POLLHUP) != 0 {
                if wl_display_read_events(display) < 0 { failure = broken(); break }
            } else {
                wl_display_cancel_read(display)
            }
            if wl_display_dispatch_pending(display) < 0 { failure = broken(); break }
            if fds[1].revents & Int16(POLLIN) != 0 {
                var sink = [UInt8](repeating: 0, count: 64)
                while read(wakeRead, &sink, sink.count) > 0 {}
            }
        }
        end(failure ?? (stopRequested
            ? DesktopClipboardError(.disconnected, "the Wayland connection was shut down")
            : DesktopClipboardError(.disconnected, "the Wayland data device is finished")))
    }

    private func runJobs() {
        while true {
            let batch = jobs.withLock { state -> [@Sendable (WaylandConnection) -> Void] in
                defer { state.queue.removeAll() }
                return state.queue
            }
            if batch.isEmpty { return }
            for job in batch { job(self) }
        }
    }

    /// Tears everything down and finishes the events with `error`. Display thread only.
    private func end(_ error: DesktopClipboardError) {
        isOpen = false
        let waiters = syncWaiters
        syncWaiters = [:]
        for (callback, waiter) in waiters {
            wl_callback_destroy(callback)
            waiter(false)
        }
        destroyObjects()
        wl_display_flush(display)
        wl_display_disconnect(display)
        continuation.finish(throwing: error)
        // Refuse new jobs, then let the queued ones see the closed connection and fail.
        jobs.withLock { $0.accepting = false }
        runJobs()
        let stopped = jobs.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.ended = true
            defer { state.stopped = [] }
            return state.stopped
        }
        for waiter in stopped { waiter.resume() }
    }

    /// Destroys every protocol object the backend holds (client side).
    private func destroyObjects() {
        for (offer, _) in introduced { ferry_dc_offer_destroy(family, offer) }
        introduced = [:]
        for (_, entry) in current { ferry_dc_offer_destroy(family, entry.offer) }
        current = [:]
        for (source, _) in sources { ferry_dc_source_destroy(family, source) }
        sources = [:]
        ownSource = [:]
        if let device { ferry_dc_device_destroy(family, device) }
        device = nil
        if let manager { ferry_dc_manager_destroy(family, manager) }
        manager = nil
        if let seat { wl_proxy_destroy(seat) }
        seat = nil
    }

    /// Why the connection broke, for a person.
    private func brokenReason() -> String {
        let code = wl_display_get_error(display)
        if code == EPROTO {
            var interface: UnsafePointer<wl_interface>?
            var object: UInt32 = 0
            let protocolCode = wl_display_get_protocol_error(display, &interface, &object)
            let name = interface.map { String(cString: $0.pointee.name) } ?? "an object"
            return "protocol error \(protocolCode) on \(name)#\(object)"
        }
        if code == 0 { return "the compositor closed the connection" }
        return String(cString: strerror(code))
    }

    private func broken() -> DesktopClipboardError {
        DesktopClipboardError(.disconnected, "the Wayland connection broke: \(brokenReason())")
    }

    /// Ends the loop after this round because the data device is no longer valid.
    func finishedByCompositor() { isOpen = false }
}
