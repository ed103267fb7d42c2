import Ferry
import FerryModel
import Logging
import ServiceLifecycle
import Synchronization
import UnixSignals
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// One running demo app: its folder, content, per-scene state files and event printer, shared by
/// the application delegate and every scene delegate.
final class DemoApp: Sendable {
    let folder: DemoFolder
    let printer: EventPrinter
    let library: ContentLibrary
    let states: SceneStateStore
    let stateDirectory: URL
    /// The drags and drops in flight.
    let drags = DragBook()
    /// Print every drag move and every drop update (`--verbose`), not only changes.
    let verbose: Bool
    /// Gallery's albums (``GalleryAlbums``; unused by Notes).
    let albums: GalleryAlbums
    /// How long a share activity of this app waits before it reads the items (the hidden option
    /// `--perform-delay`, for tests that kill the app mid-perform); nil: none.
    let performDelay: Duration?
    /// Whether the scenes' activities may be continued on other devices (`--no-handoff` makes
    /// them not eligible for handoff).
    let handoffEligible: Bool
    /// The items whose scenes stay on this machine (`--handoff-local ITEM`): marked local
    /// (``Scene/setHandoffLocal(_:)``), their activities are never offered to other devices.
    let handoffLocalItems: Set<String>
    /// Counts scenes coming to the front (``nextFrontRank()``).
    private let frontRanks = Atomic<Int>(0)

    /// Which demo app this is.
    var kind: DemoKind { folder.kind }
    /// The name used in titles (`Notes`).
    var appName: String { folder.appName }

    /// Prepares the state directory: the content copied on first run, the `scenes/` folder.
    /// - Throws: `DemoFailure` when the state directory cannot be set up.
    init(folder: DemoFolder, stateDirectory: URL, printer: EventPrinter, verbose: Bool = false,
         performDelay: Duration? = nil, handoffEligible: Bool = true, handoffLocalItems: Set<String> = []) throws(DemoFailure) {
        self.folder = folder
        self.handoffEligible = handoffEligible
        self.handoffLocalItems = handoffLocalItems
        self.verbose = verbose
        self.performDelay = performDelay
        self.printer = printer
        self.stateDirectory = stateDirectory
        do {
            try FileManager.default.createDirectory(at: stateDirectory, withIntermediateDirectories: true)
        } catch {
            throw DemoFailure(.failure, "cannot make the state directory \(stateDirectory.path): \(error)")
        }
        library = try ContentLibrary(kind: folder.kind, stateDirectory: stateDirectory, appFolder: folder.url)
        states = try SceneStateStore(stateDirectory: stateDirectory)
        albums = GalleryAlbums(stateDirectory: stateDirectory)
    }

    /// A number larger than every one given before: a scene that connects or becomes
    /// `foregroundActive` takes one, so the largest among an app's scenes is its front-most.
    func nextFrontRank() -> Int {
        frontRanks.add(1, ordering: .relaxed).newValue
    }

    /// Connects, registers the app (its archived scenes then reconnect), prints `registered` and
    /// `READY`, and runs until a signal. Then, in a `ServiceGroup`: the app saves every scene's
    /// file and returns, which shuts the group down gracefully, and the client's
    /// ``FerryClient/FlushService`` hands the scenes' state and whatever the app still promises
    /// to the broker, within ``shutdownDeadline``.
    /// - Throws: `DemoFailure`: `.noBroker` without a bus or broker, `.failure` when the broker
    ///   refuses the app.
    func run(bus: String?, signals: UnixSignalsSequence) async throws(DemoFailure) {
        let client: FerryClient
        do {
            client = try await FerryClient.connect(address: bus)
        } catch {
            throw DemoFailure(.noBroker, error.message)
        }
        let delegate = DemoAppDelegate(app: self)
        let application: Application
        do {
            application = try await Application.register(client: client, manifest: folder.manifestBytes, delegate: delegate)
        } catch {
            await client.close()
            throw DemoFailure(error.code == .noBroker ? .noBroker : .failure,
                              "cannot register \(folder.manifest.bundleIdentifier): \(error.message)")
        }
        printer.print(DemoEvent("registered", headline: ("name", appName),
                                [(kind.contentFolder, .int(library.ids.count))]))
        printer.ready()

        let running = Running(app: self, application: application, signals: signals)
        // Services shut down in reverse order: the app's files first, then the flush.
        var configuration = ServiceGroupConfiguration(
            services: [.init(service: client.flushService(sceneSaveLimit: Self.shutdownDeadline)),
                       .init(service: running, successTerminationBehavior: .gracefullyShutdownGroup)],
            logger: Logger(label: "ferry-demo"))
        configuration.maximumGracefulShutdownDuration = Self.shutdownDeadline + .seconds(1)
        do {
            try await ServiceGroup(configuration: configuration).run()
        } catch {
            report("on the way out: \((error as? FerryError)?.message ?? "\(error)")")
        }
        printer.print(DemoEvent("exit", headline: ("signal", "\(running.received.withLock { $0 })"),
                                [("scenes", .int(running.saved.withLock { $0 }))]))
        // No `client.close()`: it would flush again, waiting on a stuck broker as long again;
        // the connection ends with the process.
    }

    /// The app's part of the group: waits for SIGTERM or SIGINT, then writes every scene's file.
    final class Running: Service {
        let app: DemoApp
        let application: Application
        let signals: UnixSignalsSequence
        /// The signal that stopped the app.
        let received = Mutex(UnixSignal.sigterm)
        /// How many scene files were written on the way out.
        let saved = Mutex(0)

        init(app: DemoApp, application: Application, signals: UnixSignalsSequence) {
            self.app = app
            self.application = application
            self.signals = signals
        }

        func run() async {
            for await signal in signals {
                received.withLock { $0 = signal }
                break
            }
            var count = 0
            for scene in application.connectedScenes {
                if let demo = scene.delegate as? DemoSceneDelegate, demo.persist(scene) { count += 1 }
            }
            saved.withLock { $0 = count }
        }
    }

    /// How long handing the scenes' state to the broker may take on the way out: a broker that
    /// is gone or stuck does not hold up the exit.
    static let shutdownDeadline: Duration = .seconds(5)

    /// Prints an `error` event (a failure that does not stop the app).
    func report(_ message: String, session: String? = nil) {
        printer.print(DemoEvent("error", session: session, [("message", .string(message))]))
    }
}
