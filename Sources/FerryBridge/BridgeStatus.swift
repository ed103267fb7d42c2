#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What `ferry bridge status` tells: the backend, each selection, the last import and export, and
/// the budgets in force.
///
/// D-Bus: the reply of `org.ferry.Bridge1.Status`.
package struct BridgeStatus: Sendable, Hashable {
    /// Who holds a selection, as far as the bridge knows.
    package enum Owner: String, Sendable, Hashable {
        /// A desktop app.
        case desktop
        /// The bridge, serving a Ferry item.
        case ferry
        /// Nobody.
        case none
    }

    /// One transfer between the desktop and Ferry.
    package struct Transfer: Sendable, Hashable {
        /// When it happened.
        package var time: Date
        /// The Ferry pasteboard's change count it made (import) or served (export).
        package var changeCount: UInt64
        /// Import: every storable type copied, so the item outlives its source. Export: the bridge
        /// owns the selection.
        package var isComplete: Bool
        /// The item was sensitive (a password manager's secret).
        package var isSensitive: Bool

        /// Makes a record.
        package init(time: Date, changeCount: UInt64, isComplete: Bool, isSensitive: Bool = false) {
            self.time = time
            self.changeCount = changeCount
            self.isComplete = isComplete
            self.isSensitive = isSensitive
        }
    }

    /// One selection's state.
    package struct Selection: Sendable, Hashable {
        /// Who holds it.
        package var owner: Owner = .none
        /// The names its owner offers (the bridge's own names when it is Ferry).
        package var offeredTypes: [String] = []
        /// The last desktop copy published in Ferry.
        package var lastImport: Transfer?
        /// The last Ferry item put on the desktop.
        package var lastExport: Transfer?

        /// An empty selection.
        package init() {}
    }

    /// The protocol in use (`x11-xfixes`, `ext-data-control-v1`, `wlr-data-control-v2`).
    package var protocolName: String
    /// The display (`:0`, `wayland-1`).
    package var display: String
    /// Whether the bridge owns X11's `CLIPBOARD_MANAGER`.
    package var isClipboardManager: Bool
    /// CLIPBOARD.
    package var clipboard: Selection
    /// PRIMARY.
    package var primary: Selection
    /// The budgets in force.
    package var budgets: BridgeBudgets

    /// Makes a status.
    package init(protocolName: String, display: String, isClipboardManager: Bool, clipboard: Selection,
                primary: Selection, budgets: BridgeBudgets) {
        self.protocolName = protocolName
        self.display = display
        self.isClipboardManager = isClipboardManager
        self.clipboard = clipboard
        self.primary = primary
        self.budgets = budgets
    }
}
