import FerryModel
import Synchronization

/// What the broker may hold in memory of items that live only there — transient pasteboards
/// (drags', shares') and writes with a sensitive item — in all (`ferryd --memory-budget`) and per
/// caller (`--caller-memory-budget`): 250 drags of 16 MiB begun and abandoned are refused long
/// before they hold 4 GB. Each holding is charged to the caller that wrote it, under a key (the
/// pasteboard's name), and released when it goes.
package final class MemoryBudget: Sendable {
    /// The default total budget: 256 MiB.
    package static let defaultTotal = 256 << 20
    /// The default budget of one caller: 64 MiB.
    package static let defaultPerCaller = 64 << 20

    /// The most held in all, in bytes.
    package let total: Int
    /// The most one caller's holdings may take, in bytes.
    package let perCaller: Int
    private let holdings = Mutex<[String: Holding]>([:])

    /// One thing held: who wrote it and how many bytes it holds.
    package struct Holding: Sendable, Equatable {
        var caller: String
        var bytes: Int
    }

    /// A budget of `total` bytes in all and `perCaller` bytes per caller.
    package init(total: Int = defaultTotal, perCaller: Int = defaultPerCaller) {
        precondition(total >= 0 && perCaller >= 0, "memory budgets are not negative")
        self.total = total
        self.perCaller = perCaller
    }

    /// The bytes held in all now.
    package var held: Int { holdings.withLock { $0.values.reduce(0) { $0 + $1.bytes } } }

    /// How many more bytes `caller` could hold under `key` (what `key` holds now being replaced).
    package func room(for caller: String, replacing key: String) -> Int {
        holdings.withLock { holdings in
            var all = 0, own = 0
            for (name, holding) in holdings where name != key {
                all += holding.bytes
                if holding.caller == caller { own += holding.bytes }
            }
            return max(0, min(total - all, perCaller - own))
        }
    }

    /// Makes `key` hold `bytes` written by `caller`, replacing what it held, or refuses.
    /// - Returns: what `key` held before (for ``restore(_:_:)``).
    /// - Throws: `FerryModelError` `.tooLarge` naming the budget that would be passed; nothing
    ///   changes then.
    @discardableResult
    package func charge(_ key: String, caller: String, bytes: Int) throws(FerryModelError) -> Holding? {
        try holdings.withLock { holdings throws(FerryModelError) -> Holding? in
            var all = bytes, own = bytes
            for (name, holding) in holdings where name != key {
                all += holding.bytes
                if holding.caller == caller { own += holding.bytes }
            }
            guard own <= perCaller else {
                throw FerryModelError(.tooLarge, "this caller's items in the broker's memory would take \(own) bytes; at most "
                                      + "\(perCaller) (ferryd --caller-memory-budget): end a drag or share, or promise the bytes")
            }
            guard all <= total else {
                throw FerryModelError(.tooLarge, "the items in the broker's memory would take \(all) bytes; at most \(total) "
                                      + "(ferryd --memory-budget): promise the bytes instead")
            }
            let previous = holdings[key]
            holdings[key] = Holding(caller: caller, bytes: bytes)
            return previous
        }
    }

    /// Puts back what `key` held before a ``charge(_:caller:bytes:)`` whose write failed.
    package func restore(_ key: String, _ previous: Holding?) {
        holdings.withLock { $0[key] = previous }
    }

    /// Releases what `key` holds. Returns the bytes released.
    @discardableResult
    package func release(_ key: String) -> Int {
        holdings.withLock { $0.removeValue(forKey: key)?.bytes ?? 0 }
    }
}
