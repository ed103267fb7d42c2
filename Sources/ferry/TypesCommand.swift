import ArgumentParser
import Ferry
import FerryModel
import FerryTerminal

/// `ferry types`: what is on a pasteboard, without pasting it.
struct TypesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "types",
        abstract: "List the items on a pasteboard and their types (not a paste).",
        discussion: """
            One line per representation: the item's index, the type, its MIME type ('-' when \
            it has none), its size when known, 'promised' when the app that copied it still \
            holds the bytes, and 'remote DEVICE' for an item copied on another of your devices \
            (continuity). A dynamic type (dyn.…, made for a MIME type no declaration \
            knows) is shown by the MIME type it came from. Representations are \
            listed highest fidelity first. An empty pasteboard prints nothing.

            JSON keys: pasteboard (string), changeCount (number), items (array of objects with \
            index, id, suggestedName, localOnly, expirationDate (ISO 8601 or null), sourceAppID, \
            origin (where the item came from outside Ferry, such as desktop:CLIPBOARD for \
            ferry-bridge's imports, or null), representations (array of objects with type (the \
            identifier), mime (its MIME type or null), size (bytes, number or null), promised, \
            visibility)). Every --json report gives times as ISO 8601 in UTC, change counts and \
            sizes as integers, and a type as its identifier beside its MIME type.
            """)

    @Option(name: [.short, .long], parsing: .unconditional, help: ArgumentHelp("Only this item (its index, 0 first).", valueName: "n"))
    var item: Int?

    @OptionGroup var pasteboard: ExistingPasteboardOption

    @Flag(name: .long, help: "Print one JSON object (keys are listed in the discussion).")
    var json = false

    @OptionGroup var bus: BusOptions

    func validate() throws {
        if let item, item < 0 { throw ValidationError("--item must be 0 or more.") }
    }

    func run() async throws {
        try pasteboard.check()
        let client = try await bus.connect()
        let board = try await pasteboard.resolve(on: client)
        let changeCount = json ? try await board.changeCount : 0
        var listed = Array(try await board.items.enumerated())
        if let item {
            guard item < listed.count else {
                throw CLIFailure("no item \(item): the pasteboard has \(listed.count) item\(listed.count == 1 ? "" : "s")")
            }
            listed = [listed[item]]
        }
        if json {
            let report = PasteboardReport(pasteboard: board.name, changeCount: changeCount,
                                          items: listed.map { ItemReport($0.element, index: $0.offset) })
            return try printJSON(report)
        }
        try writeOut(Self.table(listed))
    }

    /// `0  public.png  image/png  12.1 KiB` lines, types and MIME types padded to columns.
    static func table(_ items: [(offset: Int, element: PasteboardItem)]) -> String {
        let types = items.flatMap { $0.element.contentTypes }
        let width = types.map { typeName($0).count }.max() ?? 0
        let mimeWidth = types.map { ($0.preferredMIMEType ?? "-").count }.max() ?? 0
        var text = ""
        for (index, item) in items {
            for info in item.metadata.representations {
                let type = typeName(info.contentType), mime = info.contentType.preferredMIMEType ?? "-"
                var line = "\(index)  \(type)" + String(repeating: " ", count: width - type.count)
                line += "  \(mime)" + String(repeating: " ", count: mimeWidth - mime.count)
                line += "  " + (info.estimatedSize.map { ProgressBar.size(UInt64(max(0, $0))) } ?? "?")
                if item.promisedTypes.contains(info.contentType) { line += "  promised" }
                if info.visibility == .ownApp { line += "  own-app" }
                if let origin = item.origin, origin.hasPrefix("continuity:") { line += "  remote " + origin.dropFirst(11) }
                text += line + "\n"
            }
        }
        return text
    }
}
