import ArgumentParser
import Ferry
import FerryModel
import FerryTerminal
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `ferry watch`: a line per pasteboard change.
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print a line for the pasteboard's current state and one per change.",
        discussion: """
            Each line is the change count, then each item's types (comma-separated, highest \
            fidelity first), items apart by spaces; an empty pasteboard gives the change count \
            alone. Every line is written at once, so a pipe sees it immediately. Runs until \
            interrupted (SIGINT or SIGTERM end it with status 0) or the broker goes away \
            (status 69). A named pasteboard must exist (status 2 otherwise).

            With --json each line is the object 'ferry types --json' prints.
            """)

    @OptionGroup var pasteboard: ExistingPasteboardOption

    @Flag(name: .long, help: "Print one JSON object per line.")
    var json = false

    @OptionGroup var bus: BusOptions

    func run() async throws {
        try await reportingFailures {
            try pasteboard.check()
            let client = try await bus.connect()
            let board = try await pasteboard.resolve(on: client)
            for sig in [SIGINT, SIGTERM] { signal(sig) { _ in _exit(0) } }
            let changes = try await board.changes()
            var last = try await board.changeCount
            try await printState(of: board, changeCount: last)
            for try await count in changes where count > last {
                last = count
                try await printState(of: board, changeCount: count)
            }
            throw CLIFailure(.noBroker, "the connection to the broker closed")
        }
    }

    private func printState(of board: Pasteboard, changeCount: UInt64) async throws {
        let items: [PasteboardItem]
        do {
            items = try await board.items
        } catch {
            guard error.code == .notFound else { throw error }
            items = []  // a named pasteboard that was removed
        }
        if json {
            let report = PasteboardReport(pasteboard: board.name, changeCount: changeCount,
                                          items: items.enumerated().map { ItemReport($0.element, index: $0.offset) })
            return try printJSON(report)
        }
        let types = typeSummary(items)
        try writeOut(types.isEmpty ? "\(changeCount)\n" : "\(changeCount) \(types)\n")
    }
}
