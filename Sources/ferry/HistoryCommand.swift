import ArgumentParser
import Ferry
import FerryModel
import FerryTerminal

/// `ferry history`: the general pasteboard's previous contents.
struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "List, show, restore, delete or clear the general pasteboard's history.",
        discussion: """
            The broker keeps the general pasteboard's last contents (100 by default, at most \
            1 GiB: ferryd's --history-limit and --history-bytes), newest first; items copied \
            with --sensitive never enter it, and copying what the pasteboard already holds \
            (the same types and bytes) makes no second entry.
            """,
        subcommands: [HistoryListCommand.self, HistoryShowCommand.self, HistoryRestoreCommand.self,
                      HistoryDeleteCommand.self, HistoryClearCommand.self],
        defaultSubcommand: HistoryListCommand.self)
}

/// `ferry history list` (the default).
struct HistoryListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List previous contents, newest first.",
        discussion: """
            One line per entry: its index (for 'ferry history show', 'restore' and 'delete'; \
            the line's first field), the change count the \
            pasteboard had, when it was replaced (UTC), each item's types, and a preview of the \
            first item: the first line of its text (control characters escaped, cut to 60 \
            characters) or an image's pixel size and byte size.

            JSON keys: entries (array of objects with index, changeCount, replacedAt (ISO 8601), \
            items (as in 'ferry types --json', plus preview (the first line of the text, up to \
            200 characters, unescaped), size (the first representation's bytes), pixelWidth and \
            pixelHeight; null when unknown))).
            """)

    @Flag(name: .long, help: "Print one JSON object (keys are listed in the discussion).")
    var json = false

    @OptionGroup var bus: BusOptions

    struct Entry: Encodable {
        var index: Int
        var changeCount: UInt64
        var replacedAt: String
        var items: [HistoryItemReport]
    }

    /// An item as `types --json` gives it, and its preview.
    struct HistoryItemReport: Encodable {
        var item: ItemReport
        var preview: String?
        var size: Int64?
        var pixelWidth: Int?
        var pixelHeight: Int?

        init(_ item: PasteboardItem, index: Int) {
            self.item = ItemReport(item, index: index)
            preview = item.preview
            size = item.metadata.representations.first?.estimatedSize
            pixelWidth = item.pixelSize?.width
            pixelHeight = item.pixelSize?.height
        }

        func encode(to encoder: any Encoder) throws {
            try item.encode(to: encoder)
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(preview, forKey: .preview)
            try c.encode(size, forKey: .size)
            try c.encode(pixelWidth, forKey: .pixelWidth)
            try c.encode(pixelHeight, forKey: .pixelHeight)
        }

        enum CodingKeys: String, CodingKey { case preview, size, pixelWidth, pixelHeight }
    }

    /// The end of a text row: the first item's first line, or its pixel and byte size.
    static func preview(_ items: [PasteboardItem]) -> String? {
        guard let item = items.first else { return nil }
        if let pixels = item.pixelSize {
            let bytes = item.metadata.representations.first?.estimatedSize.map { "  " + ProgressBar.size(UInt64(max(0, $0))) }
            return "\(pixels.width)x\(pixels.height)" + (bytes ?? "")
        }
        return item.preview.map { $0.printableLine(limit: 60) }
    }

    struct Report: Encodable {
        var entries: [Entry]
    }

    func run() async throws {
        let entries = try await bus.connect().general.history()
        if json {
            return try printJSON(Report(entries: entries.enumerated().map { index, entry in
                Entry(index: index, changeCount: entry.changeCount, replacedAt: timestamp(entry.replacedAt),
                      items: entry.items.enumerated().map { HistoryItemReport($0.element, index: $0.offset) })
            }))
        }
        var text = ""
        for (index, entry) in entries.enumerated() {
            let types = typeSummary(entry.items)
            text += "\(index)  \(entry.changeCount)  \(timestamp(entry.replacedAt))  \(types.isEmpty ? "(empty)" : types)"
            if let preview = Self.preview(entry.items) { text += "  " + preview }
            text += "\n"
        }
        try writeOut(text)
    }
}

/// `ferry history restore N`.
struct HistoryRestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Make history entry N the general pasteboard's contents again.",
        discussion: """
            The current contents enter the history. A missing entry exits with status 2. \
            --json prints pasteboard (string) and changeCount (the general pasteboard's new \
            change count, number), as 'ferry copy --json' does.
            """)

    @Argument(help: ArgumentHelp("The entry's index, 0 the newest.", valueName: "n"))
    var index: Int

    @Flag(name: .long, help: "Print one JSON object (keys are listed in the discussion).")
    var json = false

    @OptionGroup var bus: BusOptions

    func validate() throws {
        guard index >= 0 else { throw ValidationError("The index must be 0 or more.") }
    }

    func run() async throws {
        do {
            let general = try await bus.connect().general
            let count = try await general.restoreHistory(index)
            if json { try printJSON(CopyCommand.CopyReport(pasteboard: general.name, changeCount: count)) }
        } catch let error as FerryError where error.code == .notFound {
            throw CLIFailure("no history entry \(index)")
        }
    }
}

/// `ferry history delete N…`.
struct HistoryDeleteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Forget history entries, their bytes too.",
        discussion: """
            The indexes are those 'ferry history' lists, all taken before any entry goes (so \
            'delete 0 1' deletes the two newest). The entries' files leave the disk. When an \
            index is out of range nothing is deleted and the command exits with status 2.
            """)

    @Argument(help: ArgumentHelp("The entries' indexes, 0 the newest.", valueName: "n"))
    var indexes: [Int]

    @OptionGroup var bus: BusOptions

    func validate() throws {
        guard !indexes.isEmpty else { throw ValidationError("Give the index of at least one entry.") }
        guard indexes.allSatisfy({ $0 >= 0 }) else { throw ValidationError("An index must be 0 or more.") }
    }

    func run() async throws {
        try await bus.connect().general.deleteHistory(indexes)
    }
}

/// `ferry history clear`.
struct HistoryClearCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clear",
        abstract: "Forget the general pasteboard's history.")

    @OptionGroup var bus: BusOptions

    func run() async throws {
        try await bus.connect().general.clearHistory()
    }
}
