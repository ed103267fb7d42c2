import DesktopClipboard
import DesktopPortal
import Ferry
import FerryModel
import Logging
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Joins the desktop's CLIPBOARD and PRIMARY to Ferry's pasteboards, through one
/// ``DesktopClipboardBackend`` (X11 or Wayland: the same code drives both).
///
/// - Import: each foreign offer is published at once as one item (CLIPBOARD on the general
///   pasteboard, PRIMARY on the named pasteboard `primary`) whose representations are promised
///   and streamed from the live owner; then the storable types are copied in the background,
///   within ``BridgeBudgets``, and handed to ferryd, so the item outlives its source.
/// - Export: a Ferry item that did not come from the desktop becomes the desktop's selection,
///   its bytes streamed from ferryd to the reader.
/// - Restore: when an owner goes away without clearing, the selection is served again from the
///   complete copy in ferryd.
package actor Bridge {
    /// The origin an imported item carries (`desktop:CLIPBOARD`, `desktop:PRIMARY`).
    package static func origin(of selection: DesktopSelection) -> String { "desktop:\(selection.rawValue)" }
    /// The named pasteboard PRIMARY is imported into and exported from.
    package static let primaryPasteboard = "primary"
    /// How long PRIMARY must stay unchanged before it is imported (a selection being dragged out
    /// changes many times a second).
    package static let primaryDebounce: Duration = .milliseconds(250)
    /// How long a lazy read from a live owner may stay silent (a person is waiting on a paste:
    /// longer than the eager copy's idle timeout).
    package static let lazyIdleTimeout: Duration = .seconds(30)
    /// How long the bridge waits at start for the display to report its current owners before it
    /// puts Ferry's items on empty selections.
    package static let startupSettling: Duration = .milliseconds(500)
    /// How long a desktop reader may take nothing before its transfer is given up (R7).
    package static let stallTimeout: Duration = .seconds(5)

    let backend: any DesktopClipboardBackend
    let client: FerryClient
    let budgets: BridgeBudgets
    let map: DesktopTypeMap
    let flavor: DesktopTypeMap.Flavor
    let display: String
    let isClipboardManager: @Sendable () -> Bool
    let log: BridgeLog
    /// The FileTransfer client for file items, on the bridge's own session bus connection (a
    /// transfer lives as long as the connection that started it).
    let portal: FileTransferPortal
    /// Whether the document portal was found on the bus when this run started: only then are file
    /// items offered as `application/vnd.portal.filetransfer`.
    var hasDocumentPortal = false

    var selections: [DesktopSelection: SelectionState] = [:]
    /// Change counts the bridge's own imports made, per pasteboard (never exported back).
    var ownChanges: [String: Set<UInt64>] = [:]
    /// Imports whose `SetItems` has not answered yet, per pasteboard: ferryd's `Changed` for such an
    /// import can arrive before its change count is in `ownChanges`.
    var importsInFlight: [String: Int] = [:]

    /// Makes a bridge over `backend`, writing to the broker through `client` (registered as an app).
    /// - Parameters:
    ///   - display: the display's name, for the status.
    ///   - isClipboardManager: whether the backend owns X11's `CLIPBOARD_MANAGER`, asked for the status.
    package init(backend: any DesktopClipboardBackend, client: FerryClient, budgets: BridgeBudgets = .defaults,
                display: String, isClipboardManager: @escaping @Sendable () -> Bool = { false },
                log: BridgeLog = BridgeLog()) {
        self.backend = backend
        self.client = client
        self.budgets = budgets
        self.map = DesktopTypeMap(maximumTypes: budgets.maximumTypes)
        self.flavor = backend.protocolName.hasPrefix("x11") ? .x11 : .wayland
        self.display = display
        self.isClipboardManager = isClipboardManager
        self.log = log
        self.portal = FileTransferPortal(connection: client.connection)
        for selection in DesktopSelection.allCases { selections[selection] = SelectionState() }
    }

    /// The bridge's state, for `org.ferry.Bridge1.Status`.
    package func status() -> BridgeStatus {
        BridgeStatus(protocolName: backend.protocolName, display: display, isClipboardManager: isClipboardManager(),
                     clipboard: selections[.clipboard]?.status ?? .init(),
                     primary: selections[.primary]?.status ?? .init(), budgets: budgets)
    }

    /// Runs until the display connection or the broker's signals end: the caller reconnects.
    /// Exports what Ferry holds at start (unless it came from the desktop).
    /// - Throws: what ended it (`DesktopClipboardError` `.disconnected`, a `FerryError`).
    package func run() async throws {
        let general = client.general
        let primary = try await client.pasteboard(named: Self.primaryPasteboard)
        let generalChanges = try await general.changes()
        let primaryChanges = try await primary.changes()
        let events = backend.events
        hasDocumentPortal = await findDocumentPortal()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                // What Ferry holds goes to the desktop at start only where no app holds the
                // selection: the display reports its current owners first.
                try await Task.sleep(for: Self.startupSettling)
                for (selection, board) in [(DesktopSelection.clipboard, general), (.primary, primary)]
                    where selection == .clipboard || self.backend.supportsPrimary {
                    if let count = try? await board.changeCount {
                        await self.ferryChanged(board, selection: selection, count: count, atStart: true)
                    }
                }
            }
            group.addTask {
                for try await event in events { await self.handle(event) }
                throw DesktopClipboardError(.disconnected, "the display connection closed")
            }
            group.addTask {
                for try await count in generalChanges { await self.ferryChanged(general, selection: .clipboard, count: count) }
                throw FerryError(.noBroker, "the broker's signals ended")
            }
            group.addTask {
                for try await count in primaryChanges where self.backend.supportsPrimary {
                    await self.ferryChanged(primary, selection: .primary, count: count)
                }
                throw FerryError(.noBroker, "the broker's signals ended")
            }
            defer { group.cancelAll() }
            // The start-up task ends by itself; the others end only by throwing.
            for try await _ in group {}
        }
    }

    /// Stops every copy and gives the selections up.
    package func stop() async {
        for selection in DesktopSelection.allCases {
            selections[selection]?.cancelImport()
            selections[selection]?.pendingPrimary?.cancel()
            if selections[selection]?.owner == .ferry { await backend.disown(selection) }
        }
    }

    /// The pasteboard a selection maps to.
    func pasteboard(for selection: DesktopSelection) async throws(FerryError) -> Pasteboard {
        selection == .clipboard ? client.general : try await client.pasteboard(named: Self.primaryPasteboard)
    }

    // MARK: desktop events

    func handle(_ event: DesktopEvent) async {
        switch event {
        case .offered(let offer):
            log.event("\(offer.selection): offered \(offer.types.joined(separator: " "))")
            selections[offer.selection]?.owner = .desktop
            selections[offer.selection]?.offeredTypes = offer.types
            selections[offer.selection]?.latestOffer = offer.id
            selections[offer.selection]?.cancelImport()
            if offer.selection == .primary {
                selections[.primary]?.pendingPrimary?.cancel()
                selections[.primary]?.pendingPrimary = Task {
                    try? await Task.sleep(for: Self.primaryDebounce)
                    guard !Task.isCancelled else { return }
                    await self.importOffer(offer)
                }
            } else {
                await importOffer(offer)
            }
        case .emptied(let selection, let end):
            log.event("\(selection): emptied (\(end.rawValue))")
            selections[selection]?.owner = .none
            selections[selection]?.offeredTypes = []
            selections[selection]?.pendingPrimary?.cancel()
            if end != .cleared { await restoreOnceCopied(selection) }
        case .ownershipLost(let selection):
            log.event("\(selection): the bridge's ownership ended")
            selections[selection]?.owner = .none
        case .saveRequested(let offer, let reply):
            log.event("CLIPBOARD: the owner asks to save \(offer.types.joined(separator: " "))")
            await save(offer, reply: reply)
        }
    }
}

/// Where the bridge says what it does: swift-log's `Logger` labelled `ferry-bridge`, events at
/// `info` (written only when verbose), what it could not do at `warning`.
package struct BridgeLog: Sendable {
    /// The logger the lines go to.
    package let logger: Logger

    /// A log for `ferry-bridge` that writes events only when `verbose` (warnings always).
    package init(verbose: Bool = false) {
        var logger = Logger(label: "ferry-bridge")
        logger.logLevel = verbose ? .info : .warning
        self.logger = logger
    }

    /// An event: logged when verbose.
    package func event(_ line: String) { logger.info("\(line)") }
    /// A warning: what the bridge could not do.
    package func warning(_ line: String) { logger.warning("\(line)") }
}
