import Dispatch

/// Runs blocking work (reading or writing a pipe, a large file) on a thread of its own, so that
/// neither a connection's thread nor the cooperative pool waits on a peer.
enum BlockingIO {
    /// Runs `body` on a fresh serial queue (backed by its own thread) and returns its result.
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue(label: "org.ferry.io").async {
                continuation.resume(with: Result { try body() })
            }
        }
    }
}
