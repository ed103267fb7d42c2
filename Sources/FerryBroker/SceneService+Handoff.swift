#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import BrokerCore
import DBus
import FerryBus
import FerryModel
import Synchronization

/// What Handoff (issue #22 item 3, the FerryContinuity module in ferryd) plugs into the scenes:
/// it hears when the current activity may have changed, keeps what the user's other devices
/// advertise, and fetches an activity's payload from its source when the user continues it.
package protocol HandoffHooks: Sendable {
    /// The current activity may have changed (called on the scene actor: must not block).
    func currentActivityChanged()
    /// The other devices' advertised activities that have not expired, newest first.
    func remoteActivities() -> [RemoteActivity]
    /// Fetches the activity with its `userInfo` from its source device (whose app saves it
    /// then). Never called on the scene actor's behalf while it waits: the actor is free.
    /// - Throws: `FerryModelError` `.unavailable` (the source is gone, or no longer shows it),
    ///   `.timeout` (no answer in time), naming the device.
    func fetchRemoteActivity(_ activity: RemoteActivity) async throws -> UserActivity
}

/// An activity another device of the user advertises: enough to list and offer it, not its
/// `userInfo` (fetched when the user continues it).
package struct RemoteActivity: Sendable, Hashable {
    /// The source device.
    package var device: String
    /// The advertisement's id on that device (stable while the same activity stays current).
    package var id: String
    /// The source app.
    package var appID: String
    /// The activity type.
    package var activityType: String
    /// Its title, if any.
    package var title: String?
    /// What it shows, matched against scenes' activation conditions.
    package var targetContentIdentifier: String?
    /// When it stops being offered.
    package var expires: Date

    /// Makes one.
    package init(device: String, id: String, appID: String, activityType: String, title: String?,
                targetContentIdentifier: String?, expires: Date) {
        self.device = device
        self.id = id
        self.appID = appID
        self.activityType = activityType
        self.title = title
        self.targetContentIdentifier = targetContentIdentifier
        self.expires = expires
    }

    /// `DEVICE/ID`, as `ferry continue` takes it.
    package var name: String { "\(device)/\(id)" }
}

/// The activity of the scene the user is in: what Handoff advertises.
package struct CurrentActivity: Sendable, Equatable {
    /// The scene's session.
    package var persistentID: String
    /// Its app.
    package var appID: String
    /// The activity (its `userInfo` as last saved; the source asks the app again on continue).
    package var activity: UserActivity
}

extension ActivationRequest {
    /// A request for a new scene (or one chosen by its activation conditions) with `activity`.
    init(userActivity: UserActivity) {
        self.userActivity = userActivity
    }
}

extension SceneService {
    /// How long the source's app has to save its activity when another device continues it.
    static let saveActivityTimeout: Duration = .seconds(3)

    /// Turns Handoff on (or off, nil).
    package nonisolated func setHandoff(_ hooks: (any HandoffHooks)?) {
        handoff.withLock { $0 = hooks }
    }

    /// Tells Handoff that the current activity may have changed.
    func handoffMayHaveChanged() {
        handoff.withLock { $0 }?.currentActivityChanged()
    }

    /// The activity Handoff may advertise now: the one of the foreground-active scene the user
    /// activated last (its app running, its scene connected), when it is eligible for handoff,
    /// not expired, and neither its app (manifest) nor its scene (session `userInfo`) is marked
    /// `FerryHandoffLocal`; nil otherwise.
    package func currentHandoffActivity() -> CurrentActivity? {
        var candidates = sessions.values.filter { session in
            session.activationState == .foregroundActive && session.role == .windowApplication
                && running[session.bundleIdentifier] != nil
                && desktop.windows[session.persistentIdentifier]?.isConnected == true
        }
        candidates.sort { a, b in
            let fa = a.persistentIdentifier == handoffFront, fb = b.persistentIdentifier == handoffFront
            if fa != fb { return fa }
            let sa = desktop.windows[a.persistentIdentifier]?.screen ?? 0, sb = desktop.windows[b.persistentIdentifier]?.screen ?? 0
            return sa != sb ? sa < sb : a.persistentIdentifier < b.persistentIdentifier
        }
        guard let session = candidates.first, let activity = session.stateRestorationActivity,
              activity.isEligibleForHandoff, !activity.isExpired(), !session.isHandoffLocal,
              running[session.bundleIdentifier]?.manifest.handoffLocal == false
        else { return nil }
        return CurrentActivity(persistentID: session.persistentIdentifier, appID: session.bundleIdentifier, activity: activity)
    }

