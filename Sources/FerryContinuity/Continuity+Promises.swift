import BrokerCore
import Dispatch
import FerryBroker
import FerryModel
import Foundation
import Logging
import Synchronization

/// Relaying promises (issue #22): a representation that an app on this machine still promises
/// (`ferry copy --lazy`, an app's provider) is announced like a held one, and a paste on another
/// device asks the app for it then, as a local paste would.
///
/// The first chunk request of a pull (offset 0, a new pull id) starts one
/// ``PasteboardService/streamPromised(owner:item:type:into:)``: the app's save/provide callback
/// runs once for the whole pull, not once per chunk. Its bytes are kept in a ``PromisedPull``
/// from the first chunk not yet served up to what the app has written, at most
/// ``PromisedPull/capacity(chunkSize:)`` ahead (the pulling side's window of requests in flight
/// and one more chunk): the app is held back past that, so a 64 MiB promise costs this machine a
/// few MiB, charged to the broker's memory budget (`ferryd --memory-budget`) under the pasting
/// device's name. The pull ends, and its bytes are released, when every chunk has been served, when
/// the app fails, or when the pasting device stops asking for as long as the app may take to
/// write a local paste (the relay's timeout).
extension Continuity {
    /// What a chunk request is answered from.
    enum ChunkSource {
        /// The status byte and bytes, ready.
        case answer([UInt8])
        /// A pull of a promised representation, whose app writes the bytes.
        case promised(PromisedPull)
    }

    /// The pull that serves `request` of a representation `owner` promises: the one under way, or,
    /// for the first chunk, a new one that asks the app now.
    /// - Throws: `FerryModelError` `.notFound` for a later chunk of a pull that ended,
    ///   `.tooLarge` when the memory budget has no room for one more pull.
    func promisedPull(for request: ChunkRequest, owner: String?) throws -> PromisedPull? {
        let key = PromisedPull.key(of: request)
        if let pull = promisedPulls.withLock({ $0[key] }) { return pull }
        guard let owner else { return nil }
        guard request.offset == 0 else {
            throw FerryModelError(.notFound, "the pull of \(request.type) ended (its app failed or it timed out)")
        }
        let chunkSize = min(request.length, configuration.chunkSize)
        let pull = PromisedPull(key: key, capacity: PromisedPull.capacity(chunkSize: chunkSize),
                                idleLimit: pasteboards.relay.timeout)
        try pasteboards.memory.charge(pull.budgetKey, caller: Self.originPrefix + request.from, bytes: pull.capacity)
        promisedPulls.withLock { $0[key] = pull }
        guard let type = ContentType(importedAs: request.type) else {
            end(pull)
            throw FerryModelError(.notFound, "bad type \(request.type)")
        }
        let pasteboards = self.pasteboards
        let item = request.item
        let task = Task { [weak self] in
            let outcome: Result<Int64, FerryModelError>
            do {
                let count = try await pasteboards.streamPromised(owner: owner, item: item, type: type) { bytes in
                    try pull.append(bytes)
                }
                outcome = .success(Int64(count))
            } catch let error as FerryModelError {
                outcome = .failure(error)
            } catch {
                outcome = .failure(FerryModelError(.unavailable, "the app that promised \(type.identifier) failed: \(error)"))
            }
            pull.finish(outcome)
            if case .failure(let error) = outcome {
                self?.logger.warning("continuity: the app that promised \(type.identifier) did not serve \(request.from)'s paste: \(error)")
                self?.end(pull)
            }
        }
        let watchdog = Task { [weak self] in
            // Forgets the pull once its pasting device stops asking for longer than the app may take.
            while !Task.isCancelled {
                try? await Task.sleep(for: pull.idleLimit / 4)
                guard pull.isIdle else { continue }
                pull.abandon()
                self?.end(pull)
                return
            }
        }
        pull.hold(task, watchdog)
        return pull
    }

    /// Sends the answer to `request` from `pull` once its bytes are there (off the libnats thread).
    func servePromised(_ request: ChunkRequest, from pull: PromisedPull, send: @escaping @Sendable ([UInt8]) -> Void) {
        Task { [weak self] in
            do {
                let piece = try await pull.piece(at: request.offset, length: min(request.length, Continuity.largestChunk))
                // Not on the last piece itself: the requests are served concurrently, and one
                // past the end (sent ahead by the puller) may be answered before the last bytes.
                if piece.completes { self?.end(pull) }
                send([piece.last ? ChunkStatus.last : ChunkStatus.more] + piece.body)
            } catch {
                send([ChunkStatus.refused] + Array("\(error)".utf8))
            }
        }
    }

