import DBus
import FerryModel
import FerrySystem
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Runs the work that serves a promised representation into a pipe, and cancels it as soon as the
/// pipe's reader leaves (the reader's task was cancelled, or it quit).
///
/// The work starts right away, on the caller's thread, and most promises are served before their
/// first suspension (bytes in memory, a small loader that answers at once): those need no watch,
/// and cost no task group, no second task and no change to the descriptors a connection polls.
/// Work that suspends is watched from then on: the pipe's write end (or, when the work takes it, a
/// duplicate made before the work starts), which reports an error once no reader is left, is
/// polled by the connection the request came over, on its own thread beside its socket (no thread
/// hop, no wake-up of another thread), or else by the process's `DescriptorWatcher`, beside every
/// other watched descriptor (no thread per transfer).
/// The work's task is then cancelled, so a loader sees `Task.isCancelled` (and its progress
/// `isCancelled`) instead of producing bytes nobody will read.
enum HangUpWatch {
    /// What `body` returns, or its error; cancelled when `fd`'s reader leaves first, or when the
    /// calling task is cancelled.
    /// - Parameters:
    ///   - fd: the write end handed to the work; it stays open until this returns.
    ///   - takesDescriptor: the work may take `fd` (and close it whenever it likes): then a
    ///     duplicate is made before the work starts and watched instead, and closed once the work
    ///     and the watch are done (the reader sees end of file then). Otherwise nothing is
    ///     duplicated: `fd` itself is watched.
    ///   - connection: the connection whose thread polls the write end, and where the work resumes
    ///     after a suspension (nil, or once it closes: the `DescriptorWatcher`, and the global pool).
    ///   - body: the work; it should stop when its task is cancelled.
    /// - Throws: what `body` throws.
    static func cancellingOnHangUp<T: Sendable>(of fd: FileDescriptor, takesDescriptor: Bool,
                                                polledBy connection: Connection? = nil,
                                                _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let duplicate = takesDescriptor ? try? fd.duplicate() : nil
        defer { duplicate?.close() }
        let watched = takesDescriptor ? duplicate : fd
        let ended = Atomic<Bool>(false)
        let work = Task.immediate(executorPreference: connection?.taskExecutor) {
            defer { ended.store(true, ordering: .releasing) }
            return try await body()
        }
        return try await withTaskCancellationHandler {
            // Ended before its first suspension (or no duplicate could be made): no watch.
            guard !ended.load(ordering: .acquiring), let raw = watched?.rawValue else { return try await work.value }
            let watch = Task(executorPreference: connection?.taskExecutor) {
                // Either way the work is cancelled: the reader left, or the work has ended (which
                // cancelled the watch) and cancelling it does nothing.
                await waitForHangUp(raw, polledBy: connection)
                work.cancel()
            }
            let result = await work.result
            watch.cancel()
            await watch.value  // what is watched is closed only once nothing waits on it
            return try result.get()
        } onCancel: {
            work.cancel()
        }
    }

    /// Returns when `raw` reports hang-up or an error, or the task is cancelled.
    private static func waitForHangUp(_ raw: Int32, polledBy connection: Connection?) async {
        if let connection {
            do {
                _ = try await connection.waitForDescriptor(raw, events: 0)
                return
            } catch is CancellationError {
                return
            } catch {
                // The connection closed: the reader may still be reading, keep watching.
            }
        }
        try? await DescriptorWatcher.shared.waitForHangUp(raw)
    }
}
