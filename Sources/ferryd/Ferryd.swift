import ArgumentParser
import DBus
import Dispatch
import FerryBroker
import FerryModel
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
            on standard error. SIGTERM or SIGINT, or losing the name to `ferryd --replace`, shut it \
            down gracefully (exit status 0).

            Exit status: 0 after a clean shutdown; 1 when it cannot connect, the name is taken \
            (without --replace) or another daemon holds the state directory; 64 for bad arguments.
            """)

    @Option(help: "The bus address (default: $DBUS_SESSION_BUS_ADDRESS).")
    var bus: String?

    @Option(help: "The state directory (default: $XDG_STATE_HOME/ferry).")
    var stateDir: String?

    @Flag(help: "Take org.ferry.Broker over from a running ferryd.")
    var replace = false

    @Option(help: ArgumentHelp("The paste policy file (default: $XDG_CONFIG_HOME/ferry/paste-policy).", valueName: "file"))
    var policy: String?

    @Option(help: "How many previous contents of the general pasteboard to keep (0: no history).")
    var historyLimit = 100

    @Option(help: ArgumentHelp("A screen of the desktop, left to right; repeat for more (default: one 1920x1080).",
                               valueName: "WIDTHxHEIGHT"))
    var screen: [String] = []

    @Option(help: ArgumentHelp("The width of the zones along each screen's left and right edges where a drop opens a new scene.",
                               valueName: "px"))
    var edgeZone: Double = Desktop.defaultEdgeZone

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
        if let bus, bus.isEmpty { throw ValidationError("--bus must not be empty") }
        if let stateDir, stateDir.isEmpty { throw ValidationError("--state-dir must not be empty") }
        if let policy, policy.isEmpty { throw ValidationError("--policy must not be empty") }
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
        let signals = SignalWatch([SIGTERM, SIGINT])
        let connection: Connection
        do {
            if let bus { connection = try await Connection(address: bus) } else { connection = try await Connection.session() }
        } catch {
            fail("cannot connect to the bus: \(error)")
        }
        let store: PasteboardStore
        do {
            store = try PasteboardStore.open(directory: stateDir, historyLimit: historyLimit,
                                             descriptorTimeout: .milliseconds(Int64(descriptorTimeout * 1000)))
        } catch let error as FerryModelError {
            await connection.close(gracePeriod: .zero)
            let directory = stateDir ?? StateDirectory.defaultPath()
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
        for damaged in store.setAside + [sceneStore.setAside].compactMap({ $0 }) { say(damaged.description) }
        let registry = AppRegistry(ownUID: getuid())
        let pastePolicy = PastePolicyFile(path: policy ?? PastePolicyFile.defaultPath(), log: say)
        let pasteboards = PasteboardService(connection: connection, store: store, registry: registry, policy: pastePolicy,
                                            relay: PromiseRelay(connection: connection), ownUID: getuid(), log: say)
        let scenes = SceneService(connection: connection, registry: registry, store: sceneStore,
                                  desktop: Desktop(screenSizes: try screenSizes(), edgeZone: edgeZone),
                                  foregroundApps: pasteboards.foregroundApps, ownUID: getuid(), log: say)
        let service = BrokerService(connection: connection, registry: registry, pasteboards: pasteboards, scenes: scenes,
                                    log: say)
        let drags = DragService(connection: connection, scenes: scenes, pasteboards: pasteboards, registry: registry,
                                ownUID: getuid(), idleTimeout: .milliseconds(Int64(dragIdleTimeout * 1000)), log: say)
        let shares = ShareService(connection: connection, scenes: scenes, pasteboards: pasteboards, registry: registry,
                                  ownUID: getuid(), idleTimeout: .milliseconds(Int64(shareIdleTimeout * 1000)),
                                  performTimeout: .milliseconds(Int64(sharePerformTimeout * 1000)), log: say)
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
        print("READY")
        fflush(nil)

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
                for await signal in signals.stream { return signal == SIGTERM ? "SIGTERM" : "SIGINT" }
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
        await pasteboards.relay.cancelAll()
        await connection.close()
        _ = try? await pasteboards.pasteLog(limit: 0)  // the records still queued reach the store
        sceneStore.close()
        store.close()
        say("stopped")
    }
}

extension Ferryd {
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

/// Prints one log line on standard error: `ferryd: <line>`.
@Sendable func say(_ line: String) {
    writeToStandardError("ferryd: \(line)\n")
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
