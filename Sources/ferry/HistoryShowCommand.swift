import ArgumentParser
import Ferry
import FerryModel
import FerryTerminal

/// `ferry history show [N]`: a history entry's content, as `ferry paste` writes the current one.
struct HistoryShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Write history entry N to standard output without restoring it.",
        discussion: """
            The entry stays where it is and the pasteboard does not change; the read is a \
            paste all the same (the paste policy applies and 'ferry log' records it as one of \
            the general pasteboard). The representation is chosen as 'ferry paste' chooses \
            it, and --type, --item, -o, --timeout and --force mean what they mean there: data \
            that is not text is not written to a terminal without -o FILE or --force (status 64).

            Without N, the entry's index is the first field of standard input's first line, \
            which is what a line of 'ferry history' starts with: 'ferry history | fzf | ferry \
            history show' writes the entry picked. Empty input, or a first field that is not \
            an index, fails with status 64. A missing entry fails with status 2.
            """)

    @Argument(help: ArgumentHelp("The entry's index, 0 the newest (default: read from standard input).", valueName: "n"))
    var index: Int?

    @Option(name: [.short, .long], help: ArgumentHelp("The type wanted: an identifier (public.png), a MIME type (image/png), text or image.",
                                                      valueName: "type"))
    var type: String?

    @Option(name: [.short, .long], parsing: .unconditional, help: ArgumentHelp("The item's index in the entry, 0 first.", valueName: "n"))
    var item = 0

    @Option(name: [.short, .customLong("output")], help: ArgumentHelp("Write to FILE instead of standard output.", valueName: "file"))
    var output: String?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Give up when promised data stalls this long.", valueName: "seconds"))
    var timeout = 60

    @Flag(name: .long, help: "Write data that is not text to a terminal too.")
    var force = false

    @OptionGroup var bus: BusOptions

    func validate() throws {
        if let index, index < 0 { throw ValidationError("The index must be 0 or more.") }
        guard item >= 0 else { throw ValidationError("--item must be 0 or more.") }
        guard timeout > 0 else { throw ValidationError("--timeout must be at least 1.") }
    }

    func run() async throws {
        let entry = try index ?? Self.indexFromStandardInput()
        try await PasteRequest(type: type, item: item, pasteboard: PasteboardName.general, output: output,
                               timeout: timeout, bus: bus.bus, force: force, historyEntry: entry).run()
    }

    /// The first whitespace-separated field of standard input's first line, as an index.
    /// - Throws: `CLIFailure` (status 64) when standard input is a terminal or empty, or the
    ///   field is not an index.
    static func indexFromStandardInput() throws -> Int {
        guard !LinuxCalls.isTerminal(0) else {
            throw CLIFailure(.usage, "give the entry's index, or a line of 'ferry history' on standard input")
        }
        guard let line = readLine(), let field = line.split(whereSeparator: \.isWhitespace).first else {
            throw CLIFailure(.usage, "no history entry chosen: standard input has no line")
        }
        guard field.allSatisfy(\.isASCII), let index = Int(field), index >= 0 else {
            throw CLIFailure(.usage, "the first field of standard input, \"\(field.prefix(40))\", is not a history index")
        }
        return index
    }
}
