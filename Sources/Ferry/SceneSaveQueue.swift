import Synchronization

/// The library's own saves of scene state (after a connection, a state change, a continued
/// activity; the re-send after a reconnection), run one at a time in the order asked by a worker
/// of their own. The `org.ferry.Client1` call that asked for one is answered without waiting for
/// it (the save may run before or after that answer): the broker waits for the answer, so a
/// call that waited on a save could wait on a broker that is waiting on us.
final class SceneSaveQueue: Sendable {
    enum Job: Sendable {
        /// ``Scene/saveState()``.
        case save(String)
        /// ``Scene/resend()``.
        case resend(String)
    }

    private let stream: AsyncStream<Job>
    private let continuation: AsyncStream<Job>.Continuation
    private let worker = Mutex<Task<Void, Never>?>(nil)

    init() {
        (stream, continuation) = AsyncStream.makeStream(of: Job.self)
    }

    /// Starts the worker for `application` (once). Failures are ignored: a scene whose broker is
    /// gone keeps its last saved state, and a broker that comes back gets a re-send.
    func start(for application: Application) {
        let stream = self.stream
        let task = Task { [weak application] in
            for await job in stream {
                guard let application else { break }
                switch job {
                case .save(let id): try? await application.scene(for: id)?.saveState()
                case .resend(let id): try? await application.scene(for: id)?.resend()
                }
            }
        }
        worker.withLock { current in
            if current == nil { current = task } else { task.cancel() }
        }
    }

    /// Stops the worker.
    func stop() {
        continuation.finish()
        worker.withLock { $0?.cancel() }
    }

    /// Queues a job.
    func enqueue(_ job: Job) {
        continuation.yield(job)
    }
}
