import ServiceLifecycle
import Synchronization

extension FerryClient {
    /// This client's flush as a swift-service-lifecycle `Service`, for an app that runs its
    /// services in a `ServiceGroup` and owns its way out: the group's signals and shutdown bound
    /// apply, not hooks the library installs.
    ///
    /// Making one takes this client out of the `atexit` hook of ``flushOnExit()`` (which
    /// ``register(appID:manifest:)`` installs) for good. Tools without a group keep the one-call
    /// default, ``flushOnTermination()``.
    /// - Parameter sceneSaveLimit: as ``flush(sceneSaveLimit:)``'s.
    public func flushService(sceneSaveLimit: Duration = .seconds(5)) -> FlushService {
        state.withLock { $0.flushedByService = true }
        TerminationFlush.leave(self)
        return FlushService(client: self, sceneSaveLimit: sceneSaveLimit)
    }

    /// Waits for its `ServiceGroup`'s graceful shutdown, then hands every representation the
    /// client still promises, and its scenes' state, to the broker (``flush(sceneSaveLimit:)``).
    /// Made by ``flushService(sceneSaveLimit:)``.
    ///
    /// A group that is cancelled instead (its graceful shutdown took too long, or a service with
    /// the `.cancelGroup` termination behaviour returned) ends it without a flush: give the app's
    /// main service `successTerminationBehavior: .gracefullyShutdownGroup` so its return flushes.
    public struct FlushService: Service {
        /// The client flushed.
        public let client: FerryClient
        let sceneSaveLimit: Duration

        /// Runs until the group shuts down gracefully, then flushes.
        /// - Throws: the flush's first `FerryError` (the group's `run()` then throws it).
        public func run() async throws {
            do {
                try await gracefulShutdown()
            } catch {
                return  // cancelled before a graceful shutdown: no flush
            }
            try await client.flush(sceneSaveLimit: sceneSaveLimit)
        }
    }
}
