import ArgumentParser
import DesktopClipboard
import Dispatch
import Ferry
import FerryBridge
import FerryLogging
import Logging
import FerryModel
import FerryTerminal
import UnixSignals
#if canImport(Glibc)
import Glibc
#endif

/// `ferry-bridge`: joins the desktop's clipboards to Ferry's pasteboards, one per graphical session.
@main
struct FerryBridgeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ferry-bridge",
        abstract: "Join the desktop's clipboard (X11 or Wayland) to Ferry's pasteboards.",
        discussion: """
            Every copy made in a desktop app lands on Ferry's general pasteboard (PRIMARY on the \
            named pasteboard 'primary'), typed, and survives the app that made it; every copy made \
            through Ferry becomes the desktop's clipboard. One bridge runs per graphical session \
            (it owns org.ferry.Bridge on the session bus; 'ferry bridge status' shows its state).

            --backend auto takes Wayland (ext-data-control-v1, else wlr-data-control v2) when \
            WAYLAND_DISPLAY is set and the compositor offers one, else X11 (XFixes) when DISPLAY \
            is set; never both. When the display or the bus goes away it connects again, waiting \
            0.5 s, then twice as long each time, up to 30 s. SIGTERM or SIGINT: it gives up the \
            selections it serves and exits with status 0. Exit status 69 when there is no display \
            it can use at start, or another bridge runs. Unless --quiet, it prints 'READY \
            PROTOCOL DISPLAY' on standard output once it bridges.
            """,
        version: FerryVersion.line(for: "ferry-bridge"))

    @Option(name: .long, help: ArgumentHelp("auto, wayland or x11.", valueName: "backend"))
    var backend: BackendChoice = .auto

    @Option(name: .long, help: ArgumentHelp("The D-Bus address to use (default: the session bus).", valueName: "address"))
    var bus: String?

    @Option(name: .long, help: ArgumentHelp("The most bytes one type of a copy may have to be kept.",
                                            valueName: "size"))
    var bytesPerType = ByteCount(Int64(BridgeBudgets.defaults.bytesPerType))

    @Option(name: .long, help: ArgumentHelp("The most bytes all types of one copy may have to be kept.",
                                            valueName: "size"))
    var bytesPerSelection = ByteCount(Int64(BridgeBudgets.defaults.bytesPerSelection))

    @Option(name: .long, help: ArgumentHelp("How long an app may send nothing while it is copied, in seconds.",
                                            valueName: "seconds"))
    var idleTimeout: Double = 3

    @Option(name: .long, help: ArgumentHelp("The most types taken from one copy.", valueName: "count"))
    var maximumTypes: Int = 50

    @Flag(name: .shortAndLong, help: "Log every import, export and restore on standard error.")
    var verbose = false

    @Flag(name: .shortAndLong, help: "Log only warnings (the default).")
    var quiet = false

    func validate() throws {
        if quiet && verbose { throw ValidationError("--quiet and --verbose exclude each other") }
        guard idleTimeout > 0, idleTimeout <= 600 else { throw ValidationError("--idle-timeout must be in (0, 600] seconds") }
        guard (1...1000).contains(maximumTypes) else { throw ValidationError("--maximum-types must be 1–1000") }
        guard bytesPerType.bytes > 0, bytesPerSelection.bytes > 0 else { throw ValidationError("a byte budget must be positive") }
    }

    func run() async throws {
        signal(SIGPIPE, SIG_IGN)
        let budgets = BridgeBudgets(bytesPerType: UInt64(bytesPerType.bytes), bytesPerSelection: UInt64(bytesPerSelection.bytes),
                                    idleTimeout: .milliseconds(Int64(idleTimeout * 1000)), maximumTypes: maximumTypes)
        FerryLogging.bootstrap(level: verbose ? .info : .warning)
        let log = BridgeLog(verbose: verbose)
        // Fail at once, with one line, when there is no display to bridge.
        do {
            try BackendChoice.checkEnvironment(backend)
        } catch {
            Self.fail("\(error)")
        }
        let supervisor = Supervisor(choice: backend, busAddress: bus, budgets: budgets, log: log, announcesReady: !quiet)
        let signals = await UnixSignalsSequence(trapping: .sigterm, .sigint)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await supervisor.run() }
            group.addTask { for await _ in signals { break } }
            await group.next()
            group.cancelAll()
        }
        await supervisor.stop()
        // Leave without the client library's exit flush: promises still served from live apps are
        // not copied on the way out (a secret must never be), and complete copies are in ferryd.
        _exit(supervisor.exitStatus)
    }

    static func fail(_ line: String, status: Int32 = 69) -> Never {
        writeToStandardError("ferry-bridge: \(line)\n")
        Glibc.exit(status)
    }
}

/// `--backend`.
enum BackendChoice: String, ExpressibleByArgument, CaseIterable {
    case auto, wayland, x11

    /// Throws when the environment names no display for this choice.
    static func checkEnvironment(_ choice: BackendChoice) throws {
        let environment = Environment.current
        switch choice {
        case .auto where environment.wayland == nil && environment.x11 == nil:
            throw BridgeError(.unavailable, "no display: neither WAYLAND_DISPLAY nor DISPLAY is set")
        case .wayland where environment.wayland == nil:
            throw BridgeError(.unavailable, "--backend wayland needs WAYLAND_DISPLAY")
        case .x11 where environment.x11 == nil:
            throw BridgeError(.unavailable, "--backend x11 needs DISPLAY")
        default: break
        }
    }
}

/// The display variables.
struct Environment {
    var wayland: String?
    var x11: String?

    static var current: Environment {
        func value(_ name: String) -> String? {
            guard let raw = getenv(name) else { return nil }
            let text = String(cString: raw)
            return text.isEmpty ? nil : text
        }
        return Environment(wayland: value("WAYLAND_DISPLAY"), x11: value("DISPLAY"))
    }
}

/// `--bytes-per-type 64M` and the other byte options.
extension ByteCount: ExpressibleByArgument {
    /// A count as `ByteCount`'s text form reads it (`64M`); nil when it does not.
    public init?(argument text: String) { self.init(text) }
}
