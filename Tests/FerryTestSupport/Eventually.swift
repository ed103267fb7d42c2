/// Polls `condition` until it holds or `timeout` has passed; the last answer decides.
///
/// The one way a test waits for something to happen: it returns as soon as the condition holds,
/// so the deadline can be generous (suites run in parallel on a loaded machine) without making
/// a passing test slower. Between answers it sleeps `interval`, suspending rather than blocking,
/// so the other tests running meanwhile keep the thread.
///
///     #expect(try await eventually { try await broker.scenes().count == 1 })
///
/// - Parameters:
///   - timeout: how long to keep asking.
///   - interval: the pause between two answers.
///   - condition: what should become true.
/// - Returns: whether `condition` held before the deadline (its answer at the deadline).
/// - Throws: whatever `condition` throws.
public func eventually(_ timeout: Duration = .seconds(10), every interval: Duration = .milliseconds(20),
                       _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: interval)
    }
    return try await condition()
}

/// Waits `duration` on purpose, to prove a negative: nothing the test watches happens meanwhile
/// ("no second Update arrives within 300 ms").
///
/// The one fixed wait tests may use; waiting *for* something is ``eventually(_:every:_:)``.
/// Keep `duration` as short as the claim allows: every test that calls this takes that long.
public func provingNothingHappens(for duration: Duration) async {
    try? await Task.sleep(for: duration)
}
