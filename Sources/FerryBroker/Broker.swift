#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import BrokerCore
import DBus
import FerryModel
import FerryTerminal
import Logging
import ServiceLifecycle
#if canImport(Glibc)
import Glibc
#endif

/// The broker, assembled: the composition root of `ferryd`. It connects to the bus, opens the
/// state directory's stores, builds the pasteboard, scene, broker, drag and share services, owns
/// `org.ferry.Broker` and serves until the bus connection closes, another ferryd takes the name
/// over (`--replace`) or its ``ServiceGroup`` shuts it down gracefully (SIGTERM, SIGINT, SIGHUP).
///
/// A swift-service-lifecycle `Service`: `ferryd` runs it in a `ServiceGroup`; tests that need
/// the services themselves in their own process call ``start()`` and drive the ``Running``
/// broker. New start-up pieces take an option in ``Options`` and a line in ``start()``.
package final class Broker: Service, Sendable {
    /// Everything `ferryd`'s command line decides; the defaults are ferryd's.
    package struct Options: Sendable {
        /// The bus address; nil is the session bus (`$DBUS_SESSION_BUS_ADDRESS`).
        package var busAddress: String?
        /// The state directory; nil is `$XDG_STATE_HOME/ferry`.
        package var stateDirectory: String?
        /// Whether to take `org.ferry.Broker` over from a running ferryd (`--replace`).
        package var replace = false
        /// Whether `READY` is printed on standard output once the name is owned.
        package var announcesReady = true
        /// The paste policy file; nil is `$XDG_CONFIG_HOME/ferry/paste-policy`.
        package var policyPath: String?
        /// How many previous contents of the general pasteboard are kept.
        package var historyLimit = 100
        /// The most bytes the history may hold.
        package var historyBytes = PasteboardStore.defaultHistoryBytes
        /// The most the pasteboards' files may take on disk, in bytes.
        package var diskBudget = PasteboardStore.defaultDiskBudget
        /// What drags', shares' and sensitive items may hold in memory, in all and per caller.
        package var memory = MemoryBudget()
        /// The desktop's screens and edge zones.
        package var desktop = Desktop()
        /// How long an fd given to SetItems may deliver nothing before Timeout.
        package var descriptorTimeout: Duration = .seconds(30)
        /// How long a drag may stay without a Move, Drop or Cancel.
        package var dragIdleTimeout: Duration = .seconds(60)
        /// How long a read the paste policy asks the user about waits for an answer.
        package var consentTimeout: Duration = PasteConsents.defaultTimeout
        /// How long a direct connection's one-time token stays good.
        package var directTokenLifetime: Duration = DirectListener.defaultTokenLifetime
        /// What runs beside the services from the moment the broker owns its name until it shuts
        /// down (continuity, say), each made from the pasteboards and the scenes once they are
        /// assembled, and the broker's logger; a companion that cannot be made stops the start-up.
        package var companions: [@Sendable (PasteboardService, SceneService, Logger) throws -> any BrokerCompanion] = []
        /// How long a share may stay without Perform.
        package var shareIdleTimeout: Duration = .seconds(120)
        /// How long an activity's app has for PerformActivity.
        package var sharePerformTimeout: Duration = .seconds(30)
        /// How long apps have to answer the scene calls (ChooseConfiguration, the others, PerformPaste).
        package var sceneTimeouts = SceneService.Timeouts()

        /// ferryd's defaults on the session bus.
        package init() {}

        /// ferryd's defaults on the bus at `busAddress`, with the state in `stateDirectory`.
        package init(busAddress: String?, stateDirectory: String?) {
            self.busAddress = busAddress
            self.stateDirectory = stateDirectory
        }
    }

    /// Why the broker could not start, in one line (ferryd prints it and exits 1).
    package struct StartFailure: Error, CustomStringConvertible, Sendable {
        /// The line, e.g. "org.ferry.Broker is already owned by :1.4 (use --replace to take it over)".
        package let message: String
        /// The line.
        package var description: String { message }

        /// A failure to start, said in `message`.
        package init(message: String) {
            self.message = message
        }
    }

    /// How long `--replace` waits for the ferryd it replaces to release the state directory
    /// (that one first finishes the calls it is running, up to its 5 s grace period).
    package static let replaceWait: Duration = .seconds(20)

    /// What the command line decided.
    package let options: Options
    /// Where events (info, detail at debug), what the broker could not do (warnings) and failures
    /// (errors) go; every service logs through it.
    package let logger: Logger

    /// A broker that starts when run.
    package init(options: Options, logger: Logger) {
        self.options = options
        self.logger = logger
    }

    /// Starts the broker and serves until the connection closes, the name is lost or the
    /// service group shuts down gracefully; then shuts down (the connection's calls finish
    /// first, the stores close) and returns.
    /// - Throws: ``StartFailure`` when it cannot start.
    package func run() async throws {
        let running = try await start()
        await withGracefulShutdownHandler {
            await running.serve()
        } onGracefulShutdown: {
            running.stop(reason: "asked to stop (SIGTERM, SIGINT or SIGHUP)")
        }
    }

    /// Connects, opens the stores, assembles and exports the services and owns
    /// `org.ferry.Broker` (printing READY when ``Options/announcesReady``); ``Running/serve()``
    /// then serves.
    /// - Throws: ``StartFailure`` when the bus, the state directory or the name is not to be had.
    package func start() async throws -> Running {
        let connection: Connection
        do {
            if let bus = options.busAddress { connection = try await Connection(address: bus) } else { connection = try await Connection.session() }
        } catch {
            throw StartFailure(message: "cannot connect to the bus: \(error)")
        }
        let store: PasteboardStore
        do {
            store = try await openStore(on: connection)
        } catch {
            await connection.close(gracePeriod: .zero)
            throw error
        }
        let sceneStore: SceneStore
        do {
            sceneStore = try SceneStore.open(directory: store.directory)
        } catch {
            await connection.close(gracePeriod: .zero)
            store.close()
            throw StartFailure(message: "cannot open \(store.directory)/\(SceneStore.fileName): \(error)")
        }
        for damaged in store.setAside + [sceneStore.setAside].compactMap({ $0 }) { logger.warning("\(damaged.description)") }
        do {
            let running = try await assemble(connection: connection, store: store, sceneStore: sceneStore)
            try await requestName(on: connection)
            logger.info("owns \(BrokerService.busName.rawValue) as \(connection.uniqueName) (pid \(getpid()))")
            _ = await running.direct.open()
            for companion in running.companions { companion.start() }
            if options.announcesReady {
                print("READY")
                fflush(nil)
            }
            return running
        } catch {
            await connection.close(gracePeriod: .zero)
            sceneStore.close()
            store.close()
            throw error
        }
    }

    /// The services on `connection`, exported and watching.
    func assemble(connection: Connection, store: PasteboardStore, sceneStore: SceneStore) async throws -> Running {
        let uid = getuid()
        let registry = AppRegistry(ownUID: uid)
        let pastePolicy = PastePolicyFile(path: options.policyPath ?? PastePolicyFile.defaultPath(), logger: logger)
        let direct = DirectListener(bus: connection, busAddress: options.busAddress
                                        ?? StateLockHolder.environmentVariable("DBUS_SESSION_BUS_ADDRESS") ?? "",
                                    tokenLifetime: options.directTokenLifetime, logger: logger)
        let pasteboards = PasteboardService(connection: connection, store: store, registry: registry, policy: pastePolicy,
                                            relay: PromiseRelay(connection: connection, direct: direct), ownUID: uid,
                                            memory: options.memory, consentTimeout: options.consentTimeout, logger: logger)
        let scenes = SceneService(connection: connection, registry: registry, store: sceneStore, desktop: options.desktop,
                                  foregroundApps: pasteboards.foregroundApps, ownUID: uid, callers: pasteboards.callers,
                                  timeouts: options.sceneTimeouts,
                                  direct: direct, logger: logger)
        let service = BrokerService(connection: connection, registry: registry, pasteboards: pasteboards, scenes: scenes,
                                    direct: direct, logger: logger)
        service.restrictStandardInterfaces()
        let drags = DragService(connection: connection, scenes: scenes, pasteboards: pasteboards, registry: registry,
                                idleTimeout: options.dragIdleTimeout, logger: logger)
        let shares = ShareService(connection: connection, scenes: scenes, pasteboards: pasteboards, registry: registry,
                                  idleTimeout: options.shareIdleTimeout,
                                  performTimeout: options.sharePerformTimeout, logger: logger)
        let companions: [any BrokerCompanion]
        do {
            companions = try options.companions.map { try $0(pasteboards, scenes, logger) }
        } catch let failure as StartFailure {
            throw failure
        } catch {
            throw StartFailure(message: "\(error)")
        }
        let changes = try await service.startWatching()
        let nameChanges = try await connection.nameOwnerChanges(for: BrokerService.busName)
        try await pasteboards.exportAll()
        do {
            try await scenes.start()
        } catch {
            throw StartFailure(message: "cannot load the scene sessions: \(error)")
        }
        try service.export()
        try await drags.start()
        try await shares.start()
        return Running(connection: connection, store: store, sceneStore: sceneStore, pasteboards: pasteboards,
                       scenes: scenes, broker: service, drags: drags, shares: shares, direct: direct, companions: companions, changes: changes,
                       nameChanges: nameChanges, logger: logger)
    }

    /// Requests `org.ferry.Broker` (replacing its owner with ``Options/replace``).
    func requestName(on connection: Connection) async throws {
        let flags: NameRequestFlags = options.replace ? [.allowReplacement, .replaceExisting] : [.allowReplacement, .doNotQueue]
        let reply = try await connection.requestName(BrokerService.busName, flags: flags)
        guard reply == .primaryOwner || reply == .alreadyOwner else {
            let owner = (try? await connection.owner(of: BrokerService.busName))?.rawValue ?? "another connection"
            throw StartFailure(message: "\(BrokerService.busName.rawValue) is already owned by \(owner) (use --replace to take it over)")
        }
    }

    /// Opens the pasteboard store, waiting with ``Options/replace`` for the ferryd being replaced
    /// to release the state directory.
    func openStore(on connection: Connection) async throws -> PasteboardStore {
        let directory = options.stateDirectory ?? StateDirectory.defaultPath()
        let holder = StateLockHolder(pid: getpid(), busAddress: options.busAddress
                                     ?? StateLockHolder.environmentVariable("DBUS_SESSION_BUS_ADDRESS") ?? "")
        let options = options
        let open = {
            try PasteboardStore.open(directory: options.stateDirectory, historyLimit: options.historyLimit,
                                     historyBytes: options.historyBytes, descriptorTimeout: options.descriptorTimeout,
                                     diskBudget: options.diskBudget, holder: holder)
        }
        do {
            return try open()
        } catch let error as FerryModelError where error.code == .unavailable && options.replace {
            // The ferryd being replaced holds the state directory until it has shut down, and it
            // shuts down when it loses the name: take the name first, then wait for the lock.
            guard let previous = await takeNameFromHolder(of: directory, on: connection) else {
                throw StartFailure(message: "\(error.message) (its lock \(directory)/ferry.lock is held); --replace takes over "
                                   + "only the ferryd that owns \(BrokerService.busName.rawValue) on this bus")
            }
            logger.info("took \(BrokerService.busName.rawValue) over from \(previous.description); waiting for it to release \(directory)")
            guard let opened = await waitForStore(open) else {
                throw StartFailure(message: "\(previous.description) did not release \(directory) within \(Self.replaceWait)")
            }
            return opened
        } catch let error as FerryModelError {
            throw StartFailure(message: error.code == .unavailable ? "\(error.message) (its lock \(directory)/ferry.lock is held)" : error.message)
        }
    }

    /// Takes `org.ferry.Broker` over from the ferryd that holds `directory`, when that ferryd is the
    /// name's owner on this bus (same pid); returns it, or nil when the holder is another process
    /// (a ferryd on another bus, say), which replacing the name here would not stop.
    func takeNameFromHolder(of directory: String, on connection: Connection) async -> StateLockHolder? {
        guard let holder = StateLockHolder.recorded(in: directory),
              let owner = try? await connection.owner(of: BrokerService.busName),
              let pid = try? await connection.credentials(of: owner).pid, Int32(pid) == holder.pid,
              let reply = try? await connection.requestName(BrokerService.busName, flags: [.allowReplacement, .replaceExisting]),
              reply == .primaryOwner || reply == .alreadyOwner
        else { return nil }
        return holder
    }

    /// Opens the store with `open` until the lock is free, for at most ``replaceWait``.
    func waitForStore(_ open: () throws -> PasteboardStore) async -> PasteboardStore? {
        let deadline = ContinuousClock.now + Self.replaceWait
        while true {
            do {
                return try open()
            } catch let error as FerryModelError where error.code == .unavailable && ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(50))
            } catch {
                return nil
            }
        }
    }
}

