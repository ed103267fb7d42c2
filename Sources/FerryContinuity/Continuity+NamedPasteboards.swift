import BrokerCore
import FerryBroker
import FerryModel
import Foundation
import Logging
import Synchronization

/// Named pasteboards opted in to continuity (`ferryd --continuity-pasteboards notes,work`, or
/// `continuity-pasteboards = notes, work` in continuity.conf): each is carried like the general
/// pasteboard, announced under its own bucket key per device (`DEVICE.NAME`), its remote items
/// put on the receiving device's pasteboard of the same name (made there when missing), newest
/// first by the hybrid clock, per pasteboard.
///
/// The user opts in, per device, not the app: a named pasteboard is an app's own place (a
/// find field's text, a document's private clipboard), and an app cannot widen what leaves the
/// machine. A name crosses only between devices that both list it: the sender announces only
/// what it lists, and the receiver ignores announcements of names it does not list (so no
/// device's announcement can write into a pasteboard that an app here keeps to itself).
extension Continuity {
    /// What continuity keeps of one named pasteboard: as ``State``'s fields of the general one.
    struct NamedBoard {
        /// The stamp of the newest local copy (announced or not).
        var localStamp: ClockStamp?
        /// The last announcement of this device, sent again after a reconnect.
        var announced: Envelope?
        /// The stamp of the remote copy on the pasteboard now.
        var appliedStamp: ClockStamp?
    }

    /// The bucket key of `device`'s announcements of `pasteboard` (nil: the general pasteboard,
    /// whose key is the device's name).
    static func bucketKey(_ device: String, pasteboard: String?) -> String {
        pasteboard.map { "\(device).\($0)" } ?? device
    }

    /// The device and pasteboard (nil: the general one) of a bucket key; nil when the key is
    /// neither a device's name nor `DEVICE.NAME` with a valid pasteboard name.
    static func parseBucketKey(_ key: String) -> (device: String, pasteboard: String?)? {
        guard let dot = key.firstIndex(of: ".") else {
            return Subjects.isValidDevice(key) ? (key, nil) : nil
        }
        let device = String(key[..<dot]), name = String(key[key.index(after: dot)...])
        guard Subjects.isValidDevice(device), (try? PasteboardName.validate(name)) != nil, name != PasteboardName.general,
              !PasteboardName.isReserved(name)
        else { return nil }
        return (device, name)
    }

    /// ContinuityHooks: a change of a named pasteboard (on the pasteboard actor).
    package func namedPasteboardChanged(_ name: String, changeCount: UInt64) {
        guard configuration.pasteboards.contains(name) else { return }
        queue.async { self.localChange(on: name, changeCount: changeCount) }
    }

    /// A local change of the opted-in pasteboard `name`: announced as a copy to the general
    /// pasteboard is.
    func localChange(on name: String, changeCount: UInt64) {
        guard let items = try? pasteboards.store.items(in: name) else { return }
        // Its own writes of remote items come back here: not a local copy.
        if !items.isEmpty, items.allSatisfy({ $0.options.origin?.hasPrefix(Self.originPrefix) == true }) { return }
        let stamp = clock.tick()
        var envelope = Self.envelope(of: items, device: device, stamp: stamp, changeCount: changeCount)
        envelope.pasteboard = name
        let announce = state.withLock { state in
            var board = state.named[name] ?? NamedBoard()
            defer { state.named[name] = board }
            board.localStamp = stamp
            board.appliedStamp = nil
            guard !envelope.items.isEmpty || board.announced?.items.isEmpty == false else { return false }
            board.announced = envelope
            return true
        }
        if announce { put(envelope) }
    }

    /// Puts another device's announcement of the named pasteboard `name` on the pasteboard of
    /// that name here, when it is newer than what is there.
    func apply(_ envelope: Envelope, on name: String) async {
        let newer = state.withLock { state in
            let board = state.named[name] ?? NamedBoard()
            let newest = [board.localStamp, board.appliedStamp].compactMap { $0 }.max()
            guard newest.map({ envelope.stamp > $0 }) ?? true else { return false }
            state.named[name, default: NamedBoard()].appliedStamp = envelope.stamp
            return true
        }
        guard newer else { return }
        await show(envelope, on: name)
    }

    /// This device's last announcement of each opted-in named pasteboard.
    var namedAnnouncements: [Envelope] {
        state.withLock { state in state.named.values.compactMap(\.announced) }
    }

    /// Clears the remote items of every opted-in named pasteboard (the engine is gone).
    func dropNamedRemoteItems() async {
        state.withLock { state in
            for name in state.named.keys { state.named[name]?.appliedStamp = nil }
        }
        for name in configuration.pasteboards.sorted() {
            _ = try? await pasteboards.clearRemoteItems(on: name) { $0.options.origin?.hasPrefix(Self.originPrefix) == true }
        }
    }

    /// The item `id` on the general pasteboard or on an opted-in named one (the pasteboards this
    /// device announces), as a chunk request names it.
    func announcedItem(_ id: UUID) throws -> StoredItem? {
        func find(on name: String) throws -> StoredItem? {
            try pasteboards.storedContents(of: name).items.first { $0.id == id }
        }
        if let item = try find(on: PasteboardName.general) { return item }
        let existing = Set(try pasteboards.store.pasteboards())
        for name in configuration.pasteboards.sorted() where existing.contains(name) {
            if let item = try find(on: name) { return item }
        }
        return nil
    }
}
