import Foundation

/// Runs blocking `work` on a thread of its own and suspends until it is done.
///
/// Stopping a daemon, a bus or a display waits for the processes to exit. Done on the
/// cooperative pool (one thread per core: two on the CI machine) by two tests at once, it starves
/// every other test running in parallel, their clients' handlers included; done here, it costs
/// the pool nothing.
public func offThePool(_ work: @escaping @Sendable () -> Void) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        Thread.detachNewThread {
            work()
            continuation.resume()
        }
    }
}

/// Runs `body` with `resource`, then `tearDown(resource)` off the pool (``offThePool(_:)``),
/// whether `body` returned or threw; the scoped form of a fixture's `defer { stop() }`.
///
///     try await withTearDown(try PrivateBus(), { $0.stop() }) { bus in … }
///
/// - Returns: what `body` returned.
/// - Throws: what `body` threw, after the tear-down.
public func withTearDown<Resource: Sendable, Result>(
    _ resource: Resource, _ tearDown: @escaping @Sendable (Resource) -> Void,
    _ body: (Resource) async throws -> Result
) async rethrows -> Result {
    let result: Result
    do {
        result = try await body(resource)
    } catch {
        await offThePool { tearDown(resource) }
        throw error
    }
    await offThePool { tearDown(resource) }
    return result
}