    /// Asks the app of scene `id` for its activity now (`Client1.SaveActivity`, Apple's
    /// `updateUserActivityState` before the activity is sent), stores it as the session's
    /// restoration activity and returns it.
    /// - Throws: `FerryModelError` `.notFound` (no such connected scene, or it has no activity
    ///   now), `.unavailable`, `.timeout` (the app did not answer within 3 s).
    package func saveHandoffActivity(of id: String) async throws -> UserActivity {
        guard let session = sessions[id], let app = running[session.bundleIdentifier],
              desktop.windows[id]?.isConnected == true else {
            throw FerryModelError(.notFound, "the scene \(id) is no longer shown")
        }
        let reply = try await app.callbacks.call("SaveActivity", [.string(id)], timeout: Self.saveActivityTimeout)
        guard let value = reply.first else { throw FerryModelError(.unavailable, "\(app.callbacks.appID) answered SaveActivity with nothing") }
        let entries = try [String: WireValue](dbusValue: value, keyPath: "activity")
        guard !entries.isEmpty else { throw FerryModelError(.notFound, "the scene \(id) shows no activity now") }
        let activity = try UserActivity(dbusValue: value, keyPath: "activity")
        if var current = sessions[id] {
            current.stateRestorationActivity = activity
            sessions[id] = current
            try? persist([id])
            emitChanged(id, ["StateRestorationActivity": try Self.activityValue(activity)])
        }
        return activity
    }

    /// The local apps that can continue `activity`: those declaring its type in
    /// `NSUserActivityTypes`, sorted, the source's own app id first.
    func continuingApps(for activity: RemoteActivity) -> [String] {
        let apps = knownApps.filter { $0.value.declaresActivityType(activity.activityType) }.keys.sorted()
        return apps.contains(activity.appID) ? [activity.appID] + apps.filter { $0 != activity.appID } : apps
    }

    /// `ListRemoteActivities`: the other devices' activities that a local app can continue
    /// (with `all`, every one).
    func listRemoteActivities(all: Bool) -> [DBusValue] {
        let activities = handoff.withLock { $0 }?.remoteActivities() ?? []
        return activities.compactMap { activity in
            let apps = continuingApps(for: activity)
            guard all || !apps.isEmpty else { return nil }
            return Self.remoteActivityValue(activity, apps: apps)
        }
    }

    /// A remote activity as `a{sv}` (org.ferry.Scenes1.ListRemoteActivities).
    static func remoteActivityValue(_ activity: RemoteActivity, apps: [String]) -> DBusValue {
        var entries: [String: WireValue] = [
            "activity": .string(activity.name), "device": .string(activity.device), "app": .string(activity.appID),
            "activityType": .string(activity.activityType), "apps": .strings(apps),
            "expirationDate": .int64(Int64((activity.expires.timeIntervalSince1970 * 1_000_000).rounded())),
        ]
        if let title = activity.title { entries["title"] = .string(title) }
        if let target = activity.targetContentIdentifier { entries["targetContentIdentifier"] = .string(target) }
        return entries.dbusValue
    }

    /// A remote activity arrived (`RemoteActivityAvailable`, when a local app can continue it)
    /// or went away (`RemoteActivityWithdrawn`).
    package func remoteActivityChanged(arrived: RemoteActivity?, withdrawn: String?) {
        if let withdrawn {
            try? connection.emit(path: Self.path, interface: Self.interfaceName, member: "RemoteActivityWithdrawn",
                                 body: [.string(withdrawn)])
        }
        if let arrived {
            let apps = continuingApps(for: arrived)
            guard !apps.isEmpty else { return }
            try? connection.emit(path: Self.path, interface: Self.interfaceName, member: "RemoteActivityAvailable",
                                 body: [Self.remoteActivityValue(arrived, apps: apps)])
        }
    }

    /// `ContinueRemoteActivity`: fetches the activity from its device and opens it in a local app
    /// through ``requestActivation(appID:persistentID:request:caller:)`` (activation conditions
    /// included).
    /// - Returns: the persistent identifier of the scene that got it.
    /// - Throws: `FerryModelError` `.unavailable` (continuity off, the source gone), `.notFound`
    ///   (no such activity, no local app declares its type), `.invalidArgument` (`app` does not
    ///   declare it), `.timeout`, and what RequestActivation throws.
    func continueRemoteActivity(_ name: String, app: String?, caller: Caller) async throws -> String {
        guard let hooks = handoff.withLock({ $0 }) else {
            throw FerryModelError(.unavailable, "continuity is off on this device (ferryd --continuity)")
        }
        guard let remote = hooks.remoteActivities().first(where: { $0.name == name }) else {
            throw FerryModelError(.notFound, "no other device offers the activity \(name) now (ferry activities lists them)",
                                  keyPath: "activity")
        }
        let apps = continuingApps(for: remote)
        if let app, !apps.contains(app) {
            throw FerryModelError(.invalidArgument, "\(app) does not declare \(remote.activityType) in NSUserActivityTypes",
                                  keyPath: "options.app")
        }
        guard let chosen = app ?? apps.first else {
            throw FerryModelError(.notFound, "no app on this device declares \(remote.activityType) in NSUserActivityTypes")
        }
        let activity = try await hooks.fetchRemoteActivity(remote)
        guard activity.activityType == remote.activityType else {
            throw FerryModelError(.unavailable, "\(remote.device) now shows another activity (\(activity.activityType))")
        }
        return try await requestActivation(appID: chosen, persistentID: "", request: ActivationRequest(userActivity: activity),
                                           caller: caller)
    }
}