extension Broker {
    /// A started broker: its connection, stores and services, owning `org.ferry.Broker`.
    package final class Running: Sendable {
        /// The broker's bus connection.
        package let connection: Connection
        /// The pasteboards' durable store.
        package let store: PasteboardStore
        /// The scene sessions' durable store.
        package let sceneStore: SceneStore
        /// `org.ferry.Pasteboard1` objects.
        package let pasteboards: PasteboardService
        /// The scenes under `/org/ferry/Scenes`.
        package let scenes: SceneService
        /// `org.ferry.Broker1` at `/org/ferry/Broker`.
        package let broker: BrokerService
        /// The drags under `/org/ferry/Drag`.
        package let drags: DragService
        /// The shares at `/org/ferry/Sharing`.
        package let shares: ShareService
        /// The direct (peer-to-peer) connections' listener.
        package let direct: DirectListener
        /// What runs beside the services (``Options/companions``).
        package let companions: [any BrokerCompanion]
        let changes: NameOwnerChanges
        let nameChanges: NameOwnerChanges
        let logger: Logger
        let stops: AsyncStream<String>
        let stopper: AsyncStream<String>.Continuation

        init(connection: Connection, store: PasteboardStore, sceneStore: SceneStore, pasteboards: PasteboardService,
             scenes: SceneService, broker: BrokerService, drags: DragService, shares: ShareService, direct: DirectListener,
             companions: [any BrokerCompanion],
             changes: NameOwnerChanges, nameChanges: NameOwnerChanges, logger: Logger) {
            self.connection = connection
            self.store = store
            self.sceneStore = sceneStore
            self.pasteboards = pasteboards
            self.scenes = scenes
            self.broker = broker
            self.drags = drags
            self.shares = shares
            self.direct = direct
            self.companions = companions
            self.changes = changes
            self.nameChanges = nameChanges
            self.logger = logger
            (stops, stopper) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingOldest(1))
        }

