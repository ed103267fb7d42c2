import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Waits for descriptors without holding a thread per wait: every waiting descriptor is polled
/// on one thread with `poll(2)`, so a peer whose pipe never delivers (or whose reader never
/// leaves) costs an entry here until its timeout, not a thread, and delays nobody else.
package final class DescriptorWatcher: Sendable {
    /// The process's one watcher (its thread starts with the first wait).
    package static let shared = DescriptorWatcher()

    private struct Waiter {
        var descriptor: Int32
        var events: Int16
        var deadline: ContinuousClock.Instant?
        var continuation: CheckedContinuation<Bool, any Error>
    }

    private struct State {
        var waiters: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 0
        var started = false
    }

    private let state = Mutex(State())
    /// Wakes the thread when a waiter is added or removed.
    private let wake = Wake()

    private init() {}

    /// Returns true when `descriptor` can be read without blocking (data, end of file, or an
    /// error that the read will report), false when nothing arrived for `timeout` (nil: no
    /// limit). A regular file is readable at once.
    /// - Throws: `CancellationError` when the task is cancelled meanwhile.
    package func waitUntilReadable(_ descriptor: Int32, timeout: Duration?) async throws -> Bool {
        var status = stat()
        if descriptor < 0 || (fstat(descriptor, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG) { return true }
        return try await wait(for: descriptor, events: Int16(POLLIN), timeout: timeout)
    }

    /// Returns when `descriptor`, a pipe's write end, has no reader left (or fails).
    /// - Throws: `CancellationError` when the task is cancelled first (the usual end: the writer
    ///   finished).
    package func waitForHangUp(_ descriptor: Int32) async throws {
        _ = try await wait(for: descriptor, events: 0, timeout: nil)
    }

    private func wait(for descriptor: Int32, events: Int16, timeout: Duration?) async throws -> Bool {
        let id = state.withLock { s in
            defer { s.nextID += 1 }
            return s.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Bool, any Error>) in
                let startThread = state.withLock { s in
                    s.waiters[id] = Waiter(descriptor: descriptor, events: events, deadline: timeout.map { .now + $0 },
                                           continuation: continuation)
                    defer { s.started = true }
                    return !s.started
                }
                if Task.isCancelled { finish(id, with: .failure(CancellationError())) }
                if startThread {
                    let thread = DispatchQueue(label: "org.ferry.descriptor-watcher")
                    thread.async { [self] in run() }
                } else {
                    wake.signal()
                }
            }
        } onCancel: {
            finish(id, with: .failure(CancellationError()))
        }
    }

    /// Resumes waiter `id` with `result` if it is still waiting.
    private func finish(_ id: UInt64, with result: Result<Bool, any Error>) {
        let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
        waiter?.continuation.resume(with: result)
        if waiter != nil { wake.signal() }
    }

    /// The thread: polls every waiting descriptor and the wake, resumes those that became ready
    /// and those past their deadline, forever.
    private func run() {
        while true {
            wake.take()
            let waiting = state.withLock { s in s.waiters.map { (id: $0.key, waiter: $0.value) } }
            var entries = waiting.map { pollfd(fd: $0.waiter.descriptor, events: $0.waiter.events, revents: 0) }
            let nearest = waiting.compactMap(\.waiter.deadline).min()
            do {
                _ = try wake.poll(&entries, until: nearest)
            } catch {
                // Out of descriptors for the wake's pipe, or out of memory: back off, don't spin.
                usleep(10_000)
                continue
            }
            let now = ContinuousClock.now
            for (index, entry) in waiting.enumerated() {
                if entries[index].revents != 0 {
                    finish(entry.id, with: .success(true))
                } else if let deadline = entry.waiter.deadline, deadline <= now {
                    finish(entry.id, with: .success(false))
                }
            }
        }
    }
}
