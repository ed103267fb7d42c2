import DBus
import FerryModel
import Logging
import Synchronization

/// Calls one running app's `org.ferry.Client1` scene and drag methods strictly in order, one at a time:
/// each call starts only when the previous one has been answered, has failed or has timed out.
///
/// The queue never holds the broker up: callers await their own call (the scene service's actor
/// is free meanwhile), and an app that leaves the bus fails its calls at once (the bus answers
/// for it). A call's timeout counts from when it is enqueued, so time spent waiting behind a
/// hung app's earlier calls counts too: nobody waits longer than its own timeout, even behind
/// an earlier call with a longer one (a call whose deadline passes, or whose task is cancelled,
/// while it waits is never made). After ``close()`` new calls fail with `Unavailable`.
final class AppCallbacks: Sendable {
    /// D-Bus: the interface apps export.
    static let interfaceName: InterfaceName = "org.ferry.Client1"

    /// The app id, for messages.
    let appID: String
    /// The app's unique bus name.
    let destination: BusName
    /// Its `org.ferry.Client1` object.
    let path: ObjectPath
    private let connection: Connection
    /// Where the app serves its callbacks over a direct connection, for the calls that may go there.
    private let direct: DirectListener?
    /// The service's logger with this app's id as metadata (`app`): failed calls are warnings.
    private let logger: Logger

    /// Calls take a ticket when they are made and run when their ticket is served: in the
    /// order they were made, one at a time.
    private struct Queue {
        var closed = false
        /// The ticket the next call gets.
        var nextTicket: UInt64 = 0
        /// The ticket whose call may run now.
        var serving: UInt64 = 0
        /// Calls waiting for their ticket to be served; resumed with true when it is, with false
        /// when the caller gave up first.
        var waiting: [UInt64: CheckedContinuation<Bool, Never>] = [:]
        /// Tickets whose callers gave up before their turn (their deadline passed or their task
        /// was cancelled): skipped when reached, their calls never made.
        var abandoned: Set<UInt64> = []
    }

    private let queue = Mutex(Queue())

    /// Makes the queue of the app registered by `destination`, whose Client1 object is `path`;
    /// its failed calls go to `logger`. Calls made with `direct` go over the app's direct
    /// connection when it serves its callbacks there (`direct`'s ``DirectListener/callbackConnection(for:)``).
    init(appID: String, destination: BusName, path: ObjectPath, connection: Connection, direct: DirectListener? = nil,
         logger: Logger) {
        self.appID = appID
        self.destination = destination
        self.path = path
        self.connection = connection
        self.direct = direct
        var logger = logger
        logger[metadataKey: "app"] = "\(appID)"
        self.logger = logger
    }

    /// Enqueues a call without waiting for it; its failure is logged. Returns the call's task.
    /// - Throws: `FerryModelError` `.unavailable` once the queue is closed.
    @discardableResult
    func enqueue(_ member: MemberName, _ body: [DBusValue], timeout: Duration) throws -> Task<[DBusValue], any Error> {
        let ticket = try takeTicket()
        let deadline = ContinuousClock.now + timeout
        return Task<[DBusValue], any Error> {
            try await self.run(ticket, member, body, timeout: timeout, deadline: deadline, via: self.connection)
        }
    }

    /// Enqueues a call and waits for its reply. The call is made by the calling task itself (no
    /// task of its own): a Move's DropUpdated then goes out from the connection's thread.
    /// - Returns: the reply's values.
    /// - Parameters:
    ///   - direct: make the call over the app's direct connection when it serves its callbacks
    ///     there (a drag's proposals: no dbus-daemon hops), else over the bus. The queue keeps
    ///     the calls in order either way: each waits for the one before to be answered.
    ///   - rawErrors: throw the call's own error (a `DBusError` with the name the app or the bus
    ///     replied, `CancellationError`) instead of its `FerryModelError` (a share's completion
    ///     carries an activity's own error name).
    /// - Throws: `FerryModelError`: `.timeout` when the app did not answer within `timeout`,
    ///   `.unavailable` when it is gone or failed, or the `org.ferry.Error.*` it replied.
    func call(_ member: MemberName, _ body: [DBusValue], timeout: Duration, direct: Bool = false,
              rawErrors: Bool = false) async throws -> [DBusValue] {
        let ticket = try takeTicket()
        let via = direct ? self.direct?.callbackConnection(for: destination.rawValue) ?? connection : connection
        return try await run(ticket, member, body, timeout: timeout, deadline: .now + timeout, via: via, rawErrors: rawErrors)
    }

    /// A place in the queue.
    /// - Throws: `FerryModelError` `.unavailable` once the queue is closed.
    private func takeTicket() throws -> UInt64 {
        let appID = self.appID
        return try queue.withLock { queue in
            guard !queue.closed else { throw FerryModelError(.unavailable, "\(appID) is not running") }
            defer { queue.nextTicket += 1 }
            return queue.nextTicket
        }
    }

