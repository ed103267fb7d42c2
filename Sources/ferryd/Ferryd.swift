import ArgumentParser
import BrokerCore
import DBus
import Dispatch
import FerryBroker
import FerryLogging
import FerryContinuity
import FerryModel
import FerryTerminal
import Logging
import ServiceLifecycle
import UnixSignals
#if canImport(Glibc)
import Glibc
#endif

/// `ferryd`: the Ferry broker. Owns `org.ferry.Broker` on the session bus and serves
/// `org.ferry.Broker1` at `/org/ferry/Broker`, one `org.ferry.Pasteboard1` object per
/// pasteboard under `/org/ferry/Pasteboard`, the scenes under `/org/ferry/Scenes`, the drags
/// under `/org/ferry/Drag` and the shares at `/org/ferry/Sharing` until SIGTERM/SIGINT or until
/// replaced.
@main
struct Ferryd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ferryd",
        abstract: "The Ferry broker: owns org.ferry.Broker on the session bus.",
        discussion: """
            Prints READY on standard output once it owns org.ferry.Broker; logs one line per event \
            on standard error (--verbose adds debug detail: each direct connection, drag and share \
            step). Started by the bus (D-Bus activation: $DBUS_STARTER_BUS_TYPE is set) \
            it is quiet unless --verbose: no READY, and only warnings and errors on standard error. \
            SIGTERM, SIGINT or SIGHUP, or losing the name to `ferryd --replace`, shut it down \
            gracefully (exit status 0).

            One ferryd serves one state directory, and so one session bus per user by default; \
            ferryd records its pid and bus in the directory's ferry.lock, and a second one names \
            them when it is refused. --replace takes the name over from the ferryd on this bus and \
            waits (at most 20 s) for it to shut down and release the state directory.

            Exit status: 0 after a clean shutdown; 1 when it cannot connect, the name is taken \
            (without --replace) or another daemon holds the state directory; 64 for bad arguments.
            """,
        version: FerryVersion.line(for: "ferryd"))

    @Option(help: "The bus address (default: $DBUS_SESSION_BUS_ADDRESS).")
    var bus: String?

    @Option(help: "The state directory (default: $XDG_STATE_HOME/ferry).")
    var stateDir: String?

    @Flag(help: "Take org.ferry.Broker over from a running ferryd.")
    var replace = false

    @Flag(help: "Print no READY line and log only warnings and errors (the default when the bus starts ferryd).")
    var quiet = false

    @Flag(help: "Print READY and log every event, debug detail included, even when the bus starts ferryd.")
    var verbose = false

    @Option(help: ArgumentHelp("The paste policy file (default: $XDG_CONFIG_HOME/ferry/paste-policy).", valueName: "file"))
    var policy: String?

    @Option(help: ArgumentHelp("How long a paste the policy asks the user about waits for an answer before it is denied.",
                               valueName: "seconds"))
    var consentTimeout: Double = 30

    @Option(help: "How many previous contents of the general pasteboard to keep (0: no history).")
    var historyLimit = 100

    @Option(help: ArgumentHelp("The most bytes the history may hold; the oldest entries go first (K, M or G).",
                               valueName: "bytes"))
    var historyBytes = ByteCount(PasteboardStore.defaultHistoryBytes)

    @Option(help: ArgumentHelp("The most the pasteboards' files may take on disk (suffix K, M or G).", valueName: "bytes"))
    var diskBudget = ByteCount(4 << 30)

    @Option(help: ArgumentHelp("The most that drags', shares' and sensitive items may hold in memory in all (K, M or G).",
                               valueName: "bytes"))
    var memoryBudget = ByteCount(256 << 20)

    @Option(help: ArgumentHelp("The most that one caller's drags, shares and sensitive items may hold in memory (K, M or G).",
                               valueName: "bytes"))
    var callerMemoryBudget = ByteCount(64 << 20)

    @Option(help: ArgumentHelp("A screen of the desktop, left to right; repeat for more (default: one 1920x1080).",
                               valueName: "WIDTHxHEIGHT"))
    var screen: [Size] = []

    @Option(help: ArgumentHelp("An external display right of the screens, where external-display scenes go (non-interactive).",
                               valueName: "WIDTHxHEIGHT"))
    var externalDisplay: Size?

    @Option(help: ArgumentHelp("The width of the zones along each screen's left and right edges where a drop opens a new scene.",
                               valueName: "px"))
    var edgeZone: Double = Desktop.defaultEdgeZone

    @OptionGroup(title: "Continuity (Universal Clipboard between your machines; off by default)")
    var continuity: ContinuityOptions

    // For tests: how long an fd given to SetItems may deliver nothing before Timeout (seconds).
    @Option(help: .hidden)
    var descriptorTimeout: Double = 30

    // For tests: how long a drag may stay without a Move, Drop or Cancel (seconds).
    @Option(help: .hidden)
    var dragIdleTimeout: Double = 60

    // For tests: how long a share may stay without Perform (seconds).
    @Option(help: .hidden)
    var shareIdleTimeout: Double = 120

    // For tests: how long an activity's app has for PerformActivity (seconds).
    @Option(help: .hidden)
    var sharePerformTimeout: Double = 30

    // For tests: how long a direct-connection token stays good (seconds).
    @Option(help: .hidden)
    var directTokenLifetime: Double = 10

    // For tests: how long an app has to answer ChooseConfiguration (seconds).
    @Option(help: .hidden)
    var sceneChooseTimeout: Double = 5

    // For tests: how long an app has to answer the other scene calls but PerformPaste (seconds).
    @Option(help: .hidden)
    var sceneCallTimeout: Double = 10

    func validate() throws {
        if quiet && verbose { throw ValidationError("--quiet and --verbose exclude each other") }
        if let bus, bus.isEmpty { throw ValidationError("--bus must not be empty") }
        if let stateDir, stateDir.isEmpty { throw ValidationError("--state-dir must not be empty") }
        if let policy, policy.isEmpty { throw ValidationError("--policy must not be empty") }
        try continuity.validate()
        guard historyLimit >= 0 else { throw ValidationError("--history-limit must not be negative") }
        guard consentTimeout > 0, consentTimeout <= 86_400 else {
            throw ValidationError("--consent-timeout must be between 0 and 86400 seconds")
        }
        do {
            try Desktop.validate(screenSizes: screenSizes + (externalDisplay.map { [$0] } ?? []), edgeZone: edgeZone)
        } catch let error as FerryModelError {
            throw ValidationError(error.message)
        }
        guard descriptorTimeout > 0, descriptorTimeout <= 86_400 else {
            throw ValidationError("--descriptor-timeout must be between 0 and 86400 seconds")
        }
        guard dragIdleTimeout > 0, dragIdleTimeout <= 86_400 else {
            throw ValidationError("--drag-idle-timeout must be between 0 and 86400 seconds")
        }
        guard shareIdleTimeout > 0, shareIdleTimeout <= 86_400 else {
            throw ValidationError("--share-idle-timeout must be between 0 and 86400 seconds")
        }
        guard sharePerformTimeout > 0, sharePerformTimeout <= 86_400 else {
            throw ValidationError("--share-perform-timeout must be between 0 and 86400 seconds")
        }
        guard directTokenLifetime > 0, directTokenLifetime <= 3600 else {
            throw ValidationError("--direct-token-lifetime must be between 0 and 3600 seconds")
        }
        guard sceneChooseTimeout > 0, sceneChooseTimeout <= 3600 else {
            throw ValidationError("--scene-choose-timeout must be between 0 and 3600 seconds")
        }
        guard sceneCallTimeout > 0, sceneCallTimeout <= 3600 else {
            throw ValidationError("--scene-call-timeout must be between 0 and 3600 seconds")
        }
    }

    func run() async throws {
        // Drags', shares' and sensitive items' bytes leave the process when they end.
        FreedMemory.returnLargeBuffersAtOnce()
        FerryLogging.bootstrap(level: logLevel)
        let logger = Logger(label: "ferryd")
        let options: Broker.Options
        do {
            options = try brokerOptions()
        } catch let failure as Broker.StartFailure {
            fail(failure.message)
        }
        let broker = Broker(options: options, logger: logger)
        var configuration = ServiceGroupConfiguration(
            services: [.init(service: broker, successTerminationBehavior: .gracefullyShutdownGroup)],
            gracefulShutdownSignals: [.sigterm, .sigint, .sighup], logger: logger)
        configuration.maximumGracefulShutdownDuration = Self.shutdownTime
        configuration.maximumCancellationDuration = .seconds(5)
        do {
            try await ServiceGroup(configuration: configuration).run()
        } catch let failure as Broker.StartFailure {
            fail(failure.message)
        }
    }
}

