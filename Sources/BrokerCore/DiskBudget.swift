import FerryModel
import Synchronization

/// How many bytes the blob files of a store may take in all (`ferryd --disk-budget`), and how
/// many they take now. A blob is charged chunk by chunk as it is written, so a descriptor that
/// never ends (`/dev/zero`, a 1 TiB sparse file) stops at the budget instead of filling the file
/// system, and two writes at once share one budget; a removed blob is refunded.
final class DiskBudget: Sendable {
    /// The most the blobs may take, in bytes.
    let limit: Int64
    private let used = Mutex<Int64>(0)

    init(limit: Int64) {
        precondition(limit >= 0, "a disk budget is not negative")
        self.limit = limit
    }

    /// The bytes charged now.
    var charged: Int64 { used.withLock { $0 } }

    /// Charges `bytes`, or refuses them when they would pass the budget.
    /// - Throws: `FerryModelError` `.tooLarge`, nothing charged.
    func charge(_ bytes: Int64) throws {
        let fits = used.withLock { used in
            guard bytes <= limit - used else { return false }
            used += bytes
            return true
        }
        guard fits else {
            throw FerryModelError(.tooLarge, "the pasteboards' files would take more than their budget of \(limit) bytes "
                                  + "(ferryd --disk-budget); clear a pasteboard or the history to make room")
        }
    }

    /// Gives back `bytes` charged earlier (a blob removed, a write that failed).
    func refund(_ bytes: Int64) {
        used.withLock { $0 = max(0, $0 - bytes) }
    }

    /// Sets what is charged to what the files on disk take (when the store opens).
    func reset(to bytes: Int64) {
        used.withLock { $0 = bytes }
    }
}
