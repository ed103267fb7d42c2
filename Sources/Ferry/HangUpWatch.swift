import DBus
import FerryModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Runs the work that serves a promised representation into a pipe, and cancels it as soon as the
/// pipe's reader leaves (the reader's task was cancelled, or it quit): a thread waits in `poll` on
/// a duplicate of the pipe's write end, which reports an error once no reader is left. The work's
/// task is then cancelled, so a loader sees `Task.isCancelled` (and its progress `isCancelled`)
/// instead of producing bytes nobody will read.
enum HangUpWatch {
    /// What `body` returns, or its error; cancelled when `fd`'s reader leaves first.
    /// - Parameters:
    ///   - fd: the write end handed to the work (the watch holds a duplicate only while `body`
    ///     runs, so the reader sees end of file once `body` and the watch are done).
    ///   - body: the work; it should stop when its task is cancelled.
    /// - Throws: what `body` throws; `FerryError` `.cancelled` when the reader left and `body`
    ///   stopped without an error of its own.
    static func cancellingOnHangUp<T: Sendable>(of fd: FileDescriptor,
                                                _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        guard let watched = try? fd.duplicate(), let wake = try? WakePipe() else { return try await body() }
        defer {
            watched.close()
            wake.close()
        }
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                defer { wake.signal() }  // the watch ends with the body, however it ends
                return try await body()
            }
            group.addTask {
                // nil either way: the reader left (the body is then cancelled), or the body ended
                // and woke the watch (cancelling it then changes nothing).
                _ = try? await BlockingIO.run { try watched.withRawValue { raw in try wake.waitUntilReadable(raw, events: 0) } }
                return nil
            }
            var hungUp = false
            while let next = try await group.next() {
                if let value = next { return value }
                if !hungUp {
                    hungUp = true
                    group.cancelAll()
                }
            }
            throw FerryError(.cancelled, "the reader closed the pipe")
        }
    }
}
