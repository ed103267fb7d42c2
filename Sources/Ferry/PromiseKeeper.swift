import DBus
import FerryModel
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
actor PromiseKeeper {
    struct Entry {
        /// The id exactly as the broker spelled it.
        var wireID: String
        var provider: ItemProvider
        var path: ObjectPath
        /// Identifiers of the types still promised (not yet fulfilled).
        var promised: Set<String>
        var retireAt: ContinuousClock.Instant?
    }

    static let retention: Duration = .seconds(60)
    private var entries: [UUID: Entry] = [:]
    private var watches: [ObjectPath: Task<Void, Never>] = [:]

    /// Keeps `provider` for the item `id` on the pasteboard at `path`.
    func keep(_ provider: ItemProvider, id wireID: String, path: ObjectPath, promised: Set<String>) {
        guard !promised.isEmpty, let id = UUID(uuidString: wireID) else { return }
        entries[id] = Entry(wireID: wireID, provider: provider, path: path, promised: promised, retireAt: nil)
    }

    /// The representation of `type` (exact identifier) of item `id`, nil when not kept.
    func representation(item id: UUID, type: String) -> ItemProvider.Representation? {
        purge()
        return entries[id]?.provider.representations.first { $0.contentType.identifier == type }
    }

    /// The representations still promised (not retired), for a flush.
    func pending() -> [(id: UUID, wireID: String, path: ObjectPath, representation: ItemProvider.Representation)] {
        purge()
        var out: [(UUID, String, ObjectPath, ItemProvider.Representation)] = []
        for (id, entry) in entries.sorted(by: { $0.key.uuidString < $1.key.uuidString }) where entry.retireAt == nil {
            for representation in entry.provider.representations where entry.promised.contains(representation.contentType.identifier) {
                out.append((id, entry.wireID, entry.path, representation))
            }
        }
        return out
    }

    /// Notes that the broker now holds `type` of item `id` (or has dropped it).
    func fulfilled(item id: UUID, type: String) {
        entries[id]?.promised.remove(type)
    }

    /// Forgets every provider: nothing is left to serve or to flush.
    func abandonAll() {
        entries = [:]
    }

    /// Whether any representation is still promised.
    var hasPending: Bool { entries.values.contains { $0.retireAt == nil && !$0.promised.isEmpty } }

    /// After a change of the pasteboard at `path`: items of that pasteboard that are no longer
    /// among `live` (the ids the broker still lists with promised representations) retire.
    func reconcile(path: ObjectPath, live: Set<UUID>) {
        let deadline = ContinuousClock.now + Self.retention
        for (id, entry) in entries where entry.path == path && entry.retireAt == nil && !live.contains(id) {
            entries[id]?.retireAt = deadline
        }
        purge()
    }

    /// Whether a `Changed` watch runs for `path`.
    func isWatching(_ path: ObjectPath) -> Bool { watches[path] != nil }

    /// Installs the watch for `path` unless one runs already (then cancels `task`).
    func install(_ task: Task<Void, Never>, for path: ObjectPath) {
        guard watches[path] == nil else { return task.cancel() }
        watches[path] = task
    }

    /// Cancels every watch.
    func stopWatching() {
        for task in watches.values { task.cancel() }
        watches = [:]
    }

    private func purge() {
        let now = ContinuousClock.now
        entries = entries.filter { _, entry in entry.retireAt.map { $0 > now } ?? true }
    }
}
