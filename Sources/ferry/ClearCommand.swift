import ArgumentParser
import Ferry

/// `ferry clear`: empty a pasteboard.
struct ClearCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clear",
        abstract: "Remove every item from a pasteboard.",
        discussion: "The general pasteboard's items enter its history. Nothing is printed.")

    @OptionGroup var pasteboard: ExistingPasteboardOption

    @OptionGroup var bus: BusOptions

    func run() async throws {
        try await reportingFailures {
            try pasteboard.check()
            let client = try await bus.connect()
            try await pasteboard.resolve(on: client).clear()
        }
    }
}
