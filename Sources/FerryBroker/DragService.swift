import BrokerCore
import DBus
import FerryModel
import FerrySystem
import Logging
import Synchronization

/// Drag and drop between scenes of different processes: `org.ferry.DragManager1` at
/// `/org/ferry/Drag` and one `org.ferry.DragSession1` object per running drag at
/// `/org/ferry/Drag/<n>` (services/interfaces/org.ferry.DragManager1.xml is the spec).
///
/// The items travel through a drag pasteboard (``PasteboardService``, `org.ferry.drag.<n>`)
/// whose access this service keeps current: scenes the drag enters may read its metadata, the
/// target performing the drop its content during `PerformDrop` only. Targets are driven through
/// their app's ``AppCallbacks`` queue (`Client1.DropEntered` … `DropEnded`), with the XML's
/// timeouts. One drag's Move, Drop and Cancel run one at a time; while the actor awaits an app
/// it serves other drags.
package actor DragService {
    /// The `org.ferry.DragManager1` object's path.
    package static let path: ObjectPath = "/org/ferry/Drag"
    /// The manager interface's name.
    package static let interfaceName: InterfaceName = "org.ferry.DragManager1"
    /// The session objects' interface name.
    package static let sessionInterfaceName: InterfaceName = "org.ferry.DragSession1"
    /// The manager interface's version (its `Version` property): 2 added previews.
    package static let version: UInt32 = 2
    /// The session interface's version (its `Version` property).
    package static let sessionVersion: UInt32 = 1
    /// How long a drag may go without a Move, Drop or Cancel before it ends as cancel.
    package static let defaultIdleTimeout: Duration = .seconds(60)
    /// How long a target has for `DropEntered` / `DropUpdated` (no answer: forbidden).
    static let proposalTimeout: Duration = .milliseconds(250)
    /// How long a target has for `PerformDrop`.
    static let performTimeout: Duration = .seconds(30)
    /// How long the source app has for `ProvideDragItems`.
    static let provideTimeout: Duration = .seconds(5)
    /// How long an app has for the calls nobody waits for (DropExited, ConcludeDrop, DropEnded,
    /// DragEnded).
    static let noticeTimeout: Duration = .seconds(10)
    /// How long DropUpdated may describe the items as read before (Move reads them at most this
    /// often; DropEntered and PerformDrop always read them).
    static let itemsFreshness: Duration = .milliseconds(100)
    /// The most bytes of a user activity an edge drop reads from the drag pasteboard.
    static let activityLimit = 1 << 20

    /// The connection the drags are served on.
    package nonisolated let connection: Connection
    /// The scenes: hit tests, apps, new scenes for edge drops.
    package nonisolated let scenes: SceneService
    /// The drag pasteboards.
    package nonisolated let pasteboards: PasteboardService
    /// The registered apps.
    package nonisolated let registry: AppRegistry
    /// How long a drag may stay idle.
    package nonisolated let idleTimeout: Duration
    /// Where the service says what happened (info, debug detail) and what it could not do (warnings, errors).
    package nonisolated let logger: Logger
    /// Callers' credentials: the broker's one cache (``PasteboardService/callers``).
    nonisolated let callers: CallerCache
    /// Wakes the idle watch when a drag begins.
    nonisolated let idleWake = Wake()

    /// The running drags, by number.
    var sessions: [Int: DragSession] = [:]
    /// Calls waiting for their drag's current call to finish.
    var waiters: [Int: [CheckedContinuation<Void, Never>]] = [:]
    /// The next drag's number.
    var nextNumber = 1
    /// The steps of each running drag (for LastDrag).
    var records: [Int: DragRecord] = [:]
    /// The record of the most recent drag once it ended (a running one is in ``records``).
    var lastEnded: DragRecord?
    /// The most recent drag's number.
    var lastNumber: Int?
    /// Each drag's item previews and who may set and see them, from its beginning (the source
    /// app sets them while it provides the items) to its end.
    var previews: [Int: DragPreviews] = [:]

    /// Makes the service; nothing is exported until ``start()``.
    /// - Parameters:
    ///   - connection: the broker's connection.
    ///   - scenes: the scene service (the desktop and the apps).
    ///   - pasteboards: the pasteboard service (the drag pasteboards).
    ///   - registry: the registered apps.
    ///   - idleTimeout: how long a drag may stay without a call before it ends as cancel.
    ///   - logger: where events, refusals and failures are logged.
    package init(connection: Connection, scenes: SceneService, pasteboards: PasteboardService, registry: AppRegistry,
                idleTimeout: Duration = DragService.defaultIdleTimeout,
                logger: Logger) {
        self.connection = connection
        self.scenes = scenes
        self.pasteboards = pasteboards
        self.registry = registry
        self.callers = pasteboards.callers
        self.idleTimeout = idleTimeout
        self.logger = logger
    }

    /// Exports `org.ferry.DragManager1` at ``path``.
    /// - Throws: `DBusError` when exporting fails.
    package func start() throws {
        try connection.export(managerInterface, at: Self.path)
    }

    // MARK: - Callers

    /// The caller's unique name and credentials (cached), refused when of another uid.
    /// - Throws: `FerryModelError` `.permissionDenied`; `DBusError` when the caller is gone.
    nonisolated func resolveCaller(_ call: MethodCall) async throws -> Caller {
        try await callers.resolve(call, on: connection)
    }

    // MARK: - One call at a time per drag

    /// The running drag `number` for a call from `sender`, once the drag's earlier calls are
    /// done; ``release(_:)`` must follow.
    /// - Throws: `FerryModelError` `.notFound` (ended), `.permissionDenied` (not the initiator).
    func acquire(_ number: Int, sender: String) async throws -> DragSession {
        guard let session = sessions[number] else { throw Self.gone(number) }
        guard session.initiator == sender else {
            throw FerryModelError(.permissionDenied,
                                  "only the connection that began drag \(number) may move, drop or cancel it")
        }
        while sessions[number]?.busy == true {
            await withCheckedContinuation { waiters[number, default: []].append($0) }
        }
        guard var current = sessions[number], current.state == .dragging else { throw Self.gone(number) }
        current.busy = true
        current.lastActivity = .now
        sessions[number] = current
        return current
    }

    /// Lets the drag's next call run.
    func release(_ number: Int) {
        sessions[number]?.busy = false
        wakeNext(number)
    }

    private func wakeNext(_ number: Int) {
        guard var queue = waiters[number], !queue.isEmpty else { return }
        let next = queue.removeFirst()
        waiters[number] = queue.isEmpty ? nil : queue
        next.resume()
    }

    static func gone(_ number: Int) -> FerryModelError {
        FerryModelError(.notFound, "drag \(number) has ended")
    }

    // MARK: - LastDrag

    /// `LastDrag`: the most recent drag, running or ended; empty when there was none.
    func lastDrag() -> DBusValue {
        if let lastNumber, let running = records[lastNumber] { return running.dbusValue(preview: shownPreview(lastNumber)) }
        return lastEnded?.dbusValue ?? [String: DBusValue]().dbusValue
    }

    // MARK: - Connections going away

    /// A connection left the bus: drags it began or whose source app it was end as cancel;
    /// scenes of an app on it are no longer targets.
    package func connectionClosed(_ uniqueName: String) async {
        callers.forget(uniqueName)
        for number in sessions.keys.sorted() {
            guard let session = sessions[number] else { continue }
            if session.initiator == uniqueName || session.sourceUniqueName == uniqueName {
                let who = session.initiator == uniqueName ? "the connection that began it" : session.sourceApp
                if session.busy {
                    // A Move (250 ms at most) or a Drop (its target performs for up to 30 s) is
                    // running: the drag ends after it, without holding up other drags' ends.
                    Task { await self.endAsCancel(number, reason: "\(who) went away") }
                } else {
                    await endAsCancel(number, reason: "\(who) went away")
                }
                continue
            }
            sessions[number]?.entered = session.entered.filter { $0.value.target.uniqueName != uniqueName }
            if session.current?.uniqueName == uniqueName {
                sessions[number]?.current = nil
                sessions[number]?.proposal = .cancel
            }
        }
    }

    /// Ends a drag as cancel from outside its initiator's calls (its source or initiator went
    /// away, or it stayed idle), after a call it is handling now.
    func endAsCancel(_ number: Int, reason: String) async {
        while sessions[number]?.busy == true {
            await withCheckedContinuation { waiters[number, default: []].append($0) }
        }
        guard let session = sessions[number], session.state == .dragging else { return }
        sessions[number]?.busy = true
        logger.info("drag \(number) ends as cancel: \(reason)")
        await finish(number, Ending(operation: .cancel, reason: reason))
    }

    // MARK: - Idle drags

    /// Ends drags idle for ``idleTimeout`` as cancel; returns when the task is cancelled.
    package func runIdleTimeouts() async {
        while !Task.isCancelled {
            let now = ContinuousClock.now
            var next = now + .seconds(3600)
            for number in sessions.keys.sorted() {
                // Read afresh: ending an earlier drag awaited, and this one may have moved meanwhile.
                guard let session = sessions[number], session.state == .dragging, !session.busy else { continue }
                let deadline = session.lastActivity + idleTimeout
                if deadline <= now {
                    await endAsCancel(number, reason: "nothing moved, dropped or cancelled it for \(Self.seconds(idleTimeout)) s")
                } else {
                    next = min(next, deadline)
                }
            }
            for session in sessions.values where session.busy { next = min(next, now + idleTimeout) }
            await idleWake.wait(until: next)
        }
    }

    static func seconds(_ duration: Duration) -> String {
        let value = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        return value == value.rounded() ? String(Int(value)) : String(value)
    }
}
