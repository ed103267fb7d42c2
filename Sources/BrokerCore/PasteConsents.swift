#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FerryModel
import Synchronization

/// The reads waiting for the user's consent (the paste policy said `ask`), as iOS 16 holds a
/// paste until the user answers "Allow Paste" or "Don't Allow".
///
/// ``ask(_:)`` suspends only its own read: other callers of the broker go on. A request ends
/// exactly once — answered (``answer(_:allow:)``), timed out (after ``timeout``), withdrawn
/// because its reader left the bus (``withdraw(uniqueName:)``) or because the read's task was
/// cancelled — and then ``ended`` is told.
package final class PasteConsents: Sendable {
    /// How a request ended.
    package enum Outcome: String, Sendable, Hashable {
        /// The user allowed the read.
        case allowed
        /// The user denied it.
        case denied
        /// Nobody answered in time: denied.
        case timedOut = "timed-out"
        /// The reader left the bus, or stopped waiting, before an answer.
        case withdrawn
    }

    private struct Pending {
        var request: PasteConsentRequest
        var continuation: CheckedContinuation<Outcome, Never>?
        /// Set when the request ended before its reader started waiting.
        var outcome: Outcome?
    }

    private struct State {
        var nextID: UInt64 = 1
        var pending: [UInt64: Pending] = [:]
    }

    /// How long a request waits for an answer before it is denied.
    package let timeout: Duration
    private let requested: @Sendable (PasteConsentRequest) -> Void
    private let ended: @Sendable (PasteConsentRequest, Outcome) -> Void
    private let state = Mutex(State())

    /// The default ``timeout``: 30 seconds, time to read a notification and answer it.
    package static let defaultTimeout: Duration = .seconds(30)

    /// Makes an empty set of requests.
    /// - Parameters:
    ///   - timeout: how long a request waits before it is denied.
    ///   - requested: told of each new request (the broker emits `PasteConsentRequested`).
    ///   - ended: told once of each request's end (the broker emits `PasteConsentEnded`).
    package init(timeout: Duration = PasteConsents.defaultTimeout,
                requested: @escaping @Sendable (PasteConsentRequest) -> Void = { _ in },
                ended: @escaping @Sendable (PasteConsentRequest, Outcome) -> Void = { _, _ in }) {
        self.timeout = timeout
        self.requested = requested
        self.ended = ended
    }

    /// Holds a read until the user answers, the timeout passes, or the reader goes away.
    ///
    /// - Parameter request: what is read; its `id`, `asked` and `expires` are set here.
    /// - Returns: the request as announced, and how it ended.
    package func ask(_ request: PasteConsentRequest) async -> (PasteConsentRequest, Outcome) {
        var request = request
        request.asked = Date()
        request.expires = request.asked.addingTimeInterval(Self.seconds(timeout))
        request.id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        state.withLock { [request] state in state.pending[request.id] = Pending(request: request) }
        requested(request)
        let id = request.id, timeout = self.timeout
        let outcome = await withTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                try? await Task.sleep(for: timeout)
                if !Task.isCancelled { end(id, .timedOut) }
            }
            let outcome = await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let early = state.withLock { state -> Outcome? in
                        if let outcome = state.pending[id]?.outcome {
                            state.pending[id] = nil
                            return outcome
                        }
                        state.pending[id]?.continuation = continuation
                        return nil
                    }
                    if let early { continuation.resume(returning: early) }
                }
            } onCancel: {
                end(id, .withdrawn)
            }
            group.cancelAll()
            return outcome
        }
        return (request, outcome)
    }

    /// Answers request `id`.
    /// - Returns: the request answered.
    /// - Throws: `FerryModelError` `.notFound` when no request has that id (any more).
    @discardableResult
    package func answer(_ id: UInt64, allow: Bool) throws -> PasteConsentRequest {
        guard let request = end(id, allow ? .allowed : .denied) else {
            throw FerryModelError(.notFound, "there is no pending paste consent request \(id) (answered, timed out or withdrawn)")
        }
        return request
    }

    /// Withdraws the requests of a reader that left the bus.
    package func withdraw(uniqueName: String) {
        let ids = state.withLock { state in
            state.pending.values.filter { $0.outcome == nil && $0.request.readerUniqueName == uniqueName }.map(\.request.id)
        }
        for id in ids { end(id, .withdrawn) }
    }

    /// The requests waiting for an answer, oldest first.
    package var pending: [PasteConsentRequest] {
        state.withLock { state in
            state.pending.values.filter { $0.outcome == nil }.map(\.request).sorted { $0.id < $1.id }
        }
    }

    /// Ends request `id` with `outcome` unless it has ended already; returns it when this ended it.
    @discardableResult
    private func end(_ id: UInt64, _ outcome: Outcome) -> PasteConsentRequest? {
        let (request, continuation) = state.withLock { state -> (PasteConsentRequest?, CheckedContinuation<Outcome, Never>?) in
            guard var pending = state.pending[id], pending.outcome == nil else { return (nil, nil) }
            if let continuation = pending.continuation {
                state.pending[id] = nil
                return (pending.request, continuation)
            }
            pending.outcome = outcome
            state.pending[id] = pending
            return (pending.request, nil)
        }
        guard let request else { return nil }
        continuation?.resume(returning: outcome)
        ended(request, outcome)
        return request
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
