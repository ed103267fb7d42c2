import ArgumentParser
import DBus
import Dispatch
import FerryBroker
import FerryContinuity
import FerryModel
import FerryTerminal
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
            on standard error. Started by the bus (D-Bus activation: $DBUS_STARTER_BUS_TYPE is set) \
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

    @Flag(help: "Print READY and log every event even when the bus starts ferryd.")
    var verbose = false

    @Option(help: ArgumentHelp("The paste policy file (default: $XDG_CONFIG_HOME/ferry/paste-policy).", valueName: "file"))
    var policy: String?

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
    var screen: [String] = []

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

    func validate() throws {
        if quiet && verbose { throw ValidationError("--quiet and --verbose exclude each other") }
        if let bus, bus.isEmpty { throw ValidationError("--bus must not be empty") }
        if let stateDir, stateDir.isEmpty { throw ValidationError("--state-dir must not be empty") }
        if let policy, policy.isEmpty { throw ValidationError("--policy must not be empty") }
        try continuity.validate()
        guard historyLimit >= 0 else { throw ValidationError("--history-limit must not be negative") }
        do {
            try Desktop.validate(screenSizes: try screenSizes(), edgeZone: edgeZone)
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
    }

    func run() async throws {
        // Drags', shares' and sensitive items' bytes leave the process when they end.
        FreedMemory.returnLargeBuffersAtOnce()
        let signals = SignalWatch([SIGTERM, SIGINT, SIGHUP])
        let log = DaemonLog(everyEvent: !isQuiet)
        let say = log.say
        let connection: Connection
        do {
            if let bus { connection = try await Connection(address: bus) } else { connection = try await Connection.session() }
        } catch {
            fail("cannot connect to the bus: \(error)")
        }
        let directory = stateDir ?? StateDirectory.defaultPath()
        let holder = StateLockHolder(pid: getpid(), busAddress: bus ?? StateLockHolder.environmentVariable("DBUS_SESSION_BUS_ADDRESS") ?? "")
        let openStore = {
            try PasteboardStore.open(directory: stateDir, historyLimit: historyLimit, historyBytes: historyBytes.bytes,
                                     descriptorTimeout: .milliseconds(Int64(descriptorTimeout * 1000)), diskBudget: diskBudget.bytes, holder: holder)
        }
        let store: PasteboardStore
        do {
            store = try openStore()
        } catch let error as FerryModelError where error.code == .unavailable && replace {
            // The ferryd being replaced holds the state directory until it has shut down, and it
            // shuts down when it loses the name: take the name first, then wait for the lock.
            guard let previous = await takeNameFromHolder(of: directory, on: connection) else {
                await connection.close(gracePeriod: .zero)
                fail("\(error.message) (its lock \(directory)/ferry.lock is held); --replace takes over only the ferryd "
                     + "that owns \(BrokerService.busName.rawValue) on this bus")
            }
            say("took \(BrokerService.busName.rawValue) over from \(previous.description); waiting for it to release \(directory)")
            guard let opened = await waitForStore(openStore) else {
                await connection.close(gracePeriod: .zero)
                fail("\(previous.description) did not release \(directory) within \(Self.replaceWait)")
            }
            store = opened
        } catch let error as FerryModelError {
            await connection.close(gracePeriod: .zero)
            fail(error.code == .unavailable ? "\(error.message) (its lock \(directory)/ferry.lock is held)" : error.message)
        }
        let sceneStore: SceneStore
        do {
            sceneStore = try SceneStore.open(directory: store.directory)
        } catch {
            await connection.close(gracePeriod: .zero)
            store.close()
            fail("cannot open \(store.directory)/\(SceneStore.fileName): \(error)")
        }
        for damaged in store.setAside + [sceneStore.setAside].compactMap({ $0 }) { log.warn(damaged.description) }
        let registry = AppRegistry(ownUID: getuid())
        let pastePolicy = PastePolicyFile(path: policy ?? PastePolicyFile.defaultPath(), log: log.warn)
        let pasteboards = PasteboardService(connection: connection, store: store, registry: registry, policy: pastePolicy,
                                            relay: PromiseRelay(connection: connection), ownUID: getuid(),
                                            memory: MemoryBudget(total: Int(memoryBudget.bytes), perCaller: Int(callerMemoryBudget.bytes)),
                                            log: say)
        let scenes = SceneService(connection: connection, registry: registry, store: sceneStore,
                                  desktop: Desktop(screenSizes: try screenSizes(), edgeZone: edgeZone),
                                  foregroundApps: pasteboards.foregroundApps, ownUID: getuid(), log: say)
        let service = BrokerService(connection: connection, registry: registry, pasteboards: pasteboards, scenes: scenes,
                                    log: say)
        service.restrictStandardInterfaces()
        let drags = DragService(connection: connection, scenes: scenes, pasteboards: pasteboards, registry: registry,
                                ownUID: getuid(), idleTimeout: .milliseconds(Int64(dragIdleTimeout * 1000)), log: say)
        let shares = ShareService(connection: connection, scenes: scenes, pasteboards: pasteboards, registry: registry,
                                  ownUID: getuid(), idleTimeout: .milliseconds(Int64(shareIdleTimeout * 1000)),
                                  performTimeout: .milliseconds(Int64(sharePerformTimeout * 1000)), log: say)
        let bridge: Continuity?
        do {
            bridge = try continuity.make(pasteboards: pasteboards, log: say)
        } catch {
            await connection.close(gracePeriod: .zero)
            sceneStore.close()
            store.close()
            fail("continuity: \(error)")
        }
        let changes = try await service.startWatching()
        let nameChanges = try await connection.nameOwnerChanges(for: BrokerService.busName)
        try await pasteboards.exportAll()
        do {
            try await scenes.start()
        } catch {
            await connection.close(gracePeriod: .zero)
            sceneStore.close()
            store.close()
            fail("cannot load the scene sessions: \(error)")
        }
        try service.export()
        try await drags.start()
        try await shares.start()
        let flags: NameRequestFlags = replace ? [.allowReplacement, .replaceExisting] : [.allowReplacement, .doNotQueue]
        let reply = try await connection.requestName(BrokerService.busName, flags: flags)
        guard reply == .primaryOwner || reply == .alreadyOwner else {
            let owner = (try? await connection.owner(of: BrokerService.busName))?.rawValue ?? "another connection"
            await connection.close(gracePeriod: .zero)
            sceneStore.close()
            store.close()
            fail("\(BrokerService.busName.rawValue) is already owned by \(owner) (use --replace to take it over)")
        }
        say("owns \(BrokerService.busName.rawValue) as \(connection.uniqueName) (pid \(getpid()))")
        bridge?.start()
        if !isQuiet {
            print("READY")
            fflush(nil)
        }

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
                let me = connection.uniqueName.rawValue
                do {
                    for try await change in nameChanges where change.newOwner?.rawValue != me {
                        return "lost \(BrokerService.busName.rawValue) to \(change.newOwner?.rawValue ?? "nobody")"
                    }
                } catch {}
                return "the bus connection closed"
            }
            group.addTask {
                for await signal in signals.stream { return signal == SIGTERM ? "SIGTERM" : signal == SIGHUP ? "SIGHUP" : "SIGINT" }
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
            signals.finish()
            group.cancelAll()
            return reason ?? "the bus connection closed"
        }
        say("shutting down: \(reason)")
        bridge?.stop()
        await pasteboards.relay.cancelAll()
        await connection.close()
        _ = try? await pasteboards.pasteLog(limit: 0)  // the records still queued reach the store
        sceneStore.close()
        store.close()
        say("stopped")
    }
}

