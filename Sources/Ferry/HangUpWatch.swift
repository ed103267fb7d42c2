import DBus
import FerryModel
import FerrySystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Runs the work that serves a promised representation into a pipe, and cancels it as soon as the
/// pipe's reader leaves (the reader's task was cancelled, or it quit): a duplicate of the pipe's
/// write end, which reports an error once no reader is left, is polled by the connection the
/// request came over, on its own thread beside its socket (no thread hop, no wake-up of another
/// thread: most promises are served in microseconds), or else by the process's
/// `DescriptorWatcher`, beside every other watched descriptor (no thread per transfer). The work's
/// task is then cancelled, so a loader sees `Task.isCancelled` (and its progress `isCancelled`)
/// instead of producing bytes nobody will read.
enum HangUpWatch {
    /// What `body` returns, or its error; cancelled when `fd`'s reader leaves first.
    /// - Parameters:
    ///   - fd: the write end handed to the work (the watch holds a duplicate only while `body`
    ///     runs, so the reader sees end of file once `body` and the watch are done).
    ///   - connection: the connection whose thread polls the duplicate (nil, or once it closes:
    ///     the `DescriptorWatcher`).
    ///   - body: the work; it should stop when its task is cancelled.
    /// - Throws: what `body` throws; `FerryError` `.cancelled` when the reader left and `body`
    ///   stopped without an error of its own.
    static func cancellingOnHangUp<T: Sendable>(of fd: FileDescriptor, polledBy connection: Connection? = nil,
                                                _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        guard let watched = try? fd.duplicate(), let raw = watched.rawValue else { return try await body() }
        defer { watched.close() }
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                // nil either way: the reader left (the body is then cancelled), or the body ended
                // and cancelled the watch.
                await waitForHangUp(raw, polledBy: connection)
                return nil
            }
            var hungUp = false
            while true {
                let next: T??
                do {
                    next = try await group.next()
                } catch {
                    group.cancelAll()  // the body failed: the watch ends with it
                    throw error
                }
                guard let next else { break }
                if let value = next {
                    group.cancelAll()  // the body ended: the watch ends with it
                    return value
                }
                if !hungUp {
                    hungUp = true
                    group.cancelAll()
                }
            }
            throw FerryError(.cancelled, "the reader closed the pipe")
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
