import DesktopClipboard
import CXCB
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The atoms the backend uses, interned once.
struct Atoms {
    let clipboard, primary, targets, multiple, timestamp, incr, saveTargets, clipboardManager,
        atomPair, null, utf8String, text, timestampProperty: UInt32

    init(_ x: X11Connection) {
        let a = x.atoms(["CLIPBOARD", "PRIMARY", "TARGETS", "MULTIPLE", "TIMESTAMP", "INCR", "SAVE_TARGETS",
                         "CLIPBOARD_MANAGER", "ATOM_PAIR", "NULL", "UTF8_STRING", "TEXT", "_FERRY_TIMESTAMP"])
        (clipboard, primary, targets, multiple, timestamp, incr, saveTargets, clipboardManager) =
            (a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7])
        (atomPair, null, utf8String, text, timestampProperty) = (a[8], a[9], a[10], a[11], a[12])
    }

    func atom(of selection: DesktopSelection) -> UInt32 { selection == .clipboard ? clipboard : primary }

    func selection(of atom: UInt32) -> DesktopSelection? {
        atom == clipboard ? .clipboard : atom == primary ? .primary : nil
    }
}

/// The display thread and everything it owns: the xcb connection, the selections watched and
/// owned, and every transfer in flight, each a state machine advanced by events, by its
/// descriptor becoming ready, or by its deadline. Nothing on this thread ever waits for another
/// client: only for the X server's replies.
///
/// `@unchecked Sendable`: the stored state below the inbox is touched only on the display thread
/// (commands from other threads are closures queued in `inbox` and run there); `inbox`,
/// `managerHeld` and the wake pipe are the only parts other threads use.
final class DisplayLoop: @unchecked Sendable {
    typealias Command = @Sendable (DisplayLoop) -> Void

    // Shared with other threads.
    private let inbox = Mutex<(commands: [Command], closed: Bool)>(([], false))
    private let wakeRead: Int32
    private let wakeWrite: Int32
    let managerHeld = Atomic<Bool>(false)
    let continuation: AsyncThrowingStream<DesktopEvent, any Error>.Continuation

    // Display thread only.
    let x: X11Connection
    let window: UInt32
    let atoms: Atoms
    var watched: [DesktopSelection: WatchedOwner] = [:]
    var owned: [DesktopSelection: Ownership] = [:]
    var incoming: [UInt32: IncomingTransfer] = [:]
    var parts: [PartKey: OutgoingPart] = [:]
    var requestorWatches: [UInt32: Int] = [:]
    var pendingSave: PendingSave?
    var timestampWaiters: [(UInt32?) -> Void] = []
    var expectOwnClear: Set<DesktopSelection> = []
    var nextOfferID: UInt64 = 0
    var nextSaveToken: UInt64 = 0
    private var freeProperties: [UInt32] = []
    private var propertyCount = 0
    private var running = true
    private var stopWaiters: [() -> Void] = []

    /// Connects, creates the window, takes CLIPBOARD_MANAGER when asked and free, and watches
    /// both selections. The thread starts with `start()`.
    init(display: String?, clipboardManager: Bool,
         continuation: AsyncThrowingStream<DesktopEvent, any Error>.Continuation) throws(DesktopClipboardError) {
        let x = try X11Connection(display: display)
        var ends: [Int32] = [-1, -1]
        guard cxcb_pipe_cloexec(&ends) == 0 else {
            x.disconnect()
            throw DesktopClipboardError(.unavailable, "cannot create the display loop's wake pipe")
        }
        ends.forEach { _ = cxcb_set_nonblocking($0) }
        (wakeRead, wakeWrite) = (ends[0], ends[1])
        self.x = x
        self.continuation = continuation
        self.atoms = Atoms(x)
        self.window = x.createWindow()
        if clipboardManager { takeManagerAtStart() }
        for selection in DesktopSelection.allCases { x.watchSelection(atoms.atom(of: selection), window: window) }
        x.flush()
        // Whoever owns a selection already is an offer too; ask once the thread runs.
        submit { loop in
            for selection in DesktopSelection.allCases {
                if let owner = loop.x.owner(of: loop.atoms.atom(of: selection)), owner != 0, owner != loop.window {
                    loop.foreignOwner(owner, of: selection, time: CXCB_CURRENT_TIME)
                }
            }
        }
    }

