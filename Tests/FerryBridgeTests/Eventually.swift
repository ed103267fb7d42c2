import Foundation

/// Polling for a condition, shared by the X11 and the Wayland bridge sessions.
enum Poll {
    /// Polls `condition` every 50 ms for at most `timeout`; the last answer decides.
    static func until(_ timeout: Duration, _ condition: () async throws -> Bool) async rethrows -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return try await condition()
    }
}

/// Polls `condition` every 50 ms for at most `timeout` (``Poll/until(_:_:)``).
func eventually(_ timeout: Duration = .seconds(10), _ condition: () async throws -> Bool) async rethrows -> Bool {
    try await Poll.until(timeout, condition)
}
