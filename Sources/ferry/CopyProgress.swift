import FerryTerminal
import Synchronization

/// The progress bar of `ferry copy` handing files to the broker: moved to how many of their bytes
/// the broker has read, as `Pasteboard.setItemProviders` tells it from a task of its own.
final class CopyProgress: Sendable {
    private let state: Mutex<(bar: ProgressBar, shown: UInt64)>

    /// A bar for `total` bytes, or nil when standard error is not a terminal or `total` is small.
    init?(label: String, total: UInt64) {
        guard let bar = ProgressBar.make(label: label, total: total) else { return nil }
        // Drawn at once: a broker that reads the files faster than they are looked at still shows it.
        bar.advance(by: 0)
        state = Mutex((bar, 0))
    }

    /// Moves the bar to `read` bytes.
    func show(_ read: UInt64) {
        state.withLock { state in
            guard read > state.shown else { return }
            state.bar.advance(by: Int(read - state.shown))
            state.shown = read
        }
    }

    /// Erases the bar.
    func finish() {
        state.withLock { $0.bar.finish() }
    }
}
