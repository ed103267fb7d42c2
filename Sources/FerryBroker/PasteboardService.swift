#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import BrokerCore
import DBus
import Dispatch
import FerryModel
import FerrySystem
import Logging
import Synchronization

/// The pasteboards on the bus: one `org.ferry.Pasteboard1` object per pasteboard at
/// `PasteboardName.objectPath(name)`, on top of the durable ``PasteboardStore``.
///
/// The store holds the items and the change counts; this actor holds what lives only while
/// ferryd runs: which objects are exported, the items of writes that contained a sensitive item
/// (``VolatileContent``), the last change announced per pasteboard, and the expiry timer.
/// Method handlers do their work outside the actor (the store serializes itself), and writes
/// that read descriptors run on ``BlockingWork`` threads, so a 1 GiB copy never stalls other
/// calls.
package actor PasteboardService {
    /// The interface's name.
    package static let interfaceName: InterfaceName = "org.ferry.Pasteboard1"
    /// The interface's version (its `Version` property).
    package static let version: UInt32 = 5
    /// Held bytes below this size are read inline (`ay`), larger ones as an fd: the measured
    /// inline/fd crossover (16 KiB).
    package static let inlineReadLimit = 16 * 1024
    /// How long `Read` waits for the source of a promise estimated below ``inlineReadLimit`` before
    /// handing the reader the pipe instead of the bytes.
    package static let promiseInlineWindow: Duration = .milliseconds(50)

    /// The connection the pasteboards are served on.
    package nonisolated let connection: Connection
    /// The durable storage.
    package nonisolated let store: PasteboardStore
    /// The registered apps (who is an app, its client object).
    package nonisolated let registry: AppRegistry
    /// The paste policy.
    package nonisolated let policy: PastePolicyFile
    /// Serves promised representations from their apps.
    package nonisolated let relay: PromiseRelay
    /// The reads waiting for the user's consent (the policy said `ask`).
    package nonisolated let consents: PasteConsents
    /// The apps with a foreground scene (the scene service keeps it): they may paste.
    package nonisolated let foregroundApps: SceneService.ForegroundApps
    nonisolated let ownUID: UInt32
    /// What the transient pasteboards and the sensitive writes may hold in memory, in all and per caller.
    package nonisolated let memory: MemoryBudget
    /// Where the service says what happened (info, debug detail) and what it could not do (warnings, errors).
    package nonisolated let logger: Logger
    nonisolated let expiryWake = Wake()
    /// Where paste records are written, in order, off the reader's path.
    nonisolated let pasteLogQueue = DispatchQueue(label: "org.ferry.broker.paste-log")
    /// The current items of each pasteboard, so reads need not query the store each time.
    nonisolated let contentsCache = PasteboardContentsCache()
    /// Paste records not written yet; the first one queues a drain.
    nonisolated let pendingPastes = Mutex<[PasteRecord]>([])
    /// Callers' credentials, asked of the bus once per connection: the broker's one cache, which
    /// the other services share.
    nonisolated let callers: CallerCache
    /// Continuity (issue #22): serves remote items' bytes and hears of the general pasteboard's
    /// changes; nil while it is off (``setContinuity(_:)``).
    nonisolated let continuity = Mutex<(any ContinuityHooks)?>(nil)

    var exported: Set<String> = []
    var volatile: [String: VolatileContent] = [:] {
        didSet {
            hasVolatileContent.withLock { [volatile] in $0 = Set(volatile.keys) }
            var released = 0
            for name in oldValue.keys where volatile[name] == nil { released += memory.release(Self.sensitiveKey(name)) }
            if released > 0 { FreedMemory.returnToSystem() }
        }
    }
    /// The pasteboards with volatile content, readable without a hop to the actor (most reads
    /// find none and need not wait for it).
    nonisolated let hasVolatileContent = Mutex<Set<String>>([])
    var announced: [String: UInt64] = [:]
    /// The connections (unique names) that asked for each named pasteboard's path
    /// (`Broker1.Pasteboard`, the same uid by then): its signals go to them only, so that its
    /// name, which may be private, is not broadcast. Forgotten when they leave the bus.
    var openers: [String: Set<String>] = [:]
    /// The transient pasteboards (drags', shares'), by name: who may use them and their items (memory only). A Mutex,
    /// not actor state, so that access checks and reads need no hop to the actor.
    nonisolated let transients = Mutex<[String: TransientPasteboard]>([:])

    /// Makes the service; nothing is exported until ``exportAll()``.
    /// - Parameters:
    ///   - connection: the broker's connection.
    ///   - store: the open store.
    ///   - registry: the registered apps.
    ///   - policy: who may paste.
    ///   - relay: serves promised representations from their apps.
    ///   - ownUID: the broker's uid; callers of another uid are refused.
    ///   - foregroundApps: the apps with a foreground scene, for the paste policy.
    ///   - memory: what transient pasteboards and sensitive writes may hold in memory.
    ///   - consentTimeout: how long a read the policy asks about waits for the user's answer.
    ///   - logger: where events, refusals and failures are logged.
    package init(connection: Connection, store: PasteboardStore, registry: AppRegistry, policy: PastePolicyFile,
                relay: PromiseRelay, ownUID: UInt32,
                foregroundApps: SceneService.ForegroundApps = SceneService.ForegroundApps(),
                memory: MemoryBudget = MemoryBudget(),
                consentTimeout: Duration = PasteConsents.defaultTimeout,
                logger: Logger) {
        self.connection = connection
        self.store = store
        self.registry = registry
        self.policy = policy
        self.relay = relay
        self.foregroundApps = foregroundApps
        self.ownUID = ownUID
        self.callers = CallerCache(ownUID: ownUID)
        self.memory = memory
        self.consents = PasteConsents(timeout: consentTimeout,
                                      requested: { Self.announceConsentRequest($0, on: connection) },
                                      ended: { Self.announceConsentEnd($0, $1, on: connection) })
        self.logger = logger
    }

    /// The key under which ``memory`` holds a pasteboard's sensitive items.
    static func sensitiveKey(_ name: String) -> String { "sensitive " + name }

    // MARK: - Objects

    /// Exports the general pasteboard and every named one the store has.
    package func exportAll() throws {
        try export(PasteboardName.general)
        for name in try store.pasteboards() { try export(name) }
    }

    /// Exports the pasteboard's object unless it is exported already; returns its path.
    @discardableResult
    func export(_ name: String) throws -> ObjectPath {
        let path = try ObjectPath(PasteboardName.objectPath(name))
        if !exported.contains(name) {
            try connection.export(interface(for: name), at: path)
            exported.insert(name)
            if announced[name] == nil { announced[name] = try? store.changeCount(of: name) }
        }
        return path
    }

    /// The object path of the pasteboard `name`, creating (durably) and exporting it if needed and
    /// `create` allows: reading, listing, clearing and watching never create a pasteboard.
    ///
    /// A reserved name (``PasteboardName/reservedPrefix``) is never created: an existing transient
    /// pasteboard's path is given to its writers and metadata readers (and to the broker itself,
    /// `caller` nil); a reserved pasteboard an older store holds stays reachable.
    ///
    /// D-Bus: `org.ferry.Broker1.Pasteboard`.
    /// - Parameters:
    ///   - name: the pasteboard's name.
    ///   - caller: the caller's unique bus name; nil for the broker's own use.
    ///   - create: whether a named pasteboard that does not exist yet is created (`create` option).
    /// - Throws: `FerryModelError` `.invalidArgument` for a bad name or a reserved one the caller
    ///   cannot have, `.notFound` for a pasteboard that does not exist when `create` is false.
    package func pasteboardPath(named name: String, caller: String? = nil, create: Bool = true) throws -> ObjectPath {
        try PasteboardName.validate(name)
        if PasteboardName.isReserved(name), !exported.contains(name) {
            let allowed = transients.withLock { transients in
                transients[name].map { transient in
                    caller.map { transient.access.writers.contains($0) || transient.access.metadataReaders.contains($0) } ?? true
                } ?? false
            }
            guard allowed else {
                throw FerryModelError(.invalidArgument, "\"\(name)\": names starting with \"\(PasteboardName.reservedPrefix)\" are "
                                      + "reserved for the broker's own pasteboards (a drag's or share's is given to its parties)")
            }
            return try ObjectPath(PasteboardName.objectPath(name))
        }
        if !exported.contains(name) {
            if !create {
                _ = try store.changeCount(of: name)  // NotFound: "there is no pasteboard …"
            } else if try store.createPasteboard(name) {
                logger.info("created pasteboard \(name)")
            }
        }
        let path = try export(name)
        if let caller, name != PasteboardName.general { openers[name, default: []].insert(caller) }
        return path
    }

    /// Removes a named pasteboard: its items go, a last `Changed` is emitted, its object goes.
    ///
    /// D-Bus: `org.ferry.Broker1.RemovePasteboard`.
    /// - Throws: `FerryModelError` `.invalidArgument` for `general` or a bad name, `.notFound`
    ///   for an unknown pasteboard.
    package func removePasteboard(_ name: String) throws {
        try PasteboardName.validate(name)
        if PasteboardName.isReserved(name), !exported.contains(name) {
            throw FerryModelError(.invalidArgument, "\"\(name)\" is one of the broker's own pasteboards: a drag's or share's goes when it ends")
        }
        let last = try store.changeCount(of: name)
        try store.removePasteboard(name)
        contentsCache.invalidate(name)
        volatile[name] = nil
        announce(name, changeCount: last + 1)
        if exported.remove(name) != nil, let path = try? ObjectPath(PasteboardName.objectPath(name)) {
            connection.unexport(path)
        }
        announced[name] = nil
        logger.info("removed pasteboard \(name)")
    }

    /// The names of all pasteboards, `general` first.
    ///
    /// D-Bus: `org.ferry.Broker1.ListPasteboards`.
    package nonisolated func pasteboardNames() throws -> [String] {
        try store.pasteboards()
    }

    // MARK: - Changes

    /// Records a change the store made and announces it: `PropertiesChanged` for `ChangeCount`
    /// and `Changed`. A write that completed before a later one announced is not announced
    /// again (change counts only go up).
    func didChange(_ name: String, changeCount: UInt64, volatile content: VolatileContent? = nil) {
        contentsCache.invalidate(name)
        if let content {
            // A later write may have been announced already: then this content is stale.
            if content.changeCount >= max(volatile[name]?.changeCount ?? 0, announced[name] ?? 0) { volatile[name] = content }
        } else if let current = volatile[name], current.changeCount < changeCount {
            volatile[name] = nil
        }
        // A sensitive write that lost to a later one was charged but is not held.
        if volatile[name] == nil, memory.release(Self.sensitiveKey(name)) > 0 { FreedMemory.returnToSystem() }
        if !exported.contains(name) { _ = try? export(name) }
        announce(name, changeCount: changeCount)
        expiryWake.signal()
        if name == PasteboardName.general {
            continuity.withLock { $0 }?.generalChanged(changeCount: changeCount)
        } else {
            continuity.withLock { $0 }?.namedPasteboardChanged(name, changeCount: changeCount)
        }
    }

    /// Emits `PropertiesChanged` for `ChangeCount` and `Changed`: the general pasteboard's to
    /// everyone, a named one's only to its ``openers`` (its path carries its name), or only to
    /// `parties` (unique names: a transient pasteboard's parties, so that nobody else learns of its
    /// changes).
    func announce(_ name: String, changeCount: UInt64, to parties: Set<String>? = nil) {
        if let last = announced[name], last >= changeCount { return }
        announced[name] = changeCount
        guard let path = try? ObjectPath(PasteboardName.objectPath(name)) else { return }
        let recipients = parties ?? (name == PasteboardName.general ? nil : openers[name] ?? [])
        guard let recipients else {
            try? connection.emitPropertiesChanged(path: path, interface: Self.interfaceName,
                                                  changed: ["ChangeCount": .uint64(changeCount)])
            try? connection.emit(path: path, interface: Self.interfaceName, member: "Changed", body: [.uint64(changeCount)])
            return
        }
        let properties: [DBusValue] = [
            .string(Self.interfaceName.rawValue),
            .dictionary(key: .string, value: .variant,
                        entries: [DBusDictionaryEntry(key: .string("ChangeCount"), value: .variant(.uint64(changeCount)))]),
            .array(element: .string, elements: []),
        ]
        for recipient in recipients.sorted() {
            guard let destination = try? BusName(recipient) else { continue }
            try? connection.emit(path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                                 body: properties, destination: destination)
            try? connection.emit(path: path, interface: Self.interfaceName, member: "Changed", body: [.uint64(changeCount)],
                                 destination: destination)
        }
    }

    /// The volatile items of `name`, when they are still current.
    func volatileContent(_ name: String, changeCount: UInt64) -> VolatileContent? {
        guard let content = volatile[name], content.changeCount == changeCount else { return nil }
        return content
    }

    /// Hands the bytes of a volatile item's promise to the broker (`Fulfill` on a sensitive write).
    /// - Returns: false when no volatile item has that id.
    /// - Throws: `FerryModelError` as ``PasteboardStore/fulfillPromise(item:representation:data:from:now:)``.
    func fulfillVolatile(item: UUID, type: ContentType, data: Data, from owner: String) throws -> Bool {
        for (name, var content) in volatile {
            guard try content.fulfill(item: item, type: type, data: data, from: owner) else { continue }
            volatile[name] = content
            return true
        }
        return false
    }

    // MARK: - Paste log

    /// Records a paste without making the reader wait for it: records are queued and written
    /// in order, all those of the last ``pasteLogDelay`` in one transaction (no fsync; see
    /// persistence.md), and ``pasteLog(limit:)`` writes those still queued first. A crash of
    /// ferryd can lose the records of that last moment.
    nonisolated func logPaste(_ record: PasteRecord) {
        let startDrain = pendingPastes.withLock { pending in
            pending.append(record)
            return pending.count == 1
        }
        guard startDrain else { return }
        pasteLogQueue.asyncAfter(deadline: .now() + Self.pasteLogDelay) { self.writePendingPastes() }
    }

    /// How long a paste record waits to share its transaction with the next ones: a burst of
    /// reads then costs one write, not one each (a write per read took a third of ferryd's CPU).
    static let pasteLogDelay: DispatchTimeInterval = .milliseconds(100)

    /// Writes the queued paste records (on the paste-log queue).
    private nonisolated func writePendingPastes() {
        let records = pendingPastes.withLock { pending in
            defer { pending.removeAll() }
            return pending
        }
        do {
            try store.logPastes(records)
        } catch {
            logger.error("cannot log \(records.count) paste(s): \(error)")
        }
    }

    /// The last `limit` pastes, newest first, including those still queued.
    ///
    /// D-Bus: `org.ferry.Broker1.PasteLog`.
    package nonisolated func pasteLog(limit: Int) async throws -> [PasteRecord] {
        let store = self.store
        return try await withCheckedThrowingContinuation { continuation in
            pasteLogQueue.async {
                self.writePendingPastes()
                continuation.resume(with: Result { try store.pasteLog(limit: limit) })
            }
        }
    }

    // MARK: - Connections

    /// A unique name left the bus: forget its credentials, and when it was a registered app,
    /// turn its promises into unavailable markers (not a change: nothing is announced).
    package func connectionClosed(_ uniqueName: String, wasRegistered: Bool) {
        callers.forget(uniqueName)
        consents.withdraw(uniqueName: uniqueName)
        for name in Array(openers.keys) {
            openers[name]?.remove(uniqueName)
            if openers[name]?.isEmpty == true { openers[name] = nil }
        }
        guard wasRegistered else { return }
        dropPromises(of: uniqueName)
    }

    /// Drops the promises of `owner` (it left without handing them over): in the store its
    /// promised representations go, and items left with none; a pasteboard left with no item is
    /// empty, or for the general pasteboard back to its previous content from the history. Each
    /// pasteboard that changed gets a new change count, announced, and a log line. A drag's or
    /// share's pasteboard keeps unavailable markers instead (its items keep their indexes).
    package func dropPromises(of owner: String) {
        defer { contentsCache.invalidateAll() }
        dropTransientPromises(of: owner)
        do {
            // The cache steps aside from before the commit to after it: otherwise a listing from
            // the cache could still show a dropped promise that a read already refused.
            let store = self.store
            let changes = try contentsCache.changingAll { try store.dropPromises(of: owner) }
            for (name, change) in changes.sorted(by: { $0.key < $1.key }) {
                if var content = volatile[name] {
                    // A sensitive write held in memory: the same items go there, or all of it
                    // when the store fell back to the history or has nothing left.
                    if change.restoredHistory || change.remainingItems == 0 {
                        volatile[name] = nil
                    } else {
                        content.removePromises(of: owner)
                        content.changeCount = change.changeCount
                        volatile[name] = content
                    }
                }
                let outcome = change.restoredHistory ? "it is back to its previous content"
                    : change.remainingItems == 0 ? "it is empty" : "\(change.remainingItems) item(s) remain"
                logger.warning("""
                    \(owner) left without handing over \(change.representations) promised representation(s) on \(name): \
                    dropped them and \(change.items) item(s) left with nothing; \(outcome)
                    """)
                didChange(name, changeCount: change.changeCount)
            }
        } catch {
            logger.error("cannot drop the promises of \(owner): \(error)")
        }
    }

    // MARK: - Expiry

    /// Removes expired items when they expire and announces the change, until cancelled. Every
    /// write wakes it, so a nearer expiration date is noticed.
    package func runExpiry() async {
        while !Task.isCancelled {
            let next = nextExpiration()
            if let next, next <= Date() {
                expire(now: Date())
                if let again = nextExpiration(), again <= Date() {
                    // The store failed to remove them: try again in a second, do not spin.
                    await expiryWake.wait(until: .now + .seconds(1))
                }
                continue
            }
            let wait = next.map { $0.timeIntervalSinceNow } ?? 3600
            let deadline = ContinuousClock.now + .milliseconds(Int64(min(max(wait, 0), 3600) * 1000) + 1)
            await expiryWake.wait(until: deadline)
        }
    }

    private func nextExpiration() -> Date? {
        let stored = (try? store.nextExpiration()) ?? nil
        let inMemory = volatile.values.compactMap(\.nextExpiration).min()
        return [stored, inMemory].compactMap { $0 }.min()
    }

    private func expire(now: Date) {
        var touched: Set<String> = []
        do {
            touched = try store.removeExpired(now: now)
        } catch {
            logger.error("cannot remove expired items: \(error)")
        }
        for (name, content) in volatile {
            guard (try? store.changeCount(of: name)) == content.changeCount else {
                volatile[name] = nil  // replaced meanwhile
                continue
            }
            if content.items.contains(where: { $0.isExpired(at: now) }) {
                volatile[name]?.items.removeAll { $0.isExpired(at: now) }
                touched.insert(name)
            }
        }
        for name in touched.sorted() {
            contentsCache.invalidate(name)
            guard let count = try? store.incrementChangeCount(of: name) else { continue }
            if let content = volatile[name], content.changeCount == count - 1 { volatile[name]?.changeCount = count }
            logger.info("items of \(name) expired")
            announce(name, changeCount: count)
        }
    }
}
