import ArgumentParser
import Ferry
import FerryModel

/// `ferry share`: the share sheet from a shell — list the activities that can perform with some
/// items (files, text, standard input, or a scene's activity items), or perform one and print
/// its completion.
struct ShareCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "share",
        abstract: "Share files, text or a scene's items: list the activities or perform one.",
        usage: """
            ferry share [FILE...|-|--text S] [--type TYPE]
                        (--list | --activity TYPE [--to DIR])
                        [--exclude TYPE]... [--json] [--bus ADDRESS]
            ferry share --from APP[/SESSION] (--list | --activity TYPE [--to DIR])
                        [--exclude TYPE]... [--json] [--bus ADDRESS]
            """,
        discussion: """
            Each FILE is one item, typed and named as 'ferry copy' does it: the type from \
            --type, else from the file's name and content; the suggested name is the file's \
            name without its extension. With no FILE and no --text, standard input is shared \
            ('-' names it among files); --text is public.utf8-plain-text unless --type says \
            otherwise. --from shares a scene's activity items instead, which its app provides \
            (SESSION as for 'ferry scene': an identifier or a unique prefix of 4+ characters; \
            without it, the app's front-most connected scene).

            --list prints the activities that can perform with the items, in the broker's \
            order (the source app's own first, then the built-ins, then other apps'), one \
            line each: TYPE, TITLE, CATEGORY (action or share) and the app that performs it \
            or (built-in), separated by tabs. --activity performs one and prints the \
            completion: its message, then one line per returned item as KEY=VALUE pairs \
            separated by tabs (save-to-folder: path=FILE for each file written). A built-in \
            activity may be named by its last part: copy, save-to-folder, \
            open-in-new-scene. --to is save-to-folder's folder (required there; a relative \
            path is taken from the current directory). --exclude never lists nor performs \
            that activity. ferry stays until the activity has read the items.

            With --json, --list prints one object with the keys share and activities (array \
            of objects with activityType, title, category, app (null for a built-in) and \
            builtIn); --activity prints one object with the keys share, completed, \
            activityType, returnedItems (array of objects), message, errorName and error \
            (absent values are null).

            Exit status 0 when the activity completed (--list: the list was printed); 1 \
            when it did not (it refused or failed; the completion says why); 2 for an \
            activity that is unknown or cannot perform with these items, nothing to share, \
            an unknown app or session, or a file that cannot be read; 4 when the activity's \
            app went away, or the --from scene is not connected; 5 when the scene's app did \
            not provide its items in time; 64 for bad arguments, e.g. --to without \
            save-to-folder or a --to that is not a folder.
            """)

    @Argument(help: ArgumentHelp("Files to share, one item each; '-' is standard input.", valueName: "file"))
    var files: [String] = []

    @Option(name: .long, help: ArgumentHelp("Share this text (public.utf8-plain-text unless --type says otherwise).",
                                            valueName: "text"))
    var text: String?

    @Option(name: [.short, .long], help: ArgumentHelp("The type of the data: an identifier (public.png) or a MIME type.",
                                                      valueName: "type"))
    var type: String?

    @Option(name: .long, help: ArgumentHelp("Share this scene's activity items (its app provides them).",
                                            valueName: "app[/session]"))
    var from: SceneTarget?

    @Flag(name: .long, help: "List the activities that can perform with the items.")
    var list = false

    @Option(name: .long, help: ArgumentHelp("Perform this activity (a type, or copy, save-to-folder, open-in-new-scene).",
                                            valueName: "type"))
    var activity: String?

    @Option(name: .long, help: ArgumentHelp("The folder save-to-folder writes into.", valueName: "dir"))
    var to: String?

    @Option(name: .long, help: ArgumentHelp("Never list nor perform this activity (repeatable).", valueName: "type"))
    var exclude: [String] = []

    @Flag(name: .long, help: "Print one JSON object (keys are listed in the discussion).")
    var json = false

    @OptionGroup var bus: BusOptions

    func validate() throws {
        switch (list, activity) {
        case (true, .some): throw ValidationError("--list and --activity cannot be combined: list the activities or perform one.")
        case (false, nil): throw ValidationError("Give --list, or --activity TYPE to perform one.")
        default: break
        }
        if from != nil {
            for (name, given) in [("FILE", !files.isEmpty), ("--text", text != nil), ("--type", type != nil)] where given {
                throw ValidationError("\(name) cannot be combined with --from: the scene's app provides the items.")
            }
        }
        if text != nil, !files.isEmpty { throw ValidationError("--text cannot be combined with files.") }
        if files.count(where: { $0 == "-" }) > 1 { throw ValidationError("Standard input ('-') can be shared only once.") }
        if files.contains("") { throw ValidationError("A FILE cannot be an empty path.") }
        if let type, type.isEmpty { throw ValidationError("--type needs a type.") }
        let excluded = try exclude.map { try Self.activityType($0, option: "--exclude") }
        let performed = try activity.map { try Self.activityType($0, option: "--activity") }
        if let performed, excluded.contains(performed) {
            throw ValidationError("--activity \(performed) is excluded by --exclude: it cannot be performed.")
        }
        if let to {
            guard performed == .saveToFolder else {
                throw ValidationError("--to applies only to --activity save-to-folder.")
            }
            if to.isEmpty { throw ValidationError("--to needs a folder.") }
            if to.utf8.contains(0) { throw ValidationError("--to cannot contain a NUL byte.") }
        } else if performed == .saveToFolder {
            throw ValidationError("--activity save-to-folder needs --to DIR: the folder to save the items in.")
        }
    }

    /// An activity argument: an activity type (`org.example.send`), or a built-in's last part
    /// (`copy` → `org.ferry.activity.copy`) — any name without a dot.
    /// - Throws: `ValidationError` naming `option` for a malformed type.
    static func activityType(_ text: String, option: String) throws -> ActivityType {
        let type = ActivityType(rawValue: text.contains(".") ? text : ActivityType.builtInPrefix + text)
        do {
            guard !text.isEmpty else { throw ValidationError("empty") }
            try type.validate()
        } catch {
            throw ValidationError("\(option) needs an activity type (org.example.send, or a built-in: copy, save-to-folder, "
                                  + "open-in-new-scene), not '\(text.printableLine(limit: 80))'.")
        }
        return type
    }
}
