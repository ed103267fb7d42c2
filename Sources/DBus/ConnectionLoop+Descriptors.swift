import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A task waiting on a connection's thread for a descriptor to be ready: the loop polls it
/// beside the connection's socket, so the wait holds no thread of its own, and a task running
/// on the connection's executor is resumed there without a hop.
final class DescriptorWait: Sendable {
    let descriptor: Int32
    let events: Int16
    /// The connection whose end fails the wait.
    let endpoint: LoopEndpoint

    private enum State {
        case starting
        case waiting(CheckedContinuation<Int16, any Error>)
        case finished
    }

    private let state = Mutex(State.starting)

    init(descriptor: Int32, events: Int16, endpoint: LoopEndpoint) {
        self.descriptor = descriptor
        self.events = events
        self.endpoint = endpoint
    }

    /// Holds the task's continuation; false when the wait already finished (cancelled first),
    /// which then resumes it with what it finished with.
    func begin(_ continuation: CheckedContinuation<Int16, any Error>) -> Bool {
        let began = state.withLock { state -> Bool in
            guard case .starting = state else { return false }
            state = .waiting(continuation)
            return true
        }
        if !began { continuation.resume(throwing: CancellationError()) }
        return began
    }

    /// Whether the wait has finished (its task resumed, or about to be).
    var isFinished: Bool {
        state.withLock { if case .finished = $0 { true } else { false } }
    }

    /// Resumes the task with `result`, once: later calls do nothing.
    func finish(_ result: Result<Int16, any Error>) {
        let continuation = state.withLock { state -> CheckedContinuation<Int16, any Error>? in
            defer { state = .finished }
            if case .waiting(let continuation) = state { return continuation }
            return nil
        }
        continuation?.resume(with: result)
    }
}

extension ConnectionLoop {
    /// Starts polling `wait`'s descriptor; fails it when the connection has ended. Owner thread.
    func add(_ wait: DescriptorWait) {
        guard !wait.isFinished else { return }
        guard wait.endpoint.isOpen else {
            wait.finish(.failure(DBusError(.disconnected, "the connection is closed")))
            return
        }
        descriptorWaits.append(wait)
    }

    /// Stops polling `wait`'s descriptor (its task was cancelled). Owner thread.
    func remove(_ wait: DescriptorWait) {
        descriptorWaits.removeAll { $0 === wait }
    }

    /// Resumes the waits whose descriptor `poll` found ready (`entries` are theirs, in order).
    func resumeReadyWaits(_ entries: ArraySlice<pollfd>) {
        var ready: [(DescriptorWait, Int16)] = []
        for (wait, entry) in zip(descriptorWaits, entries) where entry.revents != 0 {
            ready.append((wait, entry.revents))
        }
        guard !ready.isEmpty else { return }
        descriptorWaits.removeAll { wait in ready.contains { $0.0 === wait } }
        for (wait, revents) in ready { wait.finish(.success(revents)) }
    }
}

extension Connection {
    /// Waits until `descriptor` is ready for `events` (`poll(2)`'s `POLLIN`, `POLLOUT`; 0 for
    /// hang-up and errors alone, which are always reported), polling it on the connection's
    /// thread beside the connection's socket: the wait holds no thread, and a task running on
    /// ``taskExecutor`` is resumed there without a thread hop. The descriptor must stay open
    /// until the wait ends.
    /// - Returns: the events that came (`revents`: `POLLHUP`, `POLLERR`, `POLLNVAL` included).
    /// - Throws: `CancellationError` when the task is cancelled meanwhile; `DBusError`
    ///   `.disconnected` when the connection is closed or closes meanwhile.
    package func waitForDescriptor(_ descriptor: Int32, events: Int16) async throws -> Int16 {
        let wait = DescriptorWait(descriptor: descriptor, events: events, endpoint: endpoint)
        let loop = self.loop
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int16, any Error>) in
                guard wait.begin(continuation) else { return }
                if loop.onOwnerThread {
                    loop.add(wait)
                } else if !loop.submit({ loop.add(wait) }) {
                    wait.finish(.failure(DBusError(.disconnected, "the connection is closed")))
                }
            }
        } onCancel: {
            wait.finish(.failure(CancellationError()))
            loop.submit { loop.remove(wait) }
        }
    }
}
