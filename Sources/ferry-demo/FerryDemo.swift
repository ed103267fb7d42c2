import ArgumentParser
import FerryLogging
import Logging
import FerryModel
import FerryTerminal
import UnixSignals
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `ferry-demo FOLDER`: runs the demo app in FOLDER (`Fixtures/Apps/Notes`,
/// `Fixtures/Apps/Gallery`) on the Ferry broker until SIGTERM or SIGINT.
@main
struct FerryDemo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ferry-demo",
        abstract: "Run a Ferry demo app (Notes or Gallery) from its folder.",
        discussion: """
            Registers FOLDER/Info.plist with the broker, restores the app's scenes and prints one \
            line per event on standard output (--json: one JSON object per line), then READY once \
            registered. Notes keeps its notes, Gallery its photos, in the state directory (copied \
            from FOLDER/Content on first run), and each scene's state in \
            <state dir>/scenes/<persistent id>.plist. Its scenes are drag sources (a note, a photo) \
            and drop targets (Notes: text and images, an image becoming an attachment; Gallery: \
            images), printing drag-* and drop-* events. Each scene shares its note or photo \
            (share-provided, share-completed); Gallery performs "Add to Album" \
            (org.ferry.gallery.add-to-album) and Notes "Append to Note" (org.ferry.notes.append) \
            for anyone's share (activity-began, activity-performed). SIGTERM or SIGINT saves every \
            scene and exits.

            EXIT STATUS
              0   stopped by SIGTERM or SIGINT after saving
              1   the broker refused the app, a file could not be written
              64  usage error: bad arguments, a folder without a valid Info.plist,
                  an app that is neither Notes nor Gallery
              69  no bus, or no broker on it
            """,
        version: FerryVersion.line(for: "ferry-demo"))

    @Argument(help: ArgumentHelp("The app folder, holding Info.plist and Content/.", valueName: "folder"))
    var folder: String

    @Option(help: ArgumentHelp("The D-Bus address to use (default: the session bus).", valueName: "address"))
    var bus: String?

    @Flag(help: "Print events as JSON lines.")
    var json = false

    @Flag(help: "Also print a drag-moved event for every move of a drag from this app, and every drop-updated (not only changes).")
    var verbose = false

    @Option(help: ArgumentHelp("Where the app keeps its content and scene state (default: $XDG_STATE_HOME/ferry-demo/<bundle id>).",
                               valueName: "dir"))
    var stateDir: String?

    @Flag(help: "Mark the scenes' activities not eligible for handoff: they never reach your other devices.")
    var noHandoff = false

    @Option(help: ArgumentHelp("Keep the scenes showing this item on this machine (repeatable): their activities never reach your other devices.",
                               valueName: "item"))
    var handoffLocal: [String] = []

    /// Hidden, for tests: each share activity of the app waits this long before it reads the
    /// items, so a test can kill the app mid-perform (docs/demo-apps.md).
    @Option(help: ArgumentHelp("Wait this many seconds at the start of every share activity (tests).",
                               valueName: "seconds", visibility: .hidden))
    var performDelay: Double?

    func validate() throws {
        if let performDelay, !(performDelay >= 0 && performDelay <= 600) {
            throw ValidationError("--perform-delay must be 0 to 600 seconds")
        }
        if folder.isEmpty { throw ValidationError("the folder must not be empty") }
        if let bus, bus.isEmpty { throw ValidationError("--bus must not be empty") }
        if let stateDir, stateDir.isEmpty { throw ValidationError("--state-dir must not be empty") }
    }

    func run() async throws {
        // Standard output is the app's events: the service group's own log lines go to
        // standard error, warnings only.
        FerryLogging.bootstrap(level: .warning)
        do {
            let signals = await UnixSignalsSequence(trapping: .sigterm, .sigint)
            let folder = try DemoFolder(path: folder)
            let stateDirectory = stateDir.map { URL(fileURLWithPath: $0, isDirectory: true) }
                ?? folder.defaultStateDirectory(environment: ProcessInfo.processInfo.environment)
            let app = try DemoApp(folder: folder, stateDirectory: stateDirectory,
                                  printer: EventPrinter(app: folder.manifest.bundleIdentifier, json: json), verbose: verbose,
                                  performDelay: performDelay.map { .milliseconds(Int(($0 * 1000).rounded())) },
                                  handoffEligible: !noHandoff, handoffLocalItems: Set(handoffLocal))
            try await app.run(bus: bus, signals: signals)
        } catch {
            writeToStandardError("ferry-demo: error: \(error.message)\n")
            throw ExitCode(error.status.rawValue)
        }
    }
}
