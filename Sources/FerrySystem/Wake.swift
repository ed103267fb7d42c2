import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One wake-up, for a task or for a thread: ``signal()`` may come from anywhere (another thread,
/// a task's cancellation handler), before, during or after the wait, and wakes a task waiting in
/// ``wait()`` or a thread blocked in ``poll(_:events:until:)``.
///
/// A task's ``wait()`` takes the signal (the broker's expiry and idle loops sleep on one wake
/// again and again); a thread's `poll` only sees it, so a signalled wake stops every later poll
/// at once, which is what cancelling a blocking read needs. The pipe a thread polls is made on
/// the first poll: a wake only tasks wait on costs no descriptor.
package final class Wake: Sendable {
    private struct State {
        var signalled = false
        var waiter: (id: UInt64, continuation: CheckedContinuation<Void, Never>)?
        var nextID: UInt64 = 0
        /// The pipe a polling thread watches: holds a byte while `signalled`.
        var pipe: (read: Int32, write: Int32)?
    }

    private let state = Mutex(State())

    /// A wake that nobody has signalled.
    package init() {}

    deinit {
        // Nobody polls any more: a polling thread holds a reference for as long as it polls.
        state.withLock { state in
            if let pipe = state.pipe {
                close(pipe.read)
                close(pipe.write)
            }
        }
    }

    /// Wakes the task waiting now (the signal is then taken), or else every later wait and poll
    /// until a task's ``wait()`` takes it.
    package func signal() {
        let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter.continuation
            }
            if !state.signalled, let pipe = state.pipe { Self.post(pipe.write) }
            state.signalled = true
            return nil
        }
        continuation?.resume()
    }

    /// Whether a signal is pending (nobody has taken it).
    package var isSignalled: Bool { state.withLock { $0.signalled } }

    /// Takes a pending signal: true when there was one. For a thread that polls the same wake in
    /// a loop (take it before looking at what changed, then poll again).
    @discardableResult
    package func take() -> Bool {
        state.withLock { state in
            guard state.signalled else { return false }
            state.signalled = false
            if let pipe = state.pipe { Self.drain(pipe.read) }
            return true
        }
    }

    /// Returns when signalled (at once when a signal is pending, which it takes), or when the task
    /// is cancelled.
    package func wait() async {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.signalled || Task.isCancelled {
                        if state.signalled, let pipe = state.pipe { Self.drain(pipe.read) }
                        state.signalled = false
                        return true
                    }
                    state.waiter = (id, continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard let waiter = state.waiter, waiter.id == id else { return nil }
                state.waiter = nil
                return waiter.continuation
            }
            continuation?.resume()
        }
    }

    /// Waits until signalled or until `deadline`, whichever comes first.
    package func wait(until deadline: ContinuousClock.Instant) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(until: deadline, clock: .continuous) }
            group.addTask { await self.wait() }
            await group.next()
            group.cancelAll()
        }
    }

    /// How a ``poll(_:events:until:)`` ended.
    package enum PollResult: Sendable, Equatable {
        /// The descriptor has one of the events (or an error, a hang-up, or is not open).
        case ready
        /// The wake was signalled (it may have been before the poll began).
        case woken
        /// The deadline passed.
        case timedOut
    }

    /// Blocks this thread in `poll(2)` until `descriptor` has one of `events`, the wake is
    /// signalled, or `deadline` passes. `events` 0 waits only for an error or a hang-up (a pipe's
    /// write end whose reader left).
    /// - Throws: ``SystemCallError`` when no pipe can be made (out of descriptors) or `poll` fails.
    package func poll(_ descriptor: Int32, events: Int16 = Int16(POLLIN),
                      until deadline: ContinuousClock.Instant? = nil) throws(SystemCallError) -> PollResult {
        var entries = [pollfd(fd: descriptor, events: events, revents: 0)]
        return try poll(&entries, until: deadline)
    }

    /// Blocks this thread in `poll(2)` on `entries` and the wake, as
    /// ``poll(_:events:until:)`` does on one descriptor; the entries' `revents` say which are
    /// ready. A signal wins over a ready descriptor.
    /// - Throws: ``SystemCallError`` when no pipe can be made or `poll` fails.
    package func poll(_ entries: inout [pollfd], until deadline: ContinuousClock.Instant? = nil) throws(SystemCallError) -> PollResult {
        let wakeEnd = try readEnd()
        var all = entries + [pollfd(fd: wakeEnd, events: Int16(POLLIN), revents: 0)]
        defer { entries = Array(all.dropLast()) }
        while true {
            let timeout = deadline.map { Self.milliseconds(until: $0) } ?? -1
            let ready = Glibc.poll(&all, nfds_t(all.count), timeout)
            if ready < 0 {
                if errno == EINTR { continue }
                throw SystemCallError("poll")
            }
            if all[all.count - 1].revents != 0 { return .woken }
            if ready > 0 { return .ready }
            if let deadline, deadline <= .now { return .timedOut }
        }
    }

    /// The read end of the wake's pipe, made now when there is none (holding a byte when a
    /// signal is pending).
    private func readEnd() throws(SystemCallError) -> Int32 {
        let made = state.withLock { state -> Result<Int32, SystemCallError> in
            if let pipe = state.pipe { return .success(pipe.read) }
            var ends: [Int32] = [-1, -1]
            guard pipe(&ends) == 0 else { return .failure(SystemCallError("pipe")) }
            for end in ends {
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
                _ = fcntl(end, F_SETFL, O_NONBLOCK)
            }
            state.pipe = (ends[0], ends[1])
            if state.signalled { Self.post(ends[1]) }
            return .success(ends[0])
        }
        return try made.get()
    }

    private static func post(_ writeEnd: Int32) {
        var one: UInt8 = 1
        _ = write(writeEnd, &one, 1)  // a full pipe already wakes its poller
    }

    private static func drain(_ readEnd: Int32) {
        var bytes = [UInt8](repeating: 0, count: 64)
        while bytes.withUnsafeMutableBytes({ read(readEnd, $0.baseAddress, $0.count) }) > 0 {}
    }

    /// `poll`'s timeout for `deadline`: rounded up (never 0 before the deadline), at most
    /// `Int32.max` ms (a longer wait polls again).
    static func milliseconds(until deadline: ContinuousClock.Instant) -> Int32 {
        let left = deadline - .now
        guard left > .zero else { return 0 }
        let (seconds, attoseconds) = left.components
        let ms = seconds.multipliedReportingOverflow(by: 1000)
        guard !ms.overflow else { return Int32.max }
        return Int32(clamping: ms.partialValue + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }
}
