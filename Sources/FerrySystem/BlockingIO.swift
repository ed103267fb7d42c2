import Dispatch

/// Runs work that blocks a thread (reading or writing a pipe, copying a large file, waiting on a
/// library's socket) on a thread of its own: never on a D-Bus connection's thread, and never on
/// one of the few threads of Swift's cooperative pool, which on Linux is Dispatch's width-limited
/// global queue. The one place in Ferry that hands work to a thread.
///
/// Work that waits for a descriptor should poll it together with the ``Wake`` that
/// ``run(cancellable:)`` hands it, so that cancelling the task stops the wait at once instead of
/// at its timeout; waiting for a descriptor without holding a thread is ``DescriptorWatcher``'s.
package enum BlockingIO {
    /// A private concurrent queue: like every queue made by label, it targets Dispatch's
    /// overcommit root queue, which starts another thread whenever its threads are blocked.
    private static let queue = DispatchQueue(label: "org.ferry.blocking-io", attributes: .concurrent)

    /// Runs `body` on a thread of the blocking pool and returns its result or error.
    package static func run<T: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, E>, Never>) in
            queue.async {
                do throws(E) {
                    continuation.resume(returning: .success(try body()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }

    /// Runs `body` on a thread of the blocking pool without waiting for it: work handed on from
    /// a library's callback thread, which must not block.
    package static func start(_ body: @escaping @Sendable () -> Void) {
        queue.async(execute: body)
    }

    /// Runs `body` on a thread of the blocking pool with a ``Wake`` that the task's cancellation
    /// signals: `body` polls its descriptors with it and stops when it returns
    /// ``Wake/PollResult/woken``.
    package static func run<T: Sendable, E: Error>(cancellable body: @escaping @Sendable (Wake) throws(E) -> T) async throws(E) -> T {
        let wake = Wake()
        let result = await withTaskCancellationHandler {
            await run { () -> Result<T, E> in
                do throws(E) { return .success(try body(wake)) } catch { return .failure(error) }
            }
        } onCancel: {
            wake.signal()
        }
        return try result.get()
    }
}