    /// Waits for `ticket`'s turn, makes the call (within what is left until `deadline`), then
    /// serves the next ticket.
    private func run(_ ticket: UInt64, _ member: MemberName, _ body: [DBusValue], timeout: Duration,
                     deadline: ContinuousClock.Instant, via connection: Connection, rawErrors: Bool = false) async throws -> [DBusValue] {
        guard await waitForTurn(ticket, deadline: deadline) else {
            let error: any Error = Task.isCancelled ? CancellationError() : DBusError(.timeout, "waited behind earlier calls")
            let failure = Self.callError(error, member: member, appID: appID, timeout: timeout, elapsed: .zero, limit: .zero)
            logFailure(failure)
            throw rawErrors ? error : failure
        }
        defer { serveNext() }
        let started = ContinuousClock.now
        let remaining = deadline - started
        do {
            guard remaining > .milliseconds(1) else { throw DBusError(.timeout, "waited behind earlier calls") }
            return try await connection.call(destination: destination, path: path, interface: Self.interfaceName,
                                             member: member, body: body, timeout: remaining)
        } catch {
            let failure = Self.callError(error, member: member, appID: appID, timeout: timeout,
                                         elapsed: ContinuousClock.now - started, limit: remaining)
            logFailure(failure)
            throw rawErrors ? error : failure
        }
    }

    /// Logs a failed call: a warning, but debug detail when the caller cancelled it (nobody waits
    /// for its answer any more).
    private func logFailure(_ failure: FerryModelError) {
        logger.log(level: failure.code == .cancelled ? .debug : .warning, "\(failure.message)")
    }

    /// Returns true when `ticket` is served, or false when `deadline` passes or the task is
    /// cancelled first (the ticket is then skipped when reached): a call never waits behind a
    /// hung app's earlier, longer calls (a PerformDrop's 30 s) past its own timeout.
    private func waitForTurn(_ ticket: UInt64, deadline: ContinuousClock.Instant) async -> Bool {
        if queue.withLock({ $0.serving == ticket }) { return true }
        let timer = Task {
            do {
                try await Task.sleep(until: deadline, clock: .continuous)
                self.giveUp(ticket)
            } catch {}  // cancelled: the turn came first
        }
        defer { timer.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let now = queue.withLock { queue -> Bool? in
                    if queue.serving == ticket { return true }
                    if queue.abandoned.contains(ticket) { return false }
                    queue.waiting[ticket] = continuation
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            giveUp(ticket)
        }
    }

    /// Gives `ticket` up unless it is being served already or was served: its waiting call
    /// resumes with false.
    private func giveUp(_ ticket: UInt64) {
        let waiting = queue.withLock { queue -> CheckedContinuation<Bool, Never>? in
            guard queue.serving < ticket else { return nil }
            queue.abandoned.insert(ticket)
            return queue.waiting.removeValue(forKey: ticket)
        }
        waiting?.resume(returning: false)
    }

    /// Serves the next ticket not given up, resuming its call if it waits.
    private func serveNext() {
        let next = queue.withLock { queue -> CheckedContinuation<Bool, Never>? in
            queue.serving += 1
            while queue.abandoned.remove(queue.serving) != nil { queue.serving += 1 }
            return queue.waiting.removeValue(forKey: queue.serving)
        }
        next?.resume(returning: true)
    }

    /// Refuses new calls; those already queued still run (and fail fast once the app is gone).
    func close() {
        queue.withLock { $0.closed = true }
    }

    /// The `FerryModelError` a failed call to an app stands for.
    /// - Parameters:
    ///   - timeout: the documented timeout, for the message.
    ///   - elapsed: how long the call itself ran.
    ///   - limit: the timeout the call itself had (what was left of `timeout`).
    static func callError(_ error: any Error, member: MemberName, appID: String, timeout: Duration,
                          elapsed: Duration, limit: Duration) -> FerryModelError {
        if let error = error as? FerryModelError { return error }
        if error is CancellationError {
            return FerryModelError(.cancelled, "the call of Client1.\(member.rawValue) on \(appID) was cancelled")
        }
        guard let error = error as? DBusError else {
            return FerryModelError(.unavailable, "\(appID) failed Client1.\(member.rawValue): \(error)")
        }
        switch error.name {
        case .noReply where elapsed >= limit * 0.99, .timeout:
            return FerryModelError(.timeout, "\(appID) did not answer Client1.\(member.rawValue) within \(PromiseRelay.seconds(timeout)) s")
        case .noReply, .disconnected, .serviceUnknown, .nameHasNoOwner:
            return FerryModelError(.unavailable, "\(appID) went away during Client1.\(member.rawValue): \(error.message)")
        default:
            if let code = FerryModelError.Code(dbusErrorName: error.name.rawValue) {
                return FerryModelError(code, "\(appID) answered Client1.\(member.rawValue): \(error.message)")
            }
            return FerryModelError(.unavailable, "\(appID) failed Client1.\(member.rawValue): \(error.name.rawValue): \(error.message)")
        }
    }
}
