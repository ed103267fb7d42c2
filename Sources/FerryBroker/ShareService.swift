import BrokerCore
import DBus
import FerryModel
import FerrySystem
import Logging
import Synchronization

/// The share sheet as a desktop service: `org.ferry.Sharing1` at `/org/ferry/Sharing`
/// (services/interfaces/org.ferry.Sharing1.xml is the spec).
///
/// Apps register their activities (``RegisterActivities``); a sharer begins a share, whose items
/// travel on a share pasteboard (``PasteboardService``, `org.ferry.share.<n>`) written by the
/// shared scene's app or by the sharer; the service lists the activities that can perform with
/// the items (built-ins and apps', each app asked `Client1.CanPerformActivities`) and performs
/// one: a built-in inside ferryd, an app's through `Client1.PerformActivity`, during which that
/// app alone may read the items. Apps are called through their ``AppCallbacks`` queue with the
/// XML's timeouts; while the actor awaits an app it serves other shares.
package actor ShareService {
    /// The `org.ferry.Sharing1` object's path.
    package static let path: ObjectPath = "/org/ferry/Sharing"
    /// The interface's name.
    package static let interfaceName: InterfaceName = "org.ferry.Sharing1"
    /// The interface's version (its `Version` property).
    package static let version: UInt32 = 1
    /// How long a share may stay unperformed before it ends (dismissed).
    package static let defaultIdleTimeout: Duration = .seconds(120)
    /// How long the source app has for `ProvideActivityItems`.
    static let provideTimeout: Duration = .seconds(5)
    /// How long an activity's app has for `CanPerformActivities` (no answer: none listed).
    static let canPerformTimeout: Duration = .milliseconds(250)
    /// How long an activity's app has for `PerformActivity` by default.
    package static let defaultPerformTimeout: Duration = .seconds(30)
    /// How long the source app has for `ShareCompleted` (nobody waits for it).
    static let noticeTimeout: Duration = .seconds(10)
    /// The most activities one app registers.
    static let maximumActivities = 64

    /// The connection the shares are served on.
    package nonisolated let connection: Connection
    /// The scenes: shared scenes and their apps' call queues.
    package nonisolated let scenes: SceneService
    /// The share pasteboards.
    package nonisolated let pasteboards: PasteboardService
    /// The registered apps (activities go with their registration).
    package nonisolated let registry: AppRegistry
    /// How long a share may stay unperformed.
    package nonisolated let idleTimeout: Duration
    /// How long an activity's app has for `PerformActivity` (it is told, and cancels after it).
    package nonisolated let performTimeout: Duration
    /// Where the service says what happened (info, debug detail) and what it could not do (warnings, errors).
    package nonisolated let logger: Logger
    /// Callers' credentials: the broker's one cache (``PasteboardService/callers``).
    nonisolated let callers: CallerCache
    /// Wakes the idle watch when a share begins.
    nonisolated let idleWake = Wake()

    /// The running shares, by number.
    var shares: [Int: Share] = [:]
    /// The next share's number.
    var nextNumber = 1
    /// Each app's registered activities, by the unique name of its registration.
    var registrations: [String: ActivityRegistration] = [:]

    /// Makes the service; nothing is exported until ``start()``.
    /// - Parameters:
    ///   - connection: the broker's connection.
    ///   - scenes: the scene service (shared scenes, the apps' call queues).
    ///   - pasteboards: the pasteboard service (the share pasteboards).
    ///   - registry: the registered apps.
    ///   - idleTimeout: how long a share may stay unperformed before it ends.
    ///   - performTimeout: how long an activity's app has for `PerformActivity`.
    ///   - logger: where events, refusals and failures are logged.
    package init(connection: Connection, scenes: SceneService, pasteboards: PasteboardService, registry: AppRegistry,
                idleTimeout: Duration = ShareService.defaultIdleTimeout,
                performTimeout: Duration = ShareService.defaultPerformTimeout,
                logger: Logger) {
        self.connection = connection
        self.scenes = scenes
        self.pasteboards = pasteboards
        self.registry = registry
        self.callers = pasteboards.callers
        self.idleTimeout = idleTimeout
        self.performTimeout = performTimeout
        self.logger = logger
    }

    /// Exports `org.ferry.Sharing1` at ``path``.
    /// - Throws: `DBusError` when exporting fails.
    package func start() throws {
        try connection.export(interface, at: Self.path)
    }

    // MARK: - Callers

    /// The caller's unique name and credentials (cached), refused when of another uid.
    /// - Throws: `FerryModelError` `.permissionDenied`; `DBusError` when the caller is gone.
    nonisolated func resolveCaller(_ call: MethodCall) async throws -> Caller {
        try await callers.resolve(call, on: connection)
    }

    // MARK: - Shares

    /// The running share `id` for a call of its sharer.
    /// - Throws: `FerryModelError` `.notFound` (unknown or ended), `.permissionDenied` (not the sharer).
    func share(_ id: String, sender: String) throws -> Share {
        guard let number = Int(id), number > 0, String(number) == id, let share = shares[number] else {
            throw FerryModelError(.notFound, "there is no share \"\(id.printableLine(limit: 40))\" (ended, or never begun)",
                                  keyPath: "share")
        }
        guard share.sharer == sender else {
            throw FerryModelError(.permissionDenied, "only the connection that began share \(number) may list, perform or end it")
        }
        return share
    }

    // MARK: - Connections going away

    /// A connection left the bus: its activities go; shares it began end (dismissed) unless one
    /// is being performed (it ends after, performed or not); shares whose scene was its app's end too.
    package func connectionClosed(_ uniqueName: String) async {
        callers.forget(uniqueName)
        if let gone = registrations.removeValue(forKey: uniqueName) {
            gone.ownCallbacks.close()
            logger.debug("\(gone.appID)'s \(gone.activities.count) activit\(gone.activities.count == 1 ? "y goes" : "ies go") with its connection")
        }
        for number in shares.keys.sorted() {
            // Read afresh: ending an earlier share awaited.
            guard let share = shares[number] else { continue }
            let ending: (completion: ShareCompletion, reason: String)
            if share.sharer == uniqueName {
                ending = (.dismissed("the sharer went away"), "the sharer went away")
            } else if share.source?.uniqueName == uniqueName {
                ending = (.dismissed("the shared scene's app went away"), "\(share.source?.appID ?? "its app") went away")
            } else {
                continue
            }
            if share.performing {
                shares[number]?.endAfterPerform = shares[number]?.endAfterPerform ?? ending
            } else {
                await end(number, ending.completion, reason: ending.reason)
            }
        }
    }

    // MARK: - Idle shares

    /// Ends shares unperformed for ``idleTimeout`` (dismissed); returns when the task is cancelled.
    package func runIdleTimeouts() async {
        while !Task.isCancelled {
            let now = ContinuousClock.now
            var next = now + .seconds(3600)
            for number in shares.keys.sorted() {
                // Read afresh: ending an earlier share awaited.
                guard let share = shares[number], !share.performing else { continue }
                let deadline = share.began + idleTimeout
                if deadline <= now {
                    let seconds = DragService.seconds(idleTimeout)
                    await end(number, .dismissed("not performed within \(seconds) s"),
                              reason: "not performed within \(seconds) s")
                } else {
                    next = min(next, deadline)
                }
            }
            await idleWake.wait(until: next)
        }
    }
}
