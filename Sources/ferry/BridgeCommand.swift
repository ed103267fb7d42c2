import ArgumentParser
import Ferry
import FerryBridge
import FerryModel
import FerryTerminal
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `ferry bridge`: the desktop clipboard bridge.
struct BridgeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bridge",
        abstract: "Show the state of ferry-bridge, which joins the desktop's clipboard to Ferry.",
        subcommands: [BridgeStatusCommand.self])
}

/// `ferry bridge status`.
struct BridgeStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Print the running bridge's backend, selections, last import and export, and budgets.",
        discussion: """
            Asks the ferry-bridge of this session (org.ferry.Bridge on the bus). For CLIPBOARD \
            and PRIMARY: who holds it (desktop: an app; ferry: the bridge serves a Ferry item; \
            none), the types offered, the last import (a desktop copy published in Ferry; \
            complete when every storable type is kept, so it outlives its app) and the last \
            export (a Ferry item put on the desktop), each with its change count. Exit status 69 \
            when no bridge runs.

            JSON keys: protocol, display, clipboardManager, clipboard and primary (owner, types, \
            lastImport and lastExport with time (ISO 8601, UTC), changeCount, complete, \
            sensitive), budgets (bytesPerType, bytesPerSelection, idleTimeoutSeconds, maximumTypes).
            """)

    @Flag(name: .long, help: "Print one JSON object (keys are listed in the discussion).")
    var json = false

    @OptionGroup var bus: BusOptions

    func run() async throws {
        let client = try await bus.connect()
        guard let status = try await BridgeStatus.fetch(through: client) else {
            throw CLIFailure(.noBroker, "no ferry-bridge runs on this bus (start it in the graphical session: ferry-bridge)")
        }
        if json { return try printJSON(Report(status)) }
        try writeOut(Self.text(status))
    }

    static func text(_ status: BridgeStatus) -> String {
        var lines = ["backend: \(status.protocolName) on \(status.display)"
                     + (status.isClipboardManager ? " (CLIPBOARD_MANAGER)" : "")]
        for (name, selection) in [("CLIPBOARD", status.clipboard), ("PRIMARY", status.primary)] {
            let types = selection.offeredTypes.isEmpty ? "" : " [\(selection.offeredTypes.joined(separator: " "))]"
            lines.append("\(name): \(selection.owner.rawValue)\(types)".printableLine())
            if let last = selection.lastImport {
                lines.append("  last import: change \(last.changeCount), \(last.isComplete ? "complete" : "not complete")"
                             + "\(last.isSensitive ? ", sensitive" : ""), \(Self.time(last.time))")
            }
            if let last = selection.lastExport {
                lines.append("  last export: change \(last.changeCount), \(last.isComplete ? "owned" : "failed"), \(Self.time(last.time))")
            }
        }
        let budgets = status.budgets
        lines.append("budgets: \(ByteCount(Int64(clamping: budgets.bytesPerType))) per type, "
                     + "\(ByteCount(Int64(clamping: budgets.bytesPerSelection))) per selection, "
                     + "\(Report.seconds(budgets.idleTimeout)) s idle, \(budgets.maximumTypes) types")
        return lines.joined(separator: "\n") + "\n"
    }

    static func time(_ date: Date) -> String { date.formatted(.iso8601) }

    /// The JSON form.
    struct Report: Encodable {
        struct Transfer: Encodable {
            var time: String
            var changeCount: UInt64
            var complete: Bool
            var sensitive: Bool
        }

        struct Selection: Encodable {
            var owner: String
            var types: [String]
            var lastImport: Transfer?
            var lastExport: Transfer?
        }

        struct Budgets: Encodable {
            var bytesPerType: UInt64
            var bytesPerSelection: UInt64
            var idleTimeoutSeconds: Double
            var maximumTypes: Int
        }

        var `protocol`: String
        var display: String
        var clipboardManager: Bool
        var clipboard: Selection
        var primary: Selection
        var budgets: Budgets

        init(_ status: BridgeStatus) {
            func transfer(_ t: BridgeStatus.Transfer?) -> Transfer? {
                t.map { Transfer(time: timestamp($0.time), changeCount: $0.changeCount, complete: $0.isComplete,
                                 sensitive: $0.isSensitive) }
            }
            func selection(_ s: BridgeStatus.Selection) -> Selection {
                Selection(owner: s.owner.rawValue, types: s.offeredTypes, lastImport: transfer(s.lastImport),
                          lastExport: transfer(s.lastExport))
            }
            `protocol` = status.protocolName
            display = status.display
            clipboardManager = status.isClipboardManager
            clipboard = selection(status.clipboard)
            primary = selection(status.primary)
            budgets = Budgets(bytesPerType: status.budgets.bytesPerType, bytesPerSelection: status.budgets.bytesPerSelection,
                              idleTimeoutSeconds: Self.seconds(status.budgets.idleTimeout),
                              maximumTypes: status.budgets.maximumTypes)
        }

        static func seconds(_ duration: Duration) -> Double {
            let (s, atto) = duration.components
            return Double(s) + Double(atto) / 1e18
        }
    }
}
