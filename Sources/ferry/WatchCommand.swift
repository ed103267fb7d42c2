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
            interrupted (SIGINT or SIGTERM end it with status 0) or the broker goes away and the \
            bus cannot start it again (status 69). When another broker takes over (a restart, \
            `ferryd --replace`), it prints that broker's current state and follows it. A named \
            pasteboard must exist (status 2 otherwise).

            With --json each line is the object 'ferry types --json' prints.

            --exec CMD [ARG...] (last on the command line: everything after it is the command) \
            prints nothing and runs CMD instead, as 'wl-paste --watch CMD' does: once for the \
            current content and once per change, with item 0's first representation (or the \
            one --type asks for) on its standard input and in its environment FERRY_CHANGE (the \
            change count), FERRY_TYPE (the type identifier) and FERRY_MIME_TYPE (its MIME \
            type, empty when it has none). An empty pasteboard runs it with empty input and \
            empty FERRY_TYPE. Each run reads the change it reports: runs are one at a time, and \
            a change replaced before its turn is skipped, never read as the newer content. An \
            item with nothing conforming to --type runs nothing. A command that cannot be \
            started ends watch with status 1; its own exit status is ignored.
            """)

    @OptionGroup var pasteboard: ExistingPasteboardOption

    @Flag(name: .long, help: "Print one JSON object per line.")
    var json = false

    @Option(name: [.short, .long], help: ArgumentHelp("With --exec: the type to give the command (as paste --type).",
                                                      valueName: "type"))
    var type: String?

    @Option(name: .customLong("exec"), parsing: .remaining,
            help: ArgumentHelp("Run this command per change, the content on its standard input (see above).", valueName: "cmd"))
    var command: [String] = []

    @OptionGroup var bus: BusOptions

    func validate() throws {
        if !command.isEmpty, json { throw ValidationError("--json does not apply with --exec.") }
        if command.isEmpty, type != nil { throw ValidationError("--type applies only with --exec.") }
    }

    func run() async throws {
        try pasteboard.check()
        let exec = try command.isEmpty ? nil : WatchExec(command: command, type: type.map(resolveTypeArgument) ?? .item)
        let client = try await bus.connect()
        var board = try await pasteboard.resolve(on: client)
        for sig in [SIGINT, SIGTERM] { signal(sig) { _ in _exit(0) } }
        let owners = try await client.brokerOwnerChanges()
        let changes = try await board.changes()  // the rule names org.ferry.Broker: it follows a new owner
        var owner = try await client.brokerOwner()
        var last = try await board.changeCount
        try await report(board, changeCount: last, exec: exec)
        let (events, sink) = AsyncStream<Event>.makeStream()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                do { for try await count in changes { sink.yield(.changed(count)) } } catch {}
                sink.yield(.closed)
            }
            group.addTask {
                do { for try await owner in owners { sink.yield(.brokerChanged(owner)) } } catch {}
                sink.yield(.closed)
            }
            defer { group.cancelAll() }
            for await event in events {
                switch event {
                case .changed(let count):
                    guard count > last else { continue }
                    last = count
                    try await report(board, changeCount: count, exec: exec)
                case .brokerChanged(let newOwner):
                    guard newOwner == nil || newOwner != owner else { continue }
                    // Gone: asking for the state starts a broker if the bus can. New: its
                    // state, change counts included, is its own.
                    (board, last, owner) = try await follow(client)
                    try await report(board, changeCount: last, exec: exec)
                case .closed:
                    throw CLIFailure(.noBroker, "the connection to the broker closed")
                }
            }
        }
    }

    /// What `run` waits for.
    private enum Event: Sendable {
        case changed(UInt64)
        /// `org.ferry.Broker` has a new owner (nil: none).
        case brokerChanged(String?)
        case closed
    }

    /// The pasteboard on the broker that now owns the name (started by the bus if none does), its
    /// change count and that broker's unique name.
    /// - Throws: `CLIFailure` `.noBroker` when no broker runs and the bus cannot start one.
    private func follow(_ client: FerryClient) async throws -> (Pasteboard, UInt64, String?) {
        do {
            let board = try await pasteboard.resolve(on: client)
            let count = try await board.changeCount
            return (board, count, try await client.brokerOwner())
        } catch let error as FerryError where error.code == .noBroker {
            throw CLIFailure(.noBroker, "the Ferry broker went away and cannot be started (\(error.message))")
        }
    }

    /// Prints the line for `changeCount`, or with `exec` runs the command on it.
    private func report(_ board: Pasteboard, changeCount: UInt64, exec: WatchExec?) async throws {
        if let exec {
            _ = try await exec.run(on: board, changeCount: changeCount)
            return
        }
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
