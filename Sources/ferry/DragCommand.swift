import ArgumentParser
import Ferry
import FerryModel
import FerryTerminal

/// `ferry drag`: a scripted drag — begin at a scene, move along a path printing the proposal at
/// each step, drop, print the outcome. Or, with `--app`, the drag of an app's icon to a screen
/// edge, which opens the app's default scene there.
struct DragCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "drag",
        abstract: "Drag an item from a scene to another scene, a point or a screen edge.",
        usage: """
            ferry drag --from APP[/SESSION]
                       (--to APP[/SESSION] | --at X,Y | --edge left|right)
                       [--via X,Y]... [--item N | --text S | --file PATH]
                       [--preview-title TEXT] [--preview-image FILE.png]
                       [--move] [--restricted] [--screen N] [--json] [--bus ADDRESS]
            ferry drag --app APP --edge left|right [--screen N] [--via X,Y]...
                       [--json] [--bus ADDRESS]
            """,
        discussion: """
            The drag begins on the source scene (SESSION as for 'ferry \
            scene': an identifier or a unique prefix of 4+ characters; without it, the app's \
            front-most connected scene), moves through each --via point and on to the \
            destination in steps of a quarter of each segment, and drops there. The \
            destination is the --to scene (without a session: the app's front-most \
            connected scene other than the source), the point --at, or the middle \
            of that edge zone of the source scene's screen (--screen picks another). Write a \
            negative coordinate as --at=-12,40 (coordinates go from -10000000 to \
            10000000). On a scene means its centre, or the point \
            of it nearest the centre that no scene in front of it covers; a scene \
            covered everywhere cannot be dragged from or onto (status 4).

            The source app provides the items (--item picks which of its things, as the app \
            numbers them) unless --text or --file gives one: ferry then writes it and stays \
            until the drop has been read. A --file item carries its content and a \
            public.file-url, so an edge drop opens it in an app whose document types accept \
            it. --move asks for a move (only inside the source app); --restricted keeps the \
            drag to the source app's scenes.

            --preview-title and --preview-image give the first item a preview (replacing any \
            the source app set): what a target sees while the drag is over it, before the \
            drop, and what 'ferry desktop' draws at the drag's location. The title is one line \
            of at most 200 characters; the image a PNG of at most 256 KiB and 1024 pixels a \
            side, with pixels only (no text chunks). Anything else is refused (status 64).

            --app drags an app's icon: no items; dropped at an edge of --screen (default \
            screen 0) it opens the app's default configuration in that half of the screen.

            Prints a line when the drag begins, one per move (the location, the scene under \
            it as APP/SESSION-PREFIX or 'left edge'/'right edge' where a drop would open a \
            scene, and the proposal: cancel, forbidden, copy or move) and the outcome: what \
            the target read, the scene an edge drop opened, or why the drag was cancelled. \
            With --json each is one JSON object on its own line with the keys event (begin, \
            move or drop) and drag (its number); begin adds source, app, location (x, y) and \
            pasteboard; move adds step, location, target, app, operation, precise and edge; \
            drop adds operation, target, app, message, types, newSession and reason. Absent \
            values are null.

            Exit status 0 when the drop transferred the items (copy or move) or opened a \
            scene; 1 when it ended as cancel or forbidden (the outcome line says why); 2 for \
            an unknown app or session, nothing to drag or an unreadable --file; 4 when the \
            source or --to scene is not connected or is covered everywhere, or the drag \
            ended before the drop (its source app \
            went away); 5 when the source app did not provide its items in time.
            """)

    @Option(name: .long, help: ArgumentHelp("The source scene: an app, or APP/SESSION.", valueName: "app[/session]"))
    var from: SceneTarget?

    @Option(name: .long, help: ArgumentHelp("Drag this app's icon (only with --edge).", valueName: "app"))
    var app: String?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Which of the source scene's things to drag (the app's numbering).", valueName: "n"))
    var item: Int?

    @Option(name: .long, help: ArgumentHelp("Drag this text instead of what the source app provides.", valueName: "text"))
    var text: String?

    @Option(name: .long, help: ArgumentHelp("Drag this file instead of what the source app provides.", valueName: "path"))
    var file: String?

    @Option(name: .long, help: ArgumentHelp("Show this title as the first item's preview.", valueName: "text"))
    var previewTitle: String?

    @Option(name: .long, help: ArgumentHelp("Show this PNG image as the first item's preview.", valueName: "file.png"))
    var previewImage: String?

    @Option(name: .long, help: ArgumentHelp("Drop on this scene's centre.", valueName: "app[/session]"))
    var to: SceneTarget?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Drop at this point (desktop coordinates, each from -10000000 to 10000000).", valueName: "x,y"))
    var at: Point?

    @Option(name: .long, help: ArgumentHelp("Drop in the middle of this edge zone.", valueName: "edge"))
    var edge: ScenePlacement?

    @Option(name: .long, parsing: .unconditionalSingleValue, help: ArgumentHelp("Pass through this point on the way (repeatable, in order).", valueName: "x,y"))
    var via: [Point] = []

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("The screen whose edge --edge means (default: the source's; 0 for --app).",
                                            valueName: "n"))
    var screen: Int?

    @Flag(name: .long, help: "Ask for a move (the source removes its original; only inside its app).")
    var move = false

    @Flag(name: .long, help: "Restrict the drag to the source app's scenes.")
    var restricted = false

    @Flag(name: .long, help: "Print one JSON object per line (keys are listed in the discussion).")
    var json = false

    @OptionGroup var bus: BusOptions

    /// Where the drag goes.
    enum Destination: Equatable {
        case scene(SceneTarget)
        case point(Point)
        case edge(ScenePlacement)
    }

    func validate() throws {
        switch (from, app) {
        case (nil, nil): throw ValidationError("Give --from APP[/SESSION] (or --app APP with --edge).")
        case (.some, .some): throw ValidationError("--from and --app cannot be combined: --app drags an app's icon.")
        default: break
        }
        if let app, app.isEmpty { throw ValidationError("--app needs an app id.") }
        let destinations = [to.map { _ in "--to" }, at.map { _ in "--at" }, edge.map { _ in "--edge" }].compactMap { $0 }
        if destinations.count > 1 { throw ValidationError("\(destinations.joined(separator: " and ")) cannot be combined: give one destination.") }
        if app != nil {
            guard edge != nil else { throw ValidationError("--app needs --edge left|right: an app's icon does something only at an edge.") }
            for (name, given) in [("--item", item != nil), ("--text", text != nil), ("--file", file != nil), ("--move", move),
                                  ("--restricted", restricted), ("--preview-title", previewTitle != nil),
                                  ("--preview-image", previewImage != nil)] where given {
                throw ValidationError("\(name) does not apply to --app (an app's icon carries no items).")
            }
        } else if destinations.isEmpty {
            throw ValidationError("Give a destination: --to APP[/SESSION], --at X,Y or --edge left|right.")
        }
        if text != nil, file != nil { throw ValidationError("--text and --file cannot be combined: give one item.") }
        if item != nil, text != nil || file != nil { throw ValidationError("--item picks what the source app provides; drop it with --text or --file.") }
        if let item, item < 0 || item > Int(UInt32.max) { throw ValidationError("--item must be 0 or more, not \(item).") }
        if let screen, screen < 0 { throw ValidationError("--screen must be 0 or more, not \(screen).") }
        if screen != nil, edge == nil { throw ValidationError("--screen applies only with --edge.") }
        if let file, file.isEmpty { throw ValidationError("--file needs a path.") }
        if let previewTitle {
            do { try DragPreview.validateTitle(previewTitle) } catch { throw ValidationError("--preview-title: \(error.message)") }
        }
        if let previewImage, previewImage.isEmpty { throw ValidationError("--preview-image needs a path.") }
    }

    /// The destination the arguments name (after ``validate()``).
    var destination: Destination? {
        if let to { return .scene(to) }
        if let at { return .point(at) }
        if let edge { return .edge(edge) }
        return nil
    }

    /// The largest coordinate the broker takes for a drag's location (`DragManager1`'s ±10,000,000).
    static let coordinateLimit = 10_000_000.0

    func run() async throws {
        let items = try readItems()
        let client = try await bus.connect()
        let run = DragRun(client: client, json: json)
        let outcome: DragOutcome
        if let app, let edge {
            outcome = try await run.iconDrag(app: app, edge: edge, screen: screen ?? 0, via: via)
        } else if let from, let destination {
            // Items over 1 MiB are promised: ferry serves them itself, as a registered tool.
            if items.contains(where: \.needsPromises) { try await client.registerCommandLineTool() }
            let options = DragOptions(allowsMove: move, restrictedToApp: restricted, item: item,
                                      providers: items.isEmpty ? nil : try items.map { try $0.provider(lazy: false) },
                                      previews: try readPreview().map { [$0] } ?? [])
            outcome = try await run.drag(from: from, to: destination, screen: screen, via: via, options: options)
        } else {
            throw CLIFailure(.usage, "give --from APP[/SESSION] and a destination, or --app APP --edge left|right")
        }
        // A drop that transferred nothing: its outcome line said why; the status says so too.
        if !(outcome.operation.transfersItems || outcome.newSession != nil) { throw ExitCode(ExitStatus.failure.rawValue) }
    }

    /// The item `--text` or `--file` gives (none: the source app provides).
    /// - Throws: `CLIFailure` (status 2) for a file that cannot be read.
    func readItems() throws -> [CopyItem] {
        if let text { return [CopyItem(representations: [(.utf8PlainText, CopySource.text(text))])] }
        guard let file else { return [] }
        return [try Self.fileItem(file)]
    }
}
