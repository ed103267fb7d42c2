import BrokerCore
import DBus
import FerryModel
import Logging
import Synchronization

/// The scene sessions of every app on the desktop: `org.ferry.Scenes1` at `/org/ferry/Scenes` and
/// one `org.ferry.SceneSession1` object per session, on top of the durable ``SceneStore`` and the
/// ``Desktop`` model (screens, frames, stacking order, derived activation states).
///
/// A session outlives its scene: when its app goes away it stays, archived (unattached), and
/// reconnects at the app's next registration. Apps are called through `org.ferry.Client1`, one
/// call at a time per app (``AppCallbacks``); while the actor awaits an app it serves other
/// calls, so every step re-checks the state it relies on after each `await`.
package actor SceneService {
    /// The `org.ferry.Scenes1` object's path.
    package static let path: ObjectPath = "/org/ferry/Scenes"
    /// The service interface's name.
    package static let interfaceName: InterfaceName = "org.ferry.Scenes1"
    /// The session objects' interface name.
    package static let sessionInterfaceName: InterfaceName = "org.ferry.SceneSession1"
    /// The version of `org.ferry.Scenes1` (its `Version` property).
    package static let version: UInt32 = 3
    /// The version of `org.ferry.SceneSession1` (its `Version` property).
    package static let sessionVersion: UInt32 = 2
    /// How long an app has to answer the broker's `org.ferry.Client1` calls about scenes.
    package struct Timeouts: Sendable {
        /// For `Client1.ChooseConfiguration`; then the manifest's first configuration is used.
        package var choose: Duration = .seconds(5)
        /// For the other scene calls (`ConnectScene`, `DiscardSceneSessions`, …).
        package var call: Duration = .seconds(10)
        /// For `Client1.PerformPaste`.
        package var paste: Duration = .seconds(30)

        /// ferryd's defaults: 5 s, 10 s and 30 s.
        package init() {}
    }

    /// How long apps have to answer (``Timeouts``).
    package nonisolated let timeouts: Timeouts

    /// The connection the scenes are served on.
    package nonisolated let connection: Connection
    /// The apps' direct connections, over which a drag's proposals are asked (``AppCallbacks``).
    nonisolated let direct: DirectListener?
    /// The registered apps (who may update a session).
    package nonisolated let registry: AppRegistry
    /// The durable storage.
    package nonisolated let store: SceneStore
    /// Which apps have a foreground scene, readable without waiting for the actor.
    package nonisolated let foregroundApps: ForegroundApps
    /// The screens, fixed when the service is made.
    package nonisolated let screens: [Screen]
    /// The width of the edge zones.
    package nonisolated let edgeZone: Double
    nonisolated let ownUID: UInt32
    /// Callers' credentials: the broker's one cache (``PasteboardService/callers``).
    nonisolated let callers: CallerCache
    /// Where the service says what happened (info, debug detail) and what it could not do (warnings, errors).
    package nonisolated let logger: Logger

    /// Screens, frames, stacking order and which scenes are connected.
    var desktop: Desktop
    /// Every session, by persistent identifier; `activationState` is the current derived state.
    var sessions: [String: SceneSession] = [:]
    /// Connection options kept for a session's next connection.
    var pending: [String: SceneConnectionOptions] = [:]
    /// The manifest of every app that ever registered with scenes.
    var knownApps: [String: AppManifest] = [:]
    /// The apps registered with scenes, by app id.
    var running: [String: RunningApp] = [:]
    /// Sessions whose scene is being connected now.
    var connecting: Set<String> = []
    /// Each session as `ListSessions` last sent it, kept while the session is unchanged:
    /// encoding, validating and marshalling 1000 sessions anew on every listing was most of its
    /// cost.
    var encodedSessions: [String: EncodedSession] = [:]
    /// Handoff, when continuity is on (``setHandoff(_:)``); a lock of its own, so ferryd's
    /// continuity can be plugged in from outside the actor.
    nonisolated let handoff = Mutex<(any HandoffHooks)?>(nil)
    /// The session that became foreground-active last: its activity is the current one.
    var handoffFront: String?

    /// A session's `a{sv}` as `ListSessions` sends it, marshalled: the wire dictionary and its
    /// path, then the screen and stack index it was listed with (remarshalled only when those
    /// change).
    final class EncodedSession: Sendable {
        let session: SceneSession
        /// The wire dictionary and the path.
        let base: MarshalledDictionary
        let screen: Int
        let stackIndex: Int
        /// `base` with `screen` and `stackIndex`.
        let listed: MarshalledDictionary

        init(session: SceneSession, base: MarshalledDictionary, screen: Int, stackIndex: Int) throws {
            self.session = session
            self.base = base
            self.screen = screen
            self.stackIndex = stackIndex
            listed = try base.adding(["screen": .uint32(UInt32(clamping: screen)),
                                      "stackIndex": .uint32(UInt32(clamping: stackIndex))])
        }

        /// This session listed at `screen` and `stackIndex`.
        func placed(screen: Int, stackIndex: Int) throws -> EncodedSession {
            guard screen != self.screen || stackIndex != self.stackIndex else { return self }
            return try EncodedSession(session: session, base: base, screen: screen, stackIndex: stackIndex)
        }
    }

    /// An app registered with scenes=true, and the queue its calls go through.
    struct RunningApp: Sendable {
        var uniqueName: String
        var manifest: AppManifest
        var callbacks: AppCallbacks
    }

    /// Makes the service; nothing is loaded or exported until ``start()``.
    /// - Parameters:
    ///   - connection: the broker's connection (apps accept Client1 calls only from it).
    ///   - registry: the registered apps.
    ///   - store: the open scene store.
    ///   - desktop: the screens and edge zone (its windows are loaded from the store).
    ///   - foregroundApps: where the apps with a foreground scene are mirrored (the paste policy
    ///     reads it).
    ///   - ownUID: the broker's uid; callers of another uid are refused.
    ///   - callers: the broker's cache of callers' credentials (``PasteboardService/callers``).
    ///   - timeouts: how long apps have to answer the broker's calls.
    ///   - direct: the apps' direct connections (a drag's proposals go over them).
    ///   - logger: where events, refusals and failures are logged.
    package init(connection: Connection, registry: AppRegistry, store: SceneStore, desktop: Desktop,
                foregroundApps: ForegroundApps = ForegroundApps(), ownUID: UInt32, callers: CallerCache,
                timeouts: Timeouts = Timeouts(),
                direct: DirectListener? = nil, logger: Logger) {
        self.connection = connection
        self.direct = direct
        self.registry = registry
        self.store = store
        self.desktop = desktop
        self.screens = desktop.screens
        self.edgeZone = desktop.edgeZone
        self.foregroundApps = foregroundApps
        self.ownUID = ownUID
        self.callers = callers
        self.timeouts = timeouts
        self.logger = logger
    }

    /// Loads the known apps and the sessions (all unattached) from the store and exports
    /// `org.ferry.Scenes1` and every session's object.
    /// - Throws: `FerryModelError` `.storageFailed`; `DBusError` when exporting fails.
    package func start() throws {
        for (appID, bytes) in try store.knownApps() {
            do {
                knownApps[appID] = try AppRegistry.parseManifest(bytes, appID: appID)
            } catch {
                logger.warning("ignoring the stored manifest of \(appID): \(error)")
            }
        }
        var corrupt: [SceneStore.CorruptSession] = []
        for stored in try store.sessions(corrupt: &corrupt) {
            var session = stored.session
            session.activationState = .unattached
            let frame = session.frame ?? Rect(origin: Point(x: Desktop.cascadeStart, y: Desktop.cascadeStart),
                                              size: Desktop.newSceneSize)
            desktop.insert(Desktop.Window(id: session.persistentIdentifier, appID: session.bundleIdentifier,
                                          frame: frame, screen: stored.screen, stackOrder: stored.stackOrder,
                                          isConnected: false))
            session.frame = desktop.windows[session.persistentIdentifier]?.frame
            sessions[session.persistentIdentifier] = session
            if let options = stored.pendingOptions { pending[session.persistentIdentifier] = options }
        }
        for damaged in corrupt { logger.warning("\(damaged)") }
        try connection.export(interface, at: Self.path)
        for id in sessions.keys { try exportSession(id) }
        if !sessions.isEmpty { logger.info("restored \(sessions.count) scene session(s) of \(Set(sessions.values.map(\.bundleIdentifier)).count) app(s)") }
    }

    // MARK: - Callers

    /// The caller's unique name and credentials, refused when of another uid.
    /// - Throws: `FerryModelError` `.permissionDenied`; `DBusError` when the caller is gone.
    nonisolated func resolveCaller(_ call: MethodCall) async throws -> Caller {
        try await callers.resolve(call, on: connection)
    }

    // MARK: - Summaries

    /// How many connected scenes `appID` has and its highest scene state (unattached without
    /// connected scenes), for `ListApps`.
    package func summary(of appID: String) -> (scenes: Int, state: SceneActivationState) {
        var count = 0
        var state = SceneActivationState.unattached
        for session in sessions.values where session.bundleIdentifier == appID {
            guard desktop.windows[session.persistentIdentifier]?.isConnected == true else { continue }
            count += 1
            if session.activationState.level > state.level { state = session.activationState }
        }
        return (count, state)
    }

    /// Every session, for tests and tools: apps sorted by id, each app's sessions front to back.
    package var allSessions: [SceneSession] {
        orderedSessionIDs(app: nil).compactMap { sessions[$0] }
    }

    /// Session ids, apps sorted by app id, each app's front to back (by stacking order).
    func orderedSessionIDs(app: String?) -> [String] {
        // Grouped by app first, so only the app ids and each app's few sessions are sorted (a
        // sort of 1,000 keys compared app ids some 10,000 times).
        struct Key { var order: Int64; var id: String }
        var byApp: [String: [Key]] = [:]
        let windows = desktop.windows
        // Fields read in place: copying each session out of the dictionary retains all its own.
        for index in sessions.indices {
            let appID = sessions.values[index].bundleIdentifier
            guard app == nil || appID == app else { continue }
            let id = sessions.keys[index]
            byApp[appID, default: []].append(Key(order: windows[id]?.stackOrder ?? 0, id: id))
        }
        var ids: [String] = []
        ids.reserveCapacity(sessions.count)
        for (_, keys) in byApp.sorted(by: { $0.key < $1.key }) {
            ids.append(contentsOf: keys.sorted { a, b in a.order != b.order ? a.order > b.order : a.id < b.id }.lazy.map(\.id))
        }
        return ids
    }
}

extension SceneService {
    /// The apps that have a connected scene in the foreground (active or inactive), mirrored out
    /// of the actor so the paste policy can ask without waiting for it.
    package final class ForegroundApps: Sendable {
        private let apps = Mutex<Set<String>>([])

        /// Makes an empty set.
        package init() {}

        /// Whether `appID` has a foreground scene now.
        package func contains(_ appID: String) -> Bool { apps.withLock { $0.contains(appID) } }

        /// Replaces the set.
        func set(_ newValue: Set<String>) { apps.withLock { $0 = newValue } }
    }
}
