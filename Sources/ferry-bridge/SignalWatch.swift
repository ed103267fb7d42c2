import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Delivers signals as an `AsyncStream` without blocking any thread: each signal is ignored
/// first (so its default action does not kill the process) and watched by a dispatch source.
final class SignalWatch: Sendable {
    /// The signals received, in order.
    let stream: AsyncStream<Int32>
    // Dispatch sources are thread-safe; the array is set once in init and only read after.
    private nonisolated(unsafe) let sources: [any DispatchSourceSignal]

    init(_ signals: [Int32]) {
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        self.stream = stream
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            return source
        }
    }
}
