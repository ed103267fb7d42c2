import Dispatch

/// Runs work that may block a thread for long (copying a 1 GiB descriptor into a blob, waiting
/// up to the descriptor timeout on a silent pipe) on a thread of its own, so it occupies neither
/// a connection's thread nor one of the few threads of Swift's cooperative pool, and other calls
/// keep being served meanwhile.
enum BlockingWork {
    /// A private concurrent queue: like every queue created by label, it targets the overcommit
    /// root queue, which starts another thread whenever its threads are blocked (unlike the
    /// width-limited global queue that Swift's executor shares on Linux).
    private static let queue = DispatchQueue(label: "org.ferry.broker.blocking", attributes: .concurrent)

    /// Runs `body` on a thread of the blocking queue and returns its result.
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try body() })
            }
        }
    }
}
