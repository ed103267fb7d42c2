import ArgumentParser
import Ferry

/// `ferry clear`: empty a pasteboard.
struct ClearCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clear",
        abstract: "Remove every item from a pasteboard.",
        discussion: """
            The general pasteboard's items enter its history. Nothing is printed, unless --json \
            asks for the JSON object: pasteboard (string), changeCount (the new change count, \
            number), as 'ferry copy --json' gives it.
            """)

    @OptionGroup var pasteboard: ExistingPasteboardOption

    @Flag(name: .long, help: "Print one JSON object (keys are listed in the discussion).")
    var json = false

    @OptionGroup var bus: BusOptions

    func run() async throws {
        try pasteboard.check()
        let client = try await bus.connect()
        let board = try await pasteboard.resolve(on: client)
        let count = try await board.clear()
        if json { try printJSON(CopyCommand.CopyReport(pasteboard: board.name, changeCount: count)) }
    }
}
