import DBus
import FerryBus
import FerryModel
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One connected scene of the app: a window showing a session (Apple's `UIScene` /
/// `UIWindowScene`). It exists from the broker's `ConnectScene` until its `DisconnectScene`; its
/// session outlives it.
public final class Scene: Sendable {
    static let sessionInterface: InterfaceName = "org.ferry.SceneSession1"

    /// The app the scene belongs to (nil once the application is gone).
    public weak let application: Application?
    /// The scene's delegate, made by ``ApplicationDelegate/application(_:sceneDelegateFor:)``.
    public let delegate: any SceneDelegate
    /// The session's persistent identifier.
    public let persistentIdentifier: String
    let client: FerryClient
    let snapshot: Mutex<SceneSession>

    init(application: Application, session: SceneSession, delegate: any SceneDelegate) {
        self.application = application
        self.client = application.client
        self.delegate = delegate
        self.persistentIdentifier = session.persistentIdentifier
        self.snapshot = Mutex(session)
    }

    /// The latest snapshot of the session: configuration, title, frame, state, user info,
    /// activation conditions and restoration activity as this process knows them.
    public var session: SceneSession { snapshot.withLock { $0 } }

    /// The scene's activation state.
    public var activationState: SceneActivationState { snapshot.withLock { $0.activationState } }

    /// The scene's title, if any.
    public var title: String? { snapshot.withLock { $0.title } }

    /// Sets the window title (nil clears it).
    /// - Throws: `FerryError` `.notFound` when the session is gone, `.noBroker`.
    ///
    /// D-Bus: `org.ferry.SceneSession1.Update` with `title`.
    public func setTitle(_ title: String?) async throws(FerryError) {
        snapshot.withLock { $0.title = title }
        try await update(["title": .string(title ?? "")])
    }

    /// Sets the app-defined values kept with the session. The scene's Handoff opt-out
    /// (``setHandoffLocal(_:)``) stays unless `userInfo` sets `FerryHandoffLocal` itself: new
    /// values never widen what leaves the machine by accident.
    /// - Throws: `FerryError` `.invalidArgument` naming the key of a value that cannot travel,
    ///   `.notFound`, `.noBroker`.
    ///
    /// D-Bus: `org.ferry.SceneSession1.Update` with `userInfo`.
    public func setUserInfo(_ userInfo: [String: PropertyListValue]) async throws(FerryError) {
        var userInfo = userInfo
        let key = SceneSession.handoffLocalKey
        if userInfo[key] == nil, let kept = snapshot.withLock({ $0.userInfo[key] }) { userInfo[key] = kept }
        let wire = try Self.wire(userInfo: userInfo)
        snapshot.withLock { $0.userInfo = userInfo }
        try await update(["userInfo": wire])
    }

    /// Whether the scene is kept on this machine: its activities are never offered to the
    /// user's other devices (Handoff).
    public var isHandoffLocal: Bool { snapshot.withLock { $0.isHandoffLocal } }

    /// Keeps the scene on this machine (or lets its activities go again): while `local`, the
    /// broker never advertises its activities to the user's other devices, whatever
    /// `isEligibleForHandoff` says, as `FerryHandoffLocal` in the manifest does for the whole
    /// app. Set it before the scene's first activity (in `scene(_:willConnectTo:options:)`) so
    /// that none is offered before it. Kept in the session's `userInfo` under
    /// ``SceneSession/handoffLocalKey``, so it lasts as long as the session.
    /// - Throws: `FerryError` `.notFound`, `.noBroker`.
    ///
    /// D-Bus: `org.ferry.SceneSession1.Update` with `userInfo`.
    public func setHandoffLocal(_ local: Bool) async throws(FerryError) {
        var userInfo = session.userInfo
        userInfo[SceneSession.handoffLocalKey] = local ? .boolean(true) : nil
        let wire = try Self.wire(userInfo: userInfo)
        snapshot.withLock { $0.userInfo = userInfo }
        try await update(["userInfo": wire])
    }

    /// Sets which target content the scene can and prefers to show.
    /// - Throws: `FerryError` `.notFound`, `.noBroker`.
    ///
    /// D-Bus: `org.ferry.SceneSession1.Update` with `activationConditions`.
    public func setActivationConditions(_ conditions: SceneActivationConditions) async throws(FerryError) {
        let wire = try FerryError.bridgingSync { try conditions.wireDictionary() }
        snapshot.withLock { $0.activationConditions = conditions }
        try await update(["activationConditions": wire.dbusValue])
    }

    /// Moves or resizes the window; the broker moves it to the screen containing its centre.
    /// - Throws: `FerryError` `.invalidArgument` for a frame smaller than 1×1 or not finite,
    ///   `.notFound`, `.noBroker`.
    ///
    /// D-Bus: `org.ferry.SceneSession1.Update` with `frame`.
    public func setFrame(_ frame: Rect) async throws(FerryError) {
        let values = [frame.origin.x, frame.origin.y, frame.size.width, frame.size.height]
        guard values.allSatisfy(\.isFinite), frame.size.width >= 1, frame.size.height >= 1 else {
            throw FerryError(.invalidArgument, "frame: \(frame) is not a finite frame of at least 1×1")
        }
        let wire = try FerryError.bridgingSync { try frame.wireDictionary() }
        try await update(["frame": wire.dbusValue])
        snapshot.withLock { $0.frame = frame }
    }

    /// Asks the delegate for the scene's state restoration activity
    /// (``SceneDelegate/stateRestorationActivity(for:)``) and stores it with the session (none
    /// clears it).
    /// - Throws: `FerryError` `.invalidArgument` / `.tooLarge` for an activity that cannot travel
    ///   (naming its key path), `.notFound`, `.noBroker`.
    ///
    /// D-Bus: `org.ferry.SceneSession1.Update` with `stateRestorationActivity`.
    public func saveState() async throws(FerryError) {
        let activity = await delegate.stateRestorationActivity(for: self)
        let wire = try Self.wire(activity: activity)
        snapshot.withLock { $0.stateRestorationActivity = activity }
        try await update(["stateRestorationActivity": wire])
    }

    /// Sends what this process set on the scene (title, user info, activation conditions) and a
    /// fresh restoration activity again: after a broker restart reconnected the scene.
    func resend() async throws(FerryError) {
        let activity = await delegate.stateRestorationActivity(for: self)
        // Read after the delegate answered: a title set meanwhile is sent, not an older one.
        let current = session
        var changes: [String: DBusValue] = [
            "title": .string(current.title ?? ""),
            "userInfo": try Self.wire(userInfo: current.userInfo),
            "activationConditions": try FerryError.bridgingSync { try current.activationConditions.wireDictionary() }.dbusValue,
        ]
        changes["stateRestorationActivity"] = try Self.wire(activity: activity)
        snapshot.withLock { $0.stateRestorationActivity = activity }
        try await update(changes)
    }

    /// Calls `org.ferry.SceneSession1.Update` on the session's object.
    func update(_ changes: [String: DBusValue]) async throws(FerryError) {
        let path = try FerryError.bridgingSync { try ObjectPath(SceneSession.objectPath(persistentIdentifier)) }
        _ = try await FerryError.bridging {
            try await client.connection.call(destination: FerryClient.brokerName, path: path,
                                             interface: Self.sessionInterface, member: "Update",
                                             body: [changes.dbusValue], timeout: .seconds(30))
        }
    }

    static func wire(userInfo: [String: PropertyListValue]) throws(FerryError) -> DBusValue {
        do {
            return try PropertyListValue.dictionary(userInfo).wireValue().dbusValue
        } catch {
            let failure = FerryError.converting(error)
            throw FerryError(failure.code, "userInfo: \(failure.message)")
        }
    }

    static func wire(activity: UserActivity?) throws(FerryError) -> DBusValue {
        guard let activity else { return [String: DBusValue]().dbusValue }
        do {
            try activity.validate()
            return try activity.wireDictionary().dbusValue
        } catch {
            let failure = FerryError.converting(error)
            throw FerryError(failure.code, "stateRestorationActivity: \(failure.message)")
        }
    }
}
