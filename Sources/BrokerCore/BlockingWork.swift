import FerryModel
import FerrySystem
import Synchronization

/// Runs work that may block a thread for long (copying a 1 GiB descriptor into a blob, waiting
/// up to the descriptor timeout on a pipe that stalls) on a thread of the blocking pool
/// (`BlockingIO`), so it occupies neither a connection's thread nor one of the few threads of
/// Swift's cooperative pool, and other calls keep being served meanwhile.
///
/// Work that reads a caller's descriptors first waits, without a thread, until the first of them
/// has something to read (the process's `DescriptorWatcher`), and each caller runs at most
/// ``perCallerLimit`` such pieces of work at a time: a caller handing over descriptors that never
/// deliver holds no thread, one whose descriptors stall after some bytes holds at most that many.
package enum BlockingWork {
    /// How many descriptor reads one caller (unique bus name) may run at once.
    static let perCallerLimit = 4

    private struct Slots {
        var running: [String: Int] = [:]
        var waiting: [String: [CheckedContinuation<Void, Never>]] = [:]
    }

    private static let slots = Mutex(Slots())

    /// Runs `body` on a thread of the blocking pool and returns its result.
    package static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await BlockingIO.run(body)
    }

    /// Runs `body`, which reads `descriptors` handed over by `caller`, on a thread of the blocking
    /// pool once the first of them can be read and `caller` has fewer than ``perCallerLimit``
    /// reads running.
    /// - Throws: `FerryModelError` `.timeout` when the first descriptor delivers nothing for
    ///   `timeout`; what `body` throws.
    package static func run<T: Sendable>(reading descriptors: [FileDescriptor], for caller: String, timeout: Duration,
                                 _ body: @escaping @Sendable () throws -> T) async throws -> T {
        if let first = descriptors.lazy.compactMap(\.rawValue).first {
            // The descriptors stay open across the wait: they are used after it.
            defer { withExtendedLifetime(descriptors) {} }
            guard try await DescriptorWatcher.shared.waitUntilReadable(first, timeout: timeout) else {
                throw FerryModelError(.timeout, "the file descriptor delivered no data for \(timeout)")
            }
        }
        guard !descriptors.isEmpty else { return try await run(body) }
        await acquire(for: caller)
        defer { release(for: caller) }
        return try await run(body)
    }

    private static func acquire(for caller: String) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = slots.withLock { s in
                if s.running[caller, default: 0] < perCallerLimit {
                    s.running[caller, default: 0] += 1
                    return true
                }
                s.waiting[caller, default: []].append(continuation)
                return false
            }
            if granted { continuation.resume() }
        }
    }

    private static func release(for caller: String) {
        let next = slots.withLock { s -> CheckedContinuation<Void, Never>? in
            if var queue = s.waiting[caller], !queue.isEmpty {
                let next = queue.removeFirst()
                s.waiting[caller] = queue.isEmpty ? nil : queue
                return next  // the slot passes to it
            }
            let left = s.running[caller, default: 1] - 1
            s.running[caller] = left > 0 ? left : nil
            return nil
        }
        next?.resume()
    }
}
