#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A one-line progress bar on standard error for transfers over `threshold` bytes, drawn only when
/// standard error is a terminal, redrawn at most ten times a second, and erased by `finish()`.
///
/// With a known total the bar shows from the start when the total passes the threshold; with an
/// unknown total it appears once that many bytes went through and shows bytes and speed only.
/// Used from one thread at a time. Shared by the full CLI and the `ferry` front, which draw it
/// the same way.
public final class ProgressBar {
    /// Transfers below this many bytes get no bar (8 MiB).
    public static let threshold: UInt64 = 8 << 20

    private let label: String
    private let total: UInt64?
    private let output: Int32
    private let started = ContinuousClock.now
    private var lastDraw: ContinuousClock.Instant?
    private var drawn = false
    private var done: UInt64 = 0

    /// A bar for `label`, or nil when standard error is not a terminal or the known total is
    /// below the threshold.
    public static func make(label: String, total: UInt64?, output: Int32 = 2) -> ProgressBar? {
        guard isatty(output) == 1 else { return nil }
        if let total, total < threshold { return nil }
        return ProgressBar(label: label, total: total, output: output)
    }

    init(label: String, total: UInt64?, output: Int32) {
        self.label = label
        self.total = total
        self.output = output
    }

    /// Adds `count` transferred bytes; redraws when 100 ms passed since the last drawing.
    public func advance(by count: Int) {
        done += UInt64(count)
        guard total != nil || done >= Self.threshold else { return }
        let now = ContinuousClock.now
        if let lastDraw, now - lastDraw < .milliseconds(100) { return }
        lastDraw = now
        draw(now: now)
    }

    /// Erases the bar if it was drawn.
    public func finish() {
        guard drawn else { return }
        emit("\r\u{1B}[2K")
        drawn = false
    }

    private func draw(now: ContinuousClock.Instant) {
        let elapsed = now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let speed = seconds > 0 ? Double(done) / seconds : 0
        var line = "\r\(label) "
        if let total, total > 0 {
            let fraction = min(1, Double(done) / Double(total))
            let width = 24
            let filled = Int(fraction * Double(width))
            line += "[" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled) + "] "
            line += pad(String(Int(fraction * 100)), 3) + "% " + Self.size(done) + " / " + Self.size(total)
        } else {
            line += Self.size(done)
        }
        if seconds >= 0.25 { line += "  " + Self.size(UInt64(speed)) + "/s" }
        line += "\u{1B}[K"
        emit(line)
        drawn = true
    }

    private func emit(_ text: String) {
        StandardError.write(text, descriptor: output)
    }

    private func pad(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }

    /// `512 B`, `3.2 KiB`, `14.0 MiB`, `1.1 GiB`.
    public static func size(_ bytes: UInt64) -> String {
        if bytes < 1024 { return "\(bytes) B" }
        let units = ["KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes) / 1024
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) \(units[unit])"
    }
}
