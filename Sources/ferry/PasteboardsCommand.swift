import ArgumentParser
import Ferry
import FerryModel
import FerryTerminal

/// `ferry pasteboards`: the pasteboards the broker has.
struct PasteboardsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pasteboards",
        abstract: "List or remove named pasteboards.",
        discussion: """
            Named pasteboards are created by the first command that names one with \
            --pasteboard; 'general' always exists and cannot be removed.
            """,
        subcommands: [PasteboardsListCommand.self, PasteboardsRemoveCommand.self],
        defaultSubcommand: PasteboardsListCommand.self)
}

/// `ferry pasteboards list` (the default).
struct PasteboardsListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "Print the pasteboards' names, general first.",
        discussion: "JSON keys: pasteboards (array of strings).")

    @Flag(name: .long, help: "Print one JSON object (keys are listed in the discussion).")
    var json = false

    @OptionGroup var bus: BusOptions

    struct Report: Encodable {
        var pasteboards: [String]
    }

    func run() async throws {
        let names = try await bus.connect().pasteboardNames()
        if json { return try printJSON(Report(pasteboards: names)) }
        try writeOut(names.map { $0 + "\n" }.joined())
    }
}

/// `ferry pasteboards remove NAME`.
struct PasteboardsRemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Remove a named pasteboard and its items.",
        discussion: "A pasteboard that does not exist exits with status 2; 'general' with status 64.")

    @Argument(help: ArgumentHelp("The pasteboard's name.", valueName: "name"))
    var name: String

    @OptionGroup var bus: BusOptions

    func run() async throws {
        try PasteboardName.validate(name)
        if name == PasteboardName.general { throw CLIFailure(.usage, "the general pasteboard cannot be removed") }
        do {
            try await bus.connect().removePasteboard(named: name)
        } catch let error as FerryError where error.code == .notFound {
            throw CLIFailure("no pasteboard named '\(name)'")
        }
    }
}
