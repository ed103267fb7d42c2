import ArgumentParser
import Ferry
import FerryModel
import FerryTerminal
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `ferry copy`: put files, standard input or text on a pasteboard.
struct CopyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy",
        abstract: "Put files, standard input or text on a pasteboard.",
        discussion: """
            With no FILE and no --text, standard input is copied ('-' names it among files). \
            Each FILE is one item, named after the file without its extension. --rep TYPE=FILE \
            (repeatable) makes one item with several representations instead, highest fidelity \
            first. The type comes from --type, else from the file's name and content as 'ferry \
            type of' tells; standard input is typed by content; --text is \
            public.utf8-plain-text. --type and --rep also take the types that registered apps \
            declare, as 'ferry type info' does.

            Data is handed to the broker before ferry exits, so it stays pasteable after ferry \
            is gone. With --lazy ferry promises the data instead: it stays in the foreground \
            and serves each paste itself, refusing once a file was edited or removed; on SIGINT \
            or SIGTERM it hands the data to the broker and exits 0, and it exits by itself when \
            something else is copied to the pasteboard (status 0) or when the broker goes away \
            (status 69: the promise went with it).

            With --paste-once ferry promises the data as --lazy does, serves the first paste \
            of it (the first read of any of its items; 'ferry types' and pattern detection are \
            not pastes), then exits 0 and the items are gone for everyone, as with 'wl-copy \
            --paste-once': the general pasteboard is back to what was copied before, if \
            anything. SIGINT or SIGTERM before that paste ends it with the items gone too (they \
            are not handed over); something else copied meanwhile ends it with status 0.

            --expires removes the items for everyone after that many seconds; --local-only \
            keeps them on this machine; --sensitive keeps them out of the history and off \
            disk. Nothing is printed on success unless --verbose or --json is given (--json: \
            one line on standard output, keys pasteboard (string) and changeCount (number), as \
            soon as the items are on the pasteboard, before a --lazy or --paste-once copy \
            serves them); reading more than \
            8 MiB from standard input, or handing one file over 8 MiB to the broker, shows a \
            progress bar when standard error is a terminal.

            --primary copies to the desktop's primary selection instead of the clipboard: the \
            pasteboard 'primary', created if needed, which ferry-bridge offers as PRIMARY \
            (pasted with the middle button). (wl-copy's -p; in ferry -p is --pasteboard.)
            """)

    @Argument(help: ArgumentHelp("Files to copy, one item each; '-' is standard input.", valueName: "file"))
    var files: [String] = []

    @Option(name: .long, help: ArgumentHelp("Copy this text (public.utf8-plain-text unless --type says otherwise).",
                                            valueName: "text"))
    var text: String?

    @Option(name: [.short, .long], help: ArgumentHelp("The type of the data: an identifier (public.png) or a MIME type.",
                                                      valueName: "type"))
    var type: String?

    @Option(name: .customLong("rep"), help: ArgumentHelp("Add a representation to one item (repeatable; '-' for FILE is standard input).",
                                                         valueName: "type=file"))
    var representations: [String] = []

    @OptionGroup var pasteboard: PasteboardOption

    @Flag(name: .long, help: "Copy to the desktop's primary selection (the pasteboard 'primary').")
    var primary = false

    @Flag(name: .customLong("local-only"), help: "Keep the items on this machine.")
    var localOnly = false

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Remove the items after this many seconds.", valueName: "seconds"))
    var expires: Double?

    @Flag(name: .long, help: "Never persist the items nor keep them in the history (passwords).")
    var sensitive = false

    @Flag(name: .long, help: "Promise the data and serve it from this process until interrupted.")
    var lazy = false

    @Flag(name: .customLong("paste-once"), help: "Serve the data to one paste, then remove it and exit.")
    var pasteOnce = false

    @Flag(name: [.short, .long], help: "Say on standard error what was copied and the new change count.")
    var verbose = false

    @Flag(name: .long, help: "Print the pasteboard and its new change count as one JSON object.")
    var json = false

    @OptionGroup var bus: BusOptions

    func validate() throws {
        if text != nil && !(files.isEmpty && representations.isEmpty) {
            throw ValidationError("--text cannot be combined with files or --rep.")
        }
        if !representations.isEmpty && !files.isEmpty { throw ValidationError("--rep cannot be combined with files.") }
        if !representations.isEmpty && type != nil { throw ValidationError("--rep gives each type; drop --type.") }
        let stdinUses = files.count { $0 == "-" } + representations.count { $0.hasSuffix("=-") }
        if stdinUses > 1 { throw ValidationError("Standard input ('-') can be copied only once.") }
        if let expires, !(expires > 0 && expires < 1e10) { throw ValidationError("--expires must be a positive number of seconds.") }
        if primary, pasteboard.name != nil { throw ValidationError("--primary and --pasteboard name two pasteboards; give one.") }
        if pasteOnce && lazy { throw ValidationError("--paste-once serves the data itself and never hands it over; drop --lazy.") }
    }

    func run() async throws {
        try pasteboard.check()
        for argument in [type].compactMap({ $0 }) + representations.map({ String($0.prefix { $0 != "=" }) }) where !argument.isEmpty {
            _ = try? await AppTypes.resolving(bus: bus.bus, { try WrittenType(argument: argument) },
                                              isDynamic: { $0.exact?.isDynamic ?? false })
        }
        let items = try readItems()
        let expiration = expires.map { Date.now.addingTimeInterval($0) }
        let client = try await bus.connect()
        // Past 16 large representations the bus runs out of descriptors: the rest are
        // promised by this process and handed over (flushed) before it exits.
        let overflow = items.reduce(0) { $0 + $1.descriptorCount } > CopyItem.descriptorLimit
        if pasteOnce { return try await copyForOnePaste(items, client: client) }
        if lazy || overflow { try await client.registerCommandLineTool() }
        // From here a SIGINT or SIGTERM hands promised data to the broker before exiting.
        if lazy { client.flushOnTermination(exitStatus: Self.statusAfterHandingOver) }
        let board = primary ? try await client.pasteboard(named: PasteboardName.primary) : try await pasteboard.resolve(on: client)
        let progress = lazy || overflow ? nil : Self.progress(for: items)
        let providers = try items.map { try $0.provider(lazy: lazy) }
        let changes = lazy ? try await board.changes() : nil
        let owners = lazy ? try await client.brokerOwnerChanges() : nil
        let report: (@Sendable (UInt64) -> Void)? = progress.map { bar in { @Sendable read in bar.show(read) } }
        let count: UInt64
        do {
            defer { progress?.finish() }
            count = try await board.setItemProviders(providers, localOnly: localOnly, expirationDate: expiration,
                                                     sensitive: sensitive, progress: report)
        }
        if json { try printJSON(CopyReport(pasteboard: board.name, changeCount: count)) }
        if verbose {
            let list = items.enumerated().map { "  item \($0.offset): \($0.element.summary)\n" }.joined()
            StandardError.write("copied \(items.count) item\(items.count == 1 ? "" : "s") to \(board.name), change count \(count)\n\(list)")
        }
        if let changes, let owners {
            if try await Self.waitForReplacement(changes, count: count, brokerChanges: owners) {
                if verbose { StandardError.write("the pasteboard changed; no longer serving\n") }
            } else {
                // A promise lives in the broker that took it: a broker that went away (or was
                // replaced) has dropped it, and nothing is left to serve.
                throw CLIFailure(.noBroker, "the Ferry broker went away: what this copy promised is no longer on the pasteboard")
            }
        } else if overflow {
            try await client.flush()
        }
    }

    /// `--paste-once`: promises the items, serves the first paste and leaves without handing
    /// anything over, so the broker drops them (see `FerryClient.abandonPromises()`).
    private func copyForOnePaste(_ items: [CopyItem], client: FerryClient) async throws {
        try await client.registerCommandLineTool()
        let board = try await pasteboard.resolve(on: client)
        let providers = try items.map { try $0.provider(lazy: true) }
        let served = client.pastesServed()
        let changes = try await board.changes()
        let owners = try await client.brokerOwnerChanges()
        let count = try await board.setItemProviders(providers, localOnly: localOnly, expirationDate: expires.map { Date.now.addingTimeInterval($0) },
                                                     sensitive: sensitive)
        if json { try printJSON(CopyReport(pasteboard: board.name, changeCount: count)) }
        if verbose {
            StandardError.write("copied \(items.count) item\(items.count == 1 ? "" : "s") to \(board.name) for one paste, change count \(count)\n")
        }
        let outcome = try await withThrowingTaskGroup(of: OnePasteOutcome.self) { group in
            group.addTask {
                for await _ in served { return .pasted }
                return .brokerGone
            }
            group.addTask {
                for try await next in changes where next > count { return .replaced }
                return .brokerGone
            }
            group.addTask {
                for try await _ in owners { return .brokerGone }
                return .brokerGone
            }
            let first = try await group.next() ?? .brokerGone
            group.cancelAll()
            return first
        }
        // Nothing is handed over on the way out, whatever happened: what was for one paste is
        // not left in the broker, nor in the history.
        await client.abandonPromises()
        // Closing waits for the reply to the paste being served, then leaves the bus: the
        // broker drops the items.
        await client.close()
        switch outcome {
        case .pasted:
            if verbose { StandardError.write("pasted once; the items are gone\n") }
        case .replaced:
            if verbose { StandardError.write("the pasteboard changed before any paste; no longer serving\n") }
        case .brokerGone:
            throw CLIFailure(.noBroker, "the Ferry broker went away: what this copy promised is no longer on the pasteboard")
        }
    }

    /// What `copy --json` prints: the keys and types `ferry types --json` uses for them.
    struct CopyReport: Encodable {
        var pasteboard: String
        var changeCount: UInt64
    }

    /// How a `--paste-once` copy ended.
    private enum OnePasteOutcome: Sendable {
        case pasted
        case replaced
        case brokerGone
    }

    /// A `--lazy` copy's exit status on SIGINT or SIGTERM: 0 once the data is handed over, else
    /// the failure's status, said on one line.
    @Sendable static func statusAfterHandingOver(signal: Int32, failure: FerryError?) -> Int32 {
        guard let failure else { return ExitStatus.success.rawValue }
        let (status, message) = describe(failure)
        printError("could not hand the data over: \(message)")
        return status.rawValue
    }

    /// Waits until the pasteboard changes past `count` (true) or the broker goes away or is
    /// replaced (false).
    static func waitForReplacement(_ changes: AsyncThrowingStream<UInt64, any Error>, count: UInt64,
                                   brokerChanges: AsyncThrowingStream<String?, any Error>) async throws -> Bool {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                for try await next in changes where next > count { return true }
                return false
            }
            group.addTask {
                for try await _ in brokerChanges { return false }
                return false
            }
            let replaced = try await group.next() ?? false
            group.cancelAll()
            return replaced
        }
    }

    /// A progress bar for handing the items' files to the broker when one of them is over 8 MiB
    /// and standard error is a terminal. It follows how far the broker has read the open files
    /// ferry hands it, so the broker still reads each file itself and refuses one that changes
    /// meanwhile (status 4), as without a terminal.
    static func progress(for items: [CopyItem]) -> CopyProgress? {
        let sizes = items.flatMap(\.representations).compactMap { representation -> UInt64? in
            if case .file(_, let size) = representation.source.bytes { return size }
            return nil
        }
        guard sizes.contains(where: { $0 >= ProgressBar.threshold }) else { return nil }
        return CopyProgress(label: "copying", total: sizes.reduce(0, +))
    }

    /// The items, with their inputs read (standard input) or checked (files).
    private func readItems() throws -> [CopyItem] {
        let explicit = try type.map(WrittenType.init(argument:))
        if text == nil, !representations.isEmpty {
            var item = CopyItem()
            for argument in representations {
                guard let equals = argument.firstIndex(of: "="), equals != argument.startIndex,
                      argument.index(after: equals) != argument.endIndex else {
                    throw CLIFailure(.usage, "--rep needs TYPE=FILE, not '\(argument)'")
                }
                let written = try WrittenType(argument: String(argument[..<equals]))
                let path = String(argument[argument.index(after: equals)...])
                let sniff = written.exact == nil
                let source = path == "-" ? try CopySource.standardInput(sniff: sniff) : try CopySource.file(PathArgument(path), sniff: sniff)
                try written.check(source.sniffed, of: path == "-" ? "standard input" : "'\(PathArgument(path).display)'")
                let type = written.exact ?? source.sniffed ?? .data
                if item.suggestedName == nil { item.suggestedName = source.suggestedName }
                item.representations.append((type, source))
            }
            return [item]
        }
        return try CopyItem.items(files: files, text: text, type: explicit)
    }
}
