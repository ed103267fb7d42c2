#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What `ferry bridge status` tells: the backend, each selection, the last import and export, and
/// the budgets in force.
///
/// D-Bus: the reply of `org.ferry.Bridge1.Status`.
public struct BridgeStatus: Sendable, Hashable {
    /// Who holds a selection, as far as the bridge knows.
    public enum Owner: String, Sendable, Hashable {
        /// A desktop app.
        case desktop
        /// The bridge, serving a Ferry item.
        case ferry
        /// Nobody.
        case none
    }

    /// One transfer between the desktop and Ferry.
    public struct Transfer: Sendable, Hashable {
        /// When it happened.
        public var time: Date
        /// The Ferry pasteboard's change count it made (import) or served (export).
        public var changeCount: UInt64
        /// Import: every storable type copied, so the item outlives its source. Export: the bridge
        /// owns the selection.
        public var isComplete: Bool
        /// The item was sensitive (a password manager's secret).
        public var isSensitive: Bool

        /// Makes a record.
        public init(time: Date, changeCount: UInt64, isComplete: Bool, isSensitive: Bool = false) {
            self.time = time
            self.changeCount = changeCount
            self.isComplete = isComplete
            self.isSensitive = isSensitive
        }
    }

    /// One selection's state.
    public struct Selection: Sendable, Hashable {
        /// Who holds it.
        public var owner: Owner = .none
        /// The names its owner offers (the bridge's own names when it is Ferry).
        public var offeredTypes: [String] = []
        /// The last desktop copy published in Ferry.
        public var lastImport: Transfer?
        /// The last Ferry item put on the desktop.
        public var lastExport: Transfer?

        /// An empty selection.
        public init() {}
    }

    /// The protocol in use (`x11-xfixes`, `ext-data-control-v1`, `wlr-data-control-v2`).
    public var protocolName: String
    /// The display (`:0`, `wayland-1`).
    public var display: String
    /// Whether the bridge owns X11's `CLIPBOARD_MANAGER`.
    public var isClipboardManager: Bool
    /// CLIPBOARD.
    public var clipboard: Selection
    /// PRIMARY.
    public var primary: Selection
    /// The budgets in force.
    public var budgets: BridgeBudgets

    /// Makes a status.
    public init(protocolName: String, display: String, isClipboardManager: Bool, clipboard: Selection,
                primary: Selection, budgets: BridgeBudgets) {
        self.protocolName = protocolName
        self.display = display
        self.isClipboardManager = isClipboardManager
        self.clipboard = clipboard
        self.primary = primary
        self.budgets = budgets
    }
}