    /// Starts the display thread.
    func start() throws(DesktopClipboardError) {
        let box = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, { arg in
            Unmanaged<DisplayLoop>.fromOpaque(arg!).takeRetainedValue().run()
            return nil
        }, box)
        guard rc == 0 else {
            Unmanaged<DisplayLoop>.fromOpaque(box).release()
            throw DesktopClipboardError(.unavailable, "cannot start the display thread (error \(rc))")
        }
        pthread_detach(thread)
    }

    /// Queues `command` for the display thread. Returns false once the loop has ended.
    @discardableResult
    func submit(_ command: @escaping Command) -> Bool {
        inbox.withLock { inbox -> Bool in
            guard !inbox.closed else { return false }
            inbox.commands.append(command)
            var byte: UInt8 = 1
            _ = write(wakeWrite, &byte, 1)
            return true
        }
    }

    /// Ends the loop from the display thread: releases what the backend holds, fails every
    /// transfer, disconnects and finishes `events`; then calls `done`.
    func stop(then done: @escaping () -> Void = {}) {
        running = false
        stopWaiters.append(done)
    }

    // MARK: The loop

    private func run() {
        while running {
            var busy = true
            while busy && running {
                busy = false
                while running, let event = x.pollEvent() {
                    busy = true
                    dispatch(UnsafeRawPointer(event))
                    free(event)
                }
                let commands = inbox.withLock { inbox -> [Command] in
                    defer { inbox.commands = [] }
                    return inbox.commands
                }
                for command in commands where running { busy = true; command(self) }
                if running { fireDeadlines() }
                if x.isBroken { break }
            }
            guard running, !x.isBroken else { break }
            x.flush()
            waitForReadiness()
        }
        teardown()
    }

    /// Polls the X socket, the wake pipe, readers that can take more bytes and serve pipes that
    /// have more, until one is ready or the nearest deadline.
    private func waitForReadiness() {
        var fds = [pollfd(fd: x.fileDescriptor, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
        var sinks: [IncomingTransfer] = []
        for transfer in incoming.values {
            if let fd = transfer.blockedDescriptor {
                fds.append(pollfd(fd: fd, events: Int16(POLLOUT), revents: 0))
                sinks.append(transfer)
            }
        }
        var sources: [OutgoingPart] = []
        for part in parts.values where part.wantsInput {
            fds.append(pollfd(fd: part.pipe, events: Int16(POLLIN), revents: 0))
            sources.append(part)
        }
        var timeout: Int32 = -1
        if let nearest = nearestDeadline() {
            let left = ContinuousClock.now.duration(to: nearest)
            let ms = left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000
            timeout = Int32(clamping: max(0, ms + 1))
        }
        let n = poll(&fds, nfds_t(fds.count), timeout)
        guard n > 0 else { return }
        if fds[1].revents != 0 {
            var scratch = [UInt8](repeating: 0, count: 256)
            while read(wakeRead, &scratch, scratch.count) > 0 {}
        }
        for (i, transfer) in sinks.enumerated() where fds[2 + i].revents != 0 {
            transfer.pump(x, window: window)
            if transfer.isFinished { release(transfer) }
        }
        let base = 2 + sinks.count
        for (i, part) in sources.enumerated() where fds[base + i].revents != 0 {
            pipeReadable(part)
        }
    }

    private func nearestDeadline() -> ContinuousClock.Instant? {
        var nearest: ContinuousClock.Instant?
        func consider(_ d: ContinuousClock.Instant?) {
            if let d, nearest == nil || d < nearest! { nearest = d }
        }
        incoming.values.forEach { consider($0.deadline) }
        parts.values.forEach { consider($0.deadline) }
        consider(pendingSave?.deadline)
        return nearest
    }

    private func fireDeadlines() {
        let now = ContinuousClock.now
        for transfer in incoming.values where transfer.deadline.map({ $0 <= now }) ?? false {
            transfer.timedOut()
            release(transfer)
        }
        for part in parts.values where part.deadline.map({ $0 <= now }) ?? false {
            partTimedOut(part)
        }
        if let save = pendingSave, save.deadline <= now { answerSave(token: save.token, saved: false) }
    }

    private func dispatch(_ event: UnsafeRawPointer) {
        let kind = event.load(as: UInt8.self) & 0x7F
        switch kind {
        case 0:
            // An X error for a request of ours (a requestor window gone, say): the transfer it
            // belonged to ends by its deadline.
            break
        case CXCB_PROPERTY_NOTIFY:
            let e = event.load(as: xcb_property_notify_event_t.self)
            propertyChanged(window: e.window, atom: e.atom, time: e.time, deleted: e.state == CXCB_PROPERTY_DELETE)
        case CXCB_SELECTION_NOTIFY:
            let e = event.load(as: xcb_selection_notify_event_t.self)
            selectionNotified(selection: e.selection, target: e.target, property: e.property)
        case CXCB_SELECTION_REQUEST:
            selectionRequested(event.load(as: xcb_selection_request_event_t.self))
        case CXCB_SELECTION_CLEAR:
            let e = event.load(as: xcb_selection_clear_event_t.self)
            selectionCleared(e.selection, time: e.time)
        case x.xfixesFirstEvent &+ UInt8(XCB_XFIXES_SELECTION_NOTIFY):
            let e = event.load(as: xcb_xfixes_selection_notify_event_t.self)
            ownerChanged(selection: e.selection, owner: e.owner, subtype: e.subtype, time: e.timestamp)
        default:
            break
        }
    }

    private func propertyChanged(window: UInt32, atom: UInt32, time: UInt32, deleted: Bool) {
        if window == self.window {
            if atom == atoms.timestampProperty, !deleted, !timestampWaiters.isEmpty {
                timestampWaiters.removeFirst()(time)
            } else if !deleted, let transfer = incoming[atom] {
                transfer.newValue(on: x, window: self.window)
                if transfer.isFinished { release(transfer) }
            }
        } else if deleted, let part = parts[PartKey(requestor: window, property: atom)] {
            requestorDeleted(part)
        }
    }

    private func selectionNotified(selection: UInt32, target: UInt32, property: UInt32) {
        let transfer: IncomingTransfer?
        if property != 0 {
            transfer = incoming[property]
        } else {
            // A refusal names no property: the oldest conversion of that target is the one.
            transfer = incoming.values
                .filter { $0.selection == selection && $0.target == target && $0.phase == .awaitingNotify }
                .min { $0.property < $1.property }
        }
        guard let transfer, transfer.selection == selection else { return }
        transfer.notified(refused: property == 0, on: x, window: window)
        if transfer.isFinished { release(transfer) }
    }

    // MARK: Conversions into the backend's window

    /// Converts `selection` to `target` into a fresh property of the window.
    @discardableResult
    func convert(_ selection: UInt32, to target: UInt32, time: UInt32, timeout: Duration,
                 sink: IncomingTransfer.Sink, finish: @escaping (IncomingTransfer.Ending) -> Void) -> IncomingTransfer {
        let property = takeProperty()
        let transfer = IncomingTransfer(selection: selection, target: target, property: property,
                                        timeout: timeout, sink: sink, finish: finish)
        incoming[property] = transfer
        x.convertSelection(selection, to: target, into: property, requestor: window, time: time)
        return transfer
    }

    /// Forgets a finished transfer; its property is reused unless the owner may still write it.
    func release(_ transfer: IncomingTransfer) {
        guard incoming[transfer.property] === transfer else { return }
        incoming[transfer.property] = nil
        if !transfer.ownerMayStillWrite {
            x.deleteProperty(transfer.property, of: window)
            freeProperties.append(transfer.property)
        }
    }

    private func takeProperty() -> UInt32 {
        if let property = freeProperties.popLast() { return property }
        propertyCount += 1
        return x.atom("_FERRY_TRANSFER_\(propertyCount)")
    }

    /// Calls `then` with a real server time (ICCCM forbids CurrentTime for acquiring a
    /// selection): a zero-length append to a property of the window reports one. Nil when the
    /// loop ends first.
    func withServerTime(_ then: @escaping (UInt32?) -> Void) {
        timestampWaiters.append(then)
        x.setProperty(atoms.timestampProperty, of: window, type: atoms.integer, format: 8,
                      bytes: UnsafeRawBufferPointer(start: nil, count: 0), append: true)
    }

    // MARK: The end

    private func teardown() {
        let broken = x.isBroken
        inbox.withLock { $0.closed = true }
        let gone = DesktopClipboardError(.disconnected, broken ? "the X connection broke" : "the backend was shut down")
        for transfer in incoming.values { transfer.fail(gone) }
        incoming = [:]
        for part in parts.values { part.closePipe(); part.request.parts = [] }
        parts = [:]
        if let save = pendingSave, !broken {
            x.notify(save.requestor, selection: atoms.clipboardManager, target: save.target, property: 0, time: save.time)
        }
        pendingSave = nil
        let waiters = timestampWaiters
        timestampWaiters = []
        waiters.forEach { $0(nil) }
        if !broken {
            // With the acquisition's time: a selection someone else took since stays theirs.
            for (selection, ownership) in owned { x.setOwner(0, of: atoms.atom(of: selection), time: ownership.time) }
            if managerHeld.load(ordering: .relaxed) {
                x.setOwner(0, of: atoms.clipboardManager, time: CXCB_CURRENT_TIME)
            }
            x.destroyWindow(window)
            x.flush()
        }
        owned = [:]
        managerHeld.store(false, ordering: .relaxed)
        x.disconnect()
        // Commands queued meanwhile still hold continuations: run them now that `closed` makes
        // every path they take fail fast.
        let left = inbox.withLock { inbox -> [Command] in
            defer { inbox.commands = [] }
            return inbox.commands
        }
        left.forEach { $0(self) }
        continuation.finish(throwing: gone)
        stopWaiters.forEach { $0() }
        stopWaiters = []
    }

    deinit {
        close(wakeRead)
        close(wakeWrite)
    }

    /// Whether the loop has ended (commands run after teardown see true).
    var hasEnded: Bool { inbox.withLock { $0.closed } }
}

extension Atoms {
    /// INTEGER is predefined.
    var integer: UInt32 { CXCB_ATOM_INTEGER }
}
