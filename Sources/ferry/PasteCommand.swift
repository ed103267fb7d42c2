import ArgumentParser
import Ferry
import FerryModel

/// `ferry paste`: one representation of one item to standard output or a file.
struct PasteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "paste",
        abstract: "Write an item's best representation to standard output.",
        discussion: """
            Without --type the item's first representation is written: the highest-fidelity \
            one its source offered, whatever its type (as wl-paste does without --type). With \
            --type, the highest-fidelity representation conforming to it: public.image on an \
            item holding PNG and JPEG gives the PNG, public.plain-text gives text in any \
            encoding. The bytes are written as they are, with no newline added, except that \
            --type text/plain;charset=utf-8 (public.utf8-plain-text) on an item holding its \
            text only as UTF-16 converts it to UTF-8 (text that is not UTF-16 fails with \
            status 1).

            Data promised by a running app (ferry copy --lazy) streams straight from it. If the \
            app goes away mid-way the paste fails with status 4; if it sends nothing for \
            --timeout seconds, with status 5. Over 8 MiB a progress bar is drawn when \
            standard error is a terminal.

            -o FILE writes FILE as the shell's > does, except that a new or regular file is \
            never left half written: it is written beside and renamed over FILE once \
            everything arrived, keeping an existing file's mode and owner; a symbolic link is followed and stays; \
            a FIFO or device (/dev/null) is written through, a file with other hard links in \
            place. -o - is standard output.

            When standard output is a terminal and neither -o nor --force is given, data that \
            is not text (an image, a PDF) is not written: the paste fails with status 64 and \
            one line asking for -o FILE or --force. Into a pipe or a file it is written as it is.

            When nothing conforms the paste fails with status 2 and lists the types the item \
            has. Exit statuses are listed in 'ferry --help'.

            --into APP[/SESSION] is a paste action in an app's scene instead (the Paste menu \
            item): SESSION as in 'ferry scene' (an identifier or a unique prefix), else the \
            app's front-most scene. The scene's paste configuration decides; when it accepts, \
            the app reads the pasteboard and 'accepted: TYPES — MESSAGE' is printed; when it \
            declines, 'declined: REASON' and status 1; when the scene is not connected (its app \
            is not running), status 4. --type, --item, -o and --timeout do not apply then.

            --primary pastes the desktop's primary selection (what was last selected, pasted \
            with the middle button), which ferry-bridge keeps in the pasteboard 'primary'; \
            when there is none, the paste fails with status 2 like any empty pasteboard. \
            (wl-paste's -p; in ferry -p is --pasteboard.)

            --list-types (-l) pastes nothing: it prints the MIME types of the item's \
            representations, one per line, highest fidelity first, as 'wl-paste -l' does (a \
            type without a MIME type is shown by its identifier). An empty pasteboard prints \
            nothing.
            """)

    @Option(name: [.short, .long], help: ArgumentHelp("The type wanted: an identifier (public.png), a MIME type (image/png), text or image.",
                                                      valueName: "type"))
    var type: String?

    @Option(name: [.short, .long], parsing: .unconditional, help: ArgumentHelp("The item's index, 0 first.", valueName: "n"))
    var item = 0

    @OptionGroup var pasteboard: ExistingPasteboardOption

    @Flag(name: .long, help: "Paste the desktop's primary selection (the pasteboard 'primary').")
    var primary = false

    @Option(name: [.short, .customLong("output")], help: ArgumentHelp("Write to FILE instead of standard output.", valueName: "file"))
    var output: String?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Give up when promised data stalls this long.", valueName: "seconds"))
    var timeout = 60

    @Option(name: .long, help: ArgumentHelp("Paste into an app's scene instead (see above).", valueName: "app[/session]"))
    var into: SceneTarget?

    @Flag(name: .long, help: "Write data that is not text to a terminal too.")
    var force = false

    @Flag(name: [.short, .customLong("list-types")], help: "Print the item's MIME types, one per line, instead of pasting.")
    var listTypes = false

    @OptionGroup var bus: BusOptions

    func validate() throws {
        guard item >= 0 else { throw ValidationError("--item must be 0 or more.") }
        guard timeout > 0 else { throw ValidationError("--timeout must be at least 1.") }
        if primary, pasteboard.name != nil { throw ValidationError("--primary and --pasteboard name two pasteboards; give one.") }
        if listTypes, type != nil || output != nil || timeout != 60 || into != nil || force {
            throw ValidationError("--type, --output, --timeout, --into and --force do not apply with --list-types.")
        }
        if into != nil, type != nil || item != 0 || output != nil || timeout != 60 || force {
            throw ValidationError("--type, --item, --output, --timeout and --force do not apply with --into.")
        }
    }

    /// The pasteboard pasted from.
    var board: String { primary ? PasteboardName.primary : pasteboard.pasteboard }

    func run() async throws {
        if listTypes { return try await listMIMETypes() }
        if let into {
            return try await PasteIntoScene(target: into, pasteboard: board, bus: bus.bus).run()
        }
        try await PasteRequest(type: type, item: item, pasteboard: board, output: output,
                               timeout: timeout, bus: bus.bus, force: force).run()
    }

    /// `--list-types`: the item's types as MIME types, one per line (not a paste).
    private func listMIMETypes() async throws {
        try PasteboardName.validate(board)
        let client = try await bus.connect()
        let items = try await ExistingPasteboardOption.existing(board, on: client).items
        guard !items.isEmpty else { return }
        guard item < items.count else {
            throw CLIFailure("no item \(item): the pasteboard has \(items.count) item\(items.count == 1 ? "" : "s")")
        }
        try writeOut(Self.mimeLines(items[item].contentTypes))
    }

    /// One line per type, its preferred MIME type (its identifier when it has none), each MIME
    /// type once.
    static func mimeLines(_ types: [ContentType]) -> String {
        var listed: [String] = []
        for type in types {
            let name = type.preferredMIMEType ?? type.identifier
            if !listed.contains(name) { listed.append(name) }
        }
        return listed.map { $0 + "\n" }.joined()
    }
}