extension Ferryd {
    /// How long `--replace` waits for the ferryd it replaces to release the state directory
    /// (that one first finishes the calls it is running, up to its 5 s grace period).
    static let replaceWait: Duration = .seconds(20)

    /// Whether READY and the event log are left out: `--quiet`, or started by the bus (whose
    /// standard output and error are often the terminal of whoever started the bus) without
    /// `--verbose`.
    var isQuiet: Bool {
        quiet || (!verbose && (StateLockHolder.environmentVariable("DBUS_STARTER_BUS_TYPE") != nil
                               || StateLockHolder.environmentVariable("DBUS_STARTER_ADDRESS") != nil))
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

    /// The `--screen` sizes (`1920x1080`); none means the default screen.
    func screenSizes() throws -> [Size] {
        guard !screen.isEmpty else { return [Desktop.defaultScreenSize] }
        return try screen.map { text in
            let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
            guard parts.count == 2, let width = Double(parts[0]), let height = Double(parts[1]) else {
                throw ValidationError("--screen \(text): expected WIDTHxHEIGHT, e.g. 1920x1080")
            }
            return Size(width: width, height: height)
        }
    }
}

/// ferryd's log on standard error, one line per event: `ferryd: <line>`.
struct DaemonLog: Sendable {
    /// Whether every event is logged; when false (`--quiet`), only warnings: what ferryd could not
    /// do ("cannot …") and the paste policy file's problems.
    let everyEvent: Bool

    /// Logs `line` whatever `everyEvent` says: a warning.
    let warn: @Sendable (String) -> Void = { line in writeToStandardError("ferryd: \(line)\n") }

    /// Logs `line`, an event (kept when quiet if it says what ferryd could not do).
    var say: @Sendable (String) -> Void {
        let everyEvent = everyEvent
        return { line in
            if everyEvent || line.hasPrefix("cannot ") { writeToStandardError("ferryd: \(line)\n") }
        }
    }
}

/// Prints one error line and exits with status 1.
func fail(_ line: String) -> Never {
    writeToStandardError("ferryd: error: \(line)\n")
    exit(1)
}

/// Writes `text` to fd 2 in one `write` (lines from several tasks do not interleave).
func writeToStandardError(_ text: String) {
    var bytes = Array(text.utf8)
    bytes.withUnsafeMutableBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let n = write(2, buffer.baseAddress! + offset, buffer.count - offset)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            offset += n
        }
    }
}

/// `--disk-budget 512M` and the other byte options.
extension ByteCount: ExpressibleByArgument {
    public init?(argument text: String) { self.init(text) }
}