    /// Forgets `pull` (if it is still the one under its key) and releases its memory.
    func end(_ pull: PromisedPull) {
        let removed = promisedPulls.withLock { pulls in
            guard pulls[pull.key] === pull else { return false }
            pulls[pull.key] = nil
            return true
        }
        if removed {
            pull.abandon()
            pasteboards.memory.release(pull.budgetKey)
        }
    }

    /// Ends every pull (continuity stops).
    func endPromisedPulls() {
        for pull in promisedPulls.withLock({ Array($0.values) }) { end(pull) }
    }
}

/// One pull of a promised representation on the source device: the app's bytes as they come,
/// kept from the first chunk not yet served up to what the app has written (at most
/// ``capacity`` ahead: ``append(_:)`` holds the app back past it), and the chunk requests
/// waiting for bytes still to come.
final class PromisedPull: Sendable {
    /// One chunk's answer.
    struct Piece: Sendable {
        /// The bytes.
        var body: [UInt8]
        /// Whether they reach the end of the representation.
        var last: Bool
        /// Whether every byte has been served once this piece is: the pull may end.
        var completes = false
    }

    struct Waiter {
        var offset: Int64
        var length: Int
        var continuation: CheckedContinuation<Piece, any Error>
    }

    struct State {
        /// The offset of `buffer`'s first byte: everything before it was served.
        var base: Int64 = 0
        var buffer: [UInt8] = []
        /// Chunks served ahead of `base` (offset to end), dropped once the ones before are.
        var served: [Int64: Int64] = [:]
        /// The app's byte count, or why it did not serve; nil while it writes.
        var outcome: Result<Int64, FerryModelError>?
        var waiters: [Waiter] = []
        var lastAsked = ContinuousClock.now
        var abandoned = false
        var tasks: [Task<Void, Never>] = []
    }

    /// Where the pull is filed: the pasting device, its pull, the item and the type.
    let key: String
    /// The most bytes kept ahead of the first chunk not yet served.
    let capacity: Int
    /// How long the pull lives without a request (and the app may stay blocked).
    let idleLimit: Duration
    private let state = Mutex(State())
    /// Signalled when served bytes are dropped (room for the app's next ones) or the pull ends.
    private let room = DispatchSemaphore(value: 0)

    init(key: String, capacity: Int, idleLimit: Duration) {
        self.key = key
        self.capacity = capacity
        self.idleLimit = idleLimit
    }

    /// The bytes a pull keeps at most for chunks of `chunkSize`: the pulling side's requests in
    /// flight and one chunk more, so that the app writes the next chunk while those are sent.
    static func capacity(chunkSize: Int) -> Int { (Continuity.Puller.window + 1) * chunkSize }

    /// The key of the pull `request` belongs to (a request without a pull id, from an older
    /// ferryd, is filed by device, item and type).
    static func key(of request: ChunkRequest) -> String {
        "\(request.from)/\(request.pull?.uuidString ?? "-")/\(request.item.uuidString)/\(request.type)"
    }

    /// The memory budget's key for this pull.
    var budgetKey: String { "continuity-pull:" + key }

    /// Keeps the tasks that feed and watch the pull, to cancel them when it ends.
    func hold(_ tasks: Task<Void, Never>...) {
        let cancelled = state.withLock { state in
            state.tasks += tasks
            return state.abandoned
        }
        if cancelled { for task in tasks { task.cancel() } }
    }

    /// Whether nobody has asked for a chunk for longer than ``idleLimit``.
    var isIdle: Bool { state.withLock { ContinuousClock.now - $0.lastAsked > idleLimit } }

    /// Takes the app's next bytes (on the relay's worker thread), waiting while ``capacity`` bytes
    /// are kept unserved.
    /// - Throws: `FerryModelError` `.cancelled` when the pull ended or nobody asked for
    ///   ``idleLimit``: the app's pipe is then closed.
    func append(_ bytes: UnsafeRawBufferPointer) throws {
        while true {
            let ready = try state.withLock { state throws(FerryModelError) -> [(Waiter, Result<Piece, any Error>)]? in
                guard !state.abandoned else {
                    throw FerryModelError(.cancelled, "the pasting device no longer asks for these bytes")
                }
                guard state.buffer.count < capacity else { return nil }
                state.buffer.append(contentsOf: bytes)
                return Self.takeReady(&state)
            }
            if let ready {
                resume(ready)
                return
            }
            if room.wait(timeout: .now() + .milliseconds(Int(idleLimit / .milliseconds(1)))) == .timedOut {
                abandon()
                throw FerryModelError(.cancelled, "the pasting device stopped asking for these bytes")
            }
        }
    }

