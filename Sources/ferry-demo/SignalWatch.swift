import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Delivers SIGTERM/SIGINT as an `AsyncStream`: each signal is ignored first (so its default
/// action does not kill the process) and watched by a dispatch source, so the demo can save its
/// scenes as ordinary Swift code before it exits.
final class SignalWatch: Sendable {
    /// The signals received, in order.
    let stream: AsyncStream<Int32>
    private let continuation: AsyncStream<Int32>.Continuation
    // Dispatch sources are thread-safe; the array is set once in init and only read after.
    private nonisolated(unsafe) let sources: [any DispatchSourceSignal]

    init(_ signals: [Int32]) {
        (stream, continuation) = AsyncStream<Int32>.makeStream()
        let continuation = self.continuation
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            return source
        }
    }

    /// The name of a watched signal: `SIGTERM`, `SIGINT`.
    static func name(of number: Int32) -> String {
        switch number {
        case SIGTERM: "SIGTERM"
        case SIGINT: "SIGINT"
        default: "signal \(number)"
        }
    }

    /// Stops watching.
    func finish() {
        sources.forEach { $0.cancel() }
        continuation.finish()
    }
}
