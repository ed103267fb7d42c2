import ArgumentParser
import Ferry
import FerryModel

/// `ferry history`: the general pasteboard's previous contents.
struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "List, restore or clear the general pasteboard's history.",
        discussion: """
            The broker keeps the general pasteboard's last contents (100 by default), newest \
            first; items copied with --sensitive never enter it.
            """,
        subcommands: [HistoryListCommand.self, HistoryRestoreCommand.self, HistoryClearCommand.self],
        defaultSubcommand: HistoryListCommand.self)
}

/// `ferry history list` (the default).
struct HistoryListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List previous contents, newest first.",
        discussion: """
            One line per entry: its index (for 'ferry history restore'), the change count the \
            pasteboard had, when it was replaced (UTC), and each item's types.

            JSON keys: entries (array of objects with index, changeCount, replacedAt (ISO 8601), \
            items (as in 'ferry types --json')).
            """)

    @Flag(name: .long, help: "Print one JSON object (keys are listed in the discussion).")
    var json = false

    @OptionGroup var bus: BusOptions

    struct Entry: Encodable {
        var index: Int
        var changeCount: UInt64
        var replacedAt: String
        var items: [ItemReport]
    }

    struct Report: Encodable {
        var entries: [Entry]
    }

    func run() async throws {
        try await reportingFailures {
            let entries = try await bus.connect().general.history()
            if json {
                return try printJSON(Report(entries: entries.enumerated().map { index, entry in
                    Entry(index: index, changeCount: entry.changeCount, replacedAt: timestamp(entry.replacedAt),
                          items: entry.items.enumerated().map { ItemReport($0.element, index: $0.offset) })
                }))
            }
            var text = ""
            for (index, entry) in entries.enumerated() {
                let types = typeSummary(entry.items)
                text += "\(index)  \(entry.changeCount)  \(timestamp(entry.replacedAt))  \(types.isEmpty ? "(empty)" : types)\n"
            }
            try writeOut(text)
        }
    }
}

/// `ferry history restore N`.
struct HistoryRestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Make history entry N the general pasteboard's contents again.",
        discussion: "The current contents enter the history. A missing entry exits with status 2.")

    @Argument(help: ArgumentHelp("The entry's index, 0 the newest.", valueName: "n"))
    var index: Int

    @OptionGroup var bus: BusOptions

    func validate() throws {
        guard index >= 0 else { throw ValidationError("The index must be 0 or more.") }
    }

    func run() async throws {
        try await reportingFailures {
            do {
                try await bus.connect().general.restoreHistory(index)
            } catch let error as FerryError where error.code == .notFound {
                throw CLIFailure("no history entry \(index)")
            }
        }
    }
}

/// `ferry history clear`.
struct HistoryClearCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clear",
        abstract: "Forget the general pasteboard's history.")

    @OptionGroup var bus: BusOptions

    func run() async throws {
        try await reportingFailures {
            try await bus.connect().general.clearHistory()
        }
    }
}