extension Ferryd {
    /// How long a graceful shutdown may take (the connection's 5 s grace period for the calls it
    /// is running, then the stores close) before the broker is cancelled.
    static let shutdownTime: Duration = .seconds(15)

    /// Whether READY and the event log are left out: `--quiet`, or started by the bus (whose
    /// standard output and error are often the terminal of whoever started the bus) without
    /// `--verbose`.
    var isQuiet: Bool {
        quiet || (!verbose && (StateLockHolder.environmentVariable("DBUS_STARTER_BUS_TYPE") != nil
                               || StateLockHolder.environmentVariable("DBUS_STARTER_ADDRESS") != nil))
    }

    /// What is logged: warnings and errors when ``isQuiet``, everything down to debug detail with
    /// `--verbose`, else events (info) and worse.
    var logLevel: Logger.Level {
        isQuiet ? .warning : verbose ? .debug : .info
    }

    /// The broker's options from the command line (and the continuity config file).
    /// - Throws: ``Broker/StartFailure`` when the continuity options are wrong.
    func brokerOptions() throws -> Broker.Options {
        var options = Broker.Options(busAddress: bus, stateDirectory: stateDir)
        options.replace = replace
        options.announcesReady = !isQuiet
        options.policyPath = policy
        options.historyLimit = historyLimit
        options.historyBytes = historyBytes.bytes
        options.diskBudget = diskBudget.bytes
        options.memory = MemoryBudget(total: Int(memoryBudget.bytes), perCaller: Int(callerMemoryBudget.bytes))
        options.desktop = Desktop(screenSizes: screenSizes, edgeZone: edgeZone, externalDisplay: externalDisplay)
        options.consentTimeout = .milliseconds(Int64(consentTimeout * 1000))
        options.directTokenLifetime = .milliseconds(Int64(directTokenLifetime * 1000))
        let continuity = try continuity.resolved()
        if continuity.isOn {
            options.companions.append { pasteboards, scenes, logger in try continuity.make(pasteboards: pasteboards, scenes: scenes, logger: logger) }
        } else {
            options.companions.append { pasteboards, _, logger in ContinuityOff(connection: pasteboards.connection, logger: logger) }
        }
        options.descriptorTimeout = .milliseconds(Int64(descriptorTimeout * 1000))
        options.dragIdleTimeout = .milliseconds(Int64(dragIdleTimeout * 1000))
        options.shareIdleTimeout = .milliseconds(Int64(shareIdleTimeout * 1000))
        options.sceneTimeouts.choose = .milliseconds(Int64(sceneChooseTimeout * 1000))
        options.sceneTimeouts.call = .milliseconds(Int64(sceneCallTimeout * 1000))
        options.sharePerformTimeout = .milliseconds(Int64(sharePerformTimeout * 1000))
        return options
    }

    /// The `--screen` sizes; none means the default screen.
    var screenSizes: [Size] { screen.isEmpty ? [Desktop.defaultScreenSize] : screen }
}

/// Prints one error line and exits with status 1.
func fail(_ line: String) -> Never {
    writeToStandardError("ferryd: error: \(line)\n")
    exit(1)
}

/// `--disk-budget 512M` and the other byte options.
extension ByteCount: ExpressibleByArgument {
    /// A count as `ByteCount`'s text form reads it (`512M`); nil when it does not.
    public init?(argument text: String) { self.init(text) }
}

/// `--screen 1920x1080`, `--external-display 1280X800`: WIDTHxHEIGHT, two numbers joined by `x`
/// (either case). Whether the size can be a screen (positive, not too large) is
/// `Desktop.validate`'s to say, in `validate()`.
extension Size: ExpressibleByArgument {
    /// The size `argument` names, nil for anything else.
    public init?(argument text: String) {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let width = Double(parts[0]), let height = Double(parts[1]) else { return nil }
        self.init(width: width, height: height)
    }
}
