#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// The current items of each pasteboard as last read from the store, and the bytes of small
/// representations read since, so that `Items`, `Read` and `ChangeCount` need not query SQLite
/// each time.
/// ``PasteboardService`` invalidates an entry whenever it changes that pasteboard (every store
/// mutation goes through it).
///
/// A read that raced with a change must not store what it read: every invalidation bumps the
/// pasteboard's generation, and an entry is stored only under the generation seen before the
/// store was read. Bytes follow one generation for all pasteboards, bumped by every invalidation.
///
/// A change that the store commits while readers go on (an app's promises dropped when it leaves)
/// runs inside ``changingAll(_:)``: from before the commit until after it, nothing is answered from
/// the cache, so no listing that follows a read of the new state shows the old one.
package final class PasteboardContentsCache: Sendable {
    private struct State {
        var entries: [String: (changeCount: UInt64, items: [StoredItem])] = [:]
        var generations: [String: UInt64] = [:]
        var epoch: UInt64 = 0  // bumped by invalidateAll, part of every generation
        var bytes: [BytesKey: Data] = [:]
        var bytesTotal = 0
        var bytesGeneration: UInt64 = 0
        var changesUnderway = 0  // changingAll calls running: no lookup hits, no store is kept

        /// Drops the cached bytes; stores begun before are refused.
        mutating func forgetBytes() {
            bytesGeneration &+= 1
            bytes.removeAll()
            bytesTotal = 0
        }
    }

    /// One representation of one item.
    struct BytesKey: Hashable {
        let item: UUID
        let type: String
    }

    /// The most bytes kept in all; past it the byte cache starts over.
    static let bytesLimit = 8 << 20

    private let state = Mutex(State())

    /// An empty cache.
    package init() {}

    /// The cached contents (unexpired at `now`) and the generation to pass to ``store(_:_:generation:)``.
    package func lookup(_ name: String, now: Date) -> (contents: (changeCount: UInt64, items: [StoredItem])?, generation: UInt64) {
        state.withLock { state in
            let generation = state.epoch &* 1_000_003 &+ (state.generations[name] ?? 0)
            guard state.changesUnderway == 0, let entry = state.entries[name] else { return (nil, generation) }
            return ((entry.changeCount, entry.items.filter { !$0.isExpired(at: now) }), generation)
        }
    }

    /// The cached change count of `name`; nil when its contents are not cached.
    package func changeCount(of name: String) -> UInt64? {
        state.withLock { state in state.changesUnderway == 0 ? state.entries[name]?.changeCount : nil }
    }

    /// Stores what was read from the store, unless the pasteboard changed since `generation`.
    package func store(_ name: String, _ contents: (changeCount: UInt64, items: [StoredItem]), generation: UInt64) {
        state.withLock { state in
            guard state.changesUnderway == 0,
                  state.epoch &* 1_000_003 &+ (state.generations[name] ?? 0) == generation else { return }
            state.entries[name] = contents
        }
    }

    /// The cached bytes of `type` of `item`, and the generation to pass to ``storeBytes(_:item:type:generation:)``.
    package func lookupBytes(item: UUID, type: String) -> (bytes: Data?, generation: UInt64) {
        state.withLock { state in
            (state.changesUnderway == 0 ? state.bytes[BytesKey(item: item, type: type)] : nil, state.bytesGeneration)
        }
    }

    /// Keeps bytes read from the store, unless anything changed since `generation`.
    package func storeBytes(_ bytes: Data, item: UUID, type: String, generation: UInt64) {
        state.withLock { state in
            guard state.changesUnderway == 0, state.bytesGeneration == generation else { return }
            if state.bytesTotal + bytes.count > Self.bytesLimit { state.forgetBytes() }
            state.bytes[BytesKey(item: item, type: type)] = bytes
            state.bytesTotal += bytes.count
        }
    }

    /// Forgets one pasteboard's contents (and every cached byte).
    package func invalidate(_ name: String) {
        state.withLock { state in
            state.generations[name, default: 0] &+= 1
            state.entries[name] = nil
            state.forgetBytes()
        }
    }

    /// Forgets everything (a promise fulfilled or dropped may touch any pasteboard).
    package func invalidateAll() {
        state.withLock { state in
            state.epoch &+= 1
            state.entries.removeAll()
            state.forgetBytes()
        }
    }

    /// Runs `change`, a store mutation that may touch any pasteboard, with the cache out of the
    /// way: forgotten before it, unused while it runs, forgotten again after it. Invalidating only
    /// afterwards leaves a gap between the commit and the invalidation in which a `Read` (its
    /// representation gone from the store: NotFound) and a listing from the cache (still showing
    /// it) disagree.
    package func changingAll<T>(_ change: () throws -> T) rethrows -> T {
        state.withLock { state in
            state.changesUnderway += 1
            state.epoch &+= 1
            state.entries.removeAll()
            state.forgetBytes()
        }
        defer {
            state.withLock { state in
                state.changesUnderway -= 1
                state.epoch &+= 1
                state.entries.removeAll()
                state.forgetBytes()
            }
        }
        return try change()
    }
}