        /// Asks ``serve()`` to shut down, logging `reason` ("shutting down: <reason>").
        package func stop(reason: String) {
            stopper.yield(reason)
        }

        /// Serves until the connection closes, the name goes to another connection or ``stop(reason:)``;
        /// then shuts down: promised transfers end, the connection closes after the calls it is
        /// running (its grace period), the queued paste log reaches the store and the stores close.
        package func serve() async {
            let (service, drags, shares, pasteboards) = (broker, self.drags, self.shares, self.pasteboards)
            let (changes, nameChanges, stops, me) = (self.changes, self.nameChanges, self.stops, connection.uniqueName.rawValue)
            let reason = await withTaskGroup(of: String?.self) { group in
                group.addTask {
                    // A drag whose source app or initiator leaves the bus ends at once; so does a
                    // share whose sharer leaves, and an app's activities go with it.
                    await service.watch(changes, alsoClosed: { name in
                        await drags.connectionClosed(name)
                        await shares.connectionClosed(name)
                    })
                    return "the bus connection closed"
                }
                group.addTask {
                    do {
                        for try await change in nameChanges where change.newOwner?.rawValue != me {
                            return "lost \(BrokerService.busName.rawValue) to \(change.newOwner?.rawValue ?? "nobody")"
                        }
                    } catch {}
                    return "the bus connection closed"
                }
                group.addTask {
                    for await reason in stops { return reason }
                    return nil
                }
                group.addTask { await pasteboards.runExpiry(); return nil }
                group.addTask { await drags.runIdleTimeouts(); return nil }
                group.addTask { await shares.runIdleTimeouts(); return nil }
                var reason: String?
                while let next = await group.next() {
                    if let next { reason = next; break }
                }
                changes.cancel()
                nameChanges.cancel()
                stopper.finish()
                group.cancelAll()
                return reason ?? "the bus connection closed"
            }
            logger.info("shutting down: \(reason)")
            for companion in companions { companion.stop() }
            await pasteboards.relay.cancelAll()
            await direct.close()
            await connection.close()
            _ = try? await pasteboards.pasteLog(limit: 0)  // the records still queued reach the store
            sceneStore.close()
            store.close()
            logger.info("stopped")
        }
    }
}

/// Something that runs beside the broker's services (``Broker/Options/companions``): started once
/// the broker owns `org.ferry.Broker`, stopped first when it shuts down.
package protocol BrokerCompanion: Sendable {
    /// Starts it; it works in the background and returns at once.
    func start()
    /// Stops it; nothing of it runs afterwards.
    func stop()
}
