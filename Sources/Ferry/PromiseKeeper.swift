import DBus
import FerryModel
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The item providers behind this client's promised representations, by the item ids the broker
/// gave them, so `org.ferry.Client1.ProvideRepresentation` and ``FerryClient/flush()`` can load
/// them.
///
/// A provider is kept while the broker may still ask for it: while its item is on its pasteboard
/// (or in the general pasteboard's history) with a representation still promised. When a
/// `Changed` signal shows it gone, it is retired and forgotten a transfer timeout (60 s) later,
/// so transfers already started still complete.
///
/// The broker names an item only in its reply to the write, and may ask for the item before this
/// client has handled that reply: readers hear the change as it is written, and may paste at
/// once. So a write that promises runs inside ``writing(_:)``, and a lookup of an item not kept
/// yet waits for the writes under way when it came (``representation(item:type:)``).
final class PromiseKeeper: Sendable {
    struct Entry {
        /// The id exactly as the broker spelled it.
        var wireID: String
        var provider: ItemProvider
        var path: ObjectPath
        /// Identifiers of the types still promised (not yet fulfilled).
        var promised: Set<String>
        var retireAt: ContinuousClock.Instant?
    }

    private struct State {
        var entries: [UUID: Entry] = [:]
        var watches: [ObjectPath: Task<Void, Never>] = [:]
        /// Promising writes whose items are not kept yet, by number.
        var writes: Set<UInt64> = []
        var nextWrite: UInt64 = 0
        /// Lookups waiting for the writes that were under way when they came.
        var waiters: [(writes: Set<UInt64>, continuation: CheckedContinuation<Void, Never>)] = []

        mutating func purge() {
            let now = ContinuousClock.now
            entries = entries.filter { _, entry in entry.retireAt.map { $0 > now } ?? true }
        }
    }

    static let retention: Duration = .seconds(60)
    /// A lock, not an actor: `ProvideRepresentation` looks a promise up on the connection's
    /// thread, which an actor would make hop to the pool and back.
    private let state = Mutex(State())

    /// Keeps `provider` for the item `id` on the pasteboard at `path`.
    func keep(_ provider: ItemProvider, id wireID: String, path: ObjectPath, promised: Set<String>) {
        guard !promised.isEmpty, let id = UUID(uuidString: wireID) else { return }
        state.withLock { $0.entries[id] = Entry(wireID: wireID, provider: provider, path: path, promised: promised, retireAt: nil) }
    }

    /// Runs `body`, a write that promises and keeps its providers once the broker has named their
    /// items: lookups of items not kept yet wait for it to end.
    func writing<T>(_ body: () async throws(FerryError) -> T) async throws(FerryError) -> T {
        let number = state.withLock { state in
            defer { state.nextWrite += 1 }
            state.writes.insert(state.nextWrite)
            return state.nextWrite
        }
        defer {
            let done = state.withLock { state in
                state.writes.remove(number)
                var done: [CheckedContinuation<Void, Never>] = []
                state.waiters = state.waiters.compactMap { waiter in
                    var waiter = waiter
                    waiter.writes.remove(number)
                    guard waiter.writes.isEmpty else { return waiter }
                    done.append(waiter.continuation)
                    return nil
                }
                return done
            }
            for continuation in done { continuation.resume() }
        }
        return try await body()
    }

    /// The representation of `type` (exact identifier) of item `id`, nil when not kept — once the
    /// writes under way (``writing(_:)``) have ended, since one of them may be the item's.
    func representation(item id: UUID, type: String) async -> ItemProvider.Representation? {
        if let found = lookUp(item: id, type: type) { return found }
        await writesUnderWay(unlessKept: id)
        return lookUp(item: id, type: type)
    }

    /// Returns once the promising writes under way now (``writing(_:)``) have ended, so their
    /// providers are kept; at once when there are none, or when item `id` is kept already.
    func writesUnderWay(unlessKept id: UUID? = nil) async {
        await withCheckedContinuation { continuation in
            let waiting = state.withLock { state in
                guard !state.writes.isEmpty, id.map({ state.entries[$0] == nil }) ?? true else { return false }
                state.waiters.append((state.writes, continuation))
                return true
            }
            if !waiting { continuation.resume() }
        }
    }

    private func lookUp(item id: UUID, type: String) -> ItemProvider.Representation? {
        state.withLock { state in
            state.purge()
            return state.entries[id]?.provider.representations.first { $0.contentType.identifier == type }
        }
    }

    /// The representations still promised (not retired), for a flush.
    func pending() -> [(id: UUID, wireID: String, path: ObjectPath, representation: ItemProvider.Representation)] {
        state.withLock { state in
            state.purge()
            var out: [(UUID, String, ObjectPath, ItemProvider.Representation)] = []
            for (id, entry) in state.entries.sorted(by: { $0.key.uuidString < $1.key.uuidString }) where entry.retireAt == nil {
                for representation in entry.provider.representations where entry.promised.contains(representation.contentType.identifier) {
                    out.append((id, entry.wireID, entry.path, representation))
                }
            }
            return out
        }
    }

    /// Notes that the broker now holds `type` of item `id` (or has dropped it).
    func fulfilled(item id: UUID, type: String) {
        _ = state.withLock { $0.entries[id]?.promised.remove(type) }
    }

    /// Forgets every provider: nothing is left to serve or to flush.
    func abandonAll() {
        state.withLock { $0.entries = [:] }
    }

    /// Whether any representation is still promised.
    var hasPending: Bool {
        state.withLock { $0.entries.values.contains { $0.retireAt == nil && !$0.promised.isEmpty } }
    }

    /// After a change of the pasteboard at `path`: items of that pasteboard that are no longer
    /// among `live` (the ids the broker still lists with promised representations) retire.
    func reconcile(path: ObjectPath, live: Set<UUID>) {
        let deadline = ContinuousClock.now + Self.retention
        state.withLock { state in
            for (id, entry) in state.entries where entry.path == path && entry.retireAt == nil && !live.contains(id) {
                state.entries[id]?.retireAt = deadline
            }
            state.purge()
        }
    }

    /// Whether a `Changed` watch runs for `path`.
    func isWatching(_ path: ObjectPath) -> Bool { state.withLock { $0.watches[path] != nil } }

    /// Installs the watch for `path` unless one runs already (then cancels `task`).
    func install(_ task: Task<Void, Never>, for path: ObjectPath) {
        let installed = state.withLock { state -> Bool in
            guard state.watches[path] == nil else { return false }
            state.watches[path] = task
            return true
        }
        if !installed { task.cancel() }
    }

    /// Cancels every watch.
    func stopWatching() {
        let watches = state.withLock { state in
            defer { state.watches = [:] }
            return state.watches
        }
        for task in watches.values { task.cancel() }
    }
}
