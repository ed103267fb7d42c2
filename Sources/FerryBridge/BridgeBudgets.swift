/// What the bridge may copy of one desktop offer so that it outlives its source (desktop-bridge
/// R3): bytes per type, bytes per selection, how long an owner may stay silent, how many types.
///
/// A type over its budget, or one that would push the selection over its own, is not kept: the
/// import is then incomplete (still served from its live source, never restored from). Defaults:
/// 64 MiB per type and 256 MiB per selection (a screenshot is a few MiB, a 4K PNG ~25 MiB; the
/// prototype used 64 MiB per type), 3 s of silence (wl-clip-persist), 50 types (Klipper).
package struct BridgeBudgets: Sendable, Hashable {
    /// The most bytes one type may have.
    package var bytesPerType: UInt64
    /// The most bytes all types of one selection may have together.
    package var bytesPerSelection: UInt64
    /// How long an owner may send nothing before its transfer is given up.
    package var idleTimeout: Duration
    /// The most types one import takes.
    package var maximumTypes: Int

    /// The defaults: 64 MiB per type, 256 MiB per selection, 3 s, 50 types.
    package static let defaults = BridgeBudgets(bytesPerType: 64 << 20, bytesPerSelection: 256 << 20,
                                               idleTimeout: .seconds(3), maximumTypes: 50)

    /// Makes budgets.
    package init(bytesPerType: UInt64, bytesPerSelection: UInt64, idleTimeout: Duration, maximumTypes: Int) {
        self.bytesPerType = bytesPerType
        self.bytesPerSelection = bytesPerSelection
        self.idleTimeout = idleTimeout
        self.maximumTypes = maximumTypes
    }

    /// The running total of one selection's copy: each type charges what it received.
    package struct Ledger: Sendable, Hashable {
        /// The bytes charged so far.
        package private(set) var charged: UInt64 = 0
        let budgets: BridgeBudgets

        /// An empty ledger under `budgets`.
        package init(_ budgets: BridgeBudgets) { self.budgets = budgets }

        /// How many more bytes the next type may have: the per-type budget, or what is left of
        /// the selection's, whichever is less.
        package var allowanceForNextType: UInt64 {
            min(budgets.bytesPerType, budgets.bytesPerSelection - min(charged, budgets.bytesPerSelection))
        }

        /// Charges `bytes` of a type; false (nothing charged) when they do not fit.
        package mutating func charge(_ bytes: UInt64) -> Bool {
            guard bytes <= budgets.bytesPerType, charged + bytes <= budgets.bytesPerSelection else { return false }
            charged += bytes
            return true
        }
    }
}
