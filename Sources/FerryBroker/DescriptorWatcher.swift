#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import FerryModel
import Synchronization

/// Waits for descriptors that callers handed over to have something to read, all of them on one
/// thread with `poll(2)`: a caller whose pipe, FIFO or eventfd never delivers costs an
/// entry here until the timeout, not a thread, and delays nobody else.
final class DescriptorWatcher: Sendable {
    /// The broker's one watcher (its thread starts with the first wait).
    static let shared = DescriptorWatcher()

    private struct Waiter {
        var descriptor: Int32
        var deadline: ContinuousClock.Instant
        var timeout: Duration
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var waiters: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 0
        var started = false
    }

    private let state = Mutex(State())
    /// A pipe whose write end wakes the thread when a waiter is added or removed.
    private let wake: (read: Int32, write: Int32)
    /// Where the thread runs: a queue of its own, so the one thread it takes is never one of the
    /// cooperative pool's.
    private let queue = DispatchQueue(label: "org.ferry.broker.descriptor-watcher")

    private init() {
        var ends: [Int32] = [-1, -1]
        precondition(pipe(&ends) == 0, "cannot make a pipe: errno \(errno)")
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        wake = (ends[0], ends[1])
    }

    /// Returns when `descriptor` can be read without blocking (data, end of file, or an error that
    /// the read will report); a regular file returns at once.
    /// - Throws: `FerryModelError` `.timeout` when nothing arrives for `timeout`;
    ///   `CancellationError` when the task is cancelled meanwhile.
    func waitUntilReadable(_ descriptor: Int32, timeout: Duration) async throws {
        guard descriptor >= 0, FileIdentity(descriptor: descriptor) == nil else { return }
        let id = state.withLock { s in
            defer { s.nextID += 1 }
            return s.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let startThread = state.withLock { s in
                    s.waiters[id] = Waiter(descriptor: descriptor, deadline: .now + timeout, timeout: timeout, continuation: continuation)
                    defer { s.started = true }
                    return !s.started
                }
                if Task.isCancelled { finish(id, with: .failure(CancellationError())) }
                if startThread {
                    queue.async { [self] in run() }
                } else {
                    signal()
                }
            }
        } onCancel: {
            finish(id, with: .failure(CancellationError()))
        }
    }

    /// Resumes waiter `id` with `result` if it is still waiting.
    private func finish(_ id: UInt64, with result: Result<Void, any Error>) {
        let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
        waiter?.continuation.resume(with: result)
        if waiter != nil { signal() }
    }

    private func signal() {
        var one: UInt8 = 1
        _ = Glibc.write(wake.write, &one, 1)  // a full pipe already wakes it
    }

    /// The thread: polls the wake pipe and every waiting descriptor, resumes those that became
    /// readable and those past their deadline, forever.
    private func run() {
        while true {
            let waiting = state.withLock { s in s.waiters.map { (id: $0.key, descriptor: $0.value.descriptor, deadline: $0.value.deadline, timeout: $0.value.timeout) } }
            var polled = [pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
            polled += waiting.map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
            let now = ContinuousClock.now
            var milliseconds: Int32 = -1
            if let nearest = waiting.map(\.deadline).min() {
                let left = nearest - now
                let ms = left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1
                milliseconds = Int32(clamping: max(0, ms))
            }
            let ready = poll(&polled, nfds_t(polled.count), milliseconds)
            if ready < 0 && errno != EINTR {
                // Only a descriptor closed under us (POLLNVAL is reported per entry, not here) or
                // no memory: back off rather than spin.
                usleep(10_000)
            }
            if polled[0].revents != 0 {
                var drained = [UInt8](repeating: 0, count: 512)
                while drained.withUnsafeMutableBytes({ Glibc.read(wake.read, $0.baseAddress, $0.count) }) > 0 {}
            }
            let after = ContinuousClock.now
            for (index, entry) in waiting.enumerated() {
                if ready > 0, polled[index + 1].revents != 0 {
                    finish(entry.id, with: .success(()))
                } else if entry.deadline <= after {
                    finish(entry.id, with: .failure(FerryModelError(.timeout, "the file descriptor delivered no data for \(entry.timeout)")))
                }
            }
        }
    }
}