    /// Notes how the app's stream ended, answering every waiting request.
    func finish(_ outcome: Result<Int64, FerryModelError>) {
        let answers = state.withLock { state -> [(Waiter, Result<Piece, any Error>)] in
            if state.outcome == nil { state.outcome = outcome }
            let waiters = state.waiters
            state.waiters = []
            return waiters.map { waiter in
                (waiter, Self.answer(&state, offset: waiter.offset, length: waiter.length)
                    ?? .failure(FerryModelError(.unavailable, "the app's bytes ended early")))
            }
        }
        for (waiter, answer) in answers { waiter.continuation.resume(with: answer) }
        room.signal()
    }

    /// Ends the pull: waiting requests fail, the app's stream stops.
    func abandon() {
        let (waiters, tasks) = state.withLock { state in
            state.abandoned = true
            if state.outcome == nil {
                state.outcome = .failure(FerryModelError(.unavailable, "the pull ended before the app had written everything"))
            }
            state.buffer = []
            defer { state.waiters = []; state.tasks = [] }
            return (state.waiters, state.tasks)
        }
        for waiter in waiters {
            waiter.continuation.resume(throwing: FerryModelError(.unavailable, "the pull ended before these bytes came"))
        }
        for task in tasks { task.cancel() }
        room.signal()
    }

    /// `length` bytes at `offset`, once the app has written them (or fewer, the last, once it has
    /// finished).
    /// - Throws: `FerryModelError`: the app's failure (`.unavailable`, `.timeout`), or
    ///   `.notFound` for bytes already served.
    func piece(at offset: Int64, length: Int) async throws -> Piece {
        let piece = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Piece, any Error>) in
            let now = state.withLock { state -> Result<Piece, any Error>? in
                state.lastAsked = .now
                if let answer = Self.answer(&state, offset: offset, length: length) { return answer }
                state.waiters.append(Waiter(offset: offset, length: length, continuation: continuation))
                return nil
            }
            if let now { continuation.resume(with: now) }
        }
        room.signal()
        return piece
    }

    /// The answer to a request, if it can be given now; marks its bytes served.
    private static func answer(_ state: inout State, offset: Int64, length: Int) -> Result<Piece, any Error>? {
        guard offset >= state.base else {
            return .failure(FerryModelError(.notFound, "the bytes at \(offset) were served already"))
        }
        let available = state.base + Int64(state.buffer.count)
        var stop = offset + Int64(length)
        var last = false
        switch state.outcome {
        case .failure(let error):
            return .failure(error)
        case .success(let total):
            if stop >= total { stop = max(offset, total); last = true }
        case nil:
            guard stop <= available else { return nil }
        }
        guard stop <= available else { return .failure(FerryModelError(.unavailable, "the app's bytes ended early")) }
        let start = Int(offset - state.base), end = Int(stop - state.base)
        let body = Array(state.buffer[start..<end])
        if stop > offset { state.served[offset] = stop }
        while let next = state.served.removeValue(forKey: state.base) {
            state.buffer.removeFirst(Int(next - state.base))
            state.base = next
        }
        var completes = false
        if case .success(let total) = state.outcome { completes = state.base >= total }
        return .success(Piece(body: body, last: last, completes: completes))
    }

    /// The waiting requests that can be answered now, taken out of the list.
    private static func takeReady(_ state: inout State) -> [(Waiter, Result<Piece, any Error>)] {
        var ready: [(Waiter, Result<Piece, any Error>)] = []
        var still: [Waiter] = []
        let waiters = state.waiters
        for waiter in waiters {
            if let answer = answer(&state, offset: waiter.offset, length: waiter.length) {
                ready.append((waiter, answer))
            } else {
                still.append(waiter)
            }
        }
        state.waiters = still
        return ready
    }

    private func resume(_ ready: [(Waiter, Result<Piece, any Error>)]) {
        for (waiter, answer) in ready { waiter.continuation.resume(with: answer) }
        if !ready.isEmpty { room.signal() }
    }
}
