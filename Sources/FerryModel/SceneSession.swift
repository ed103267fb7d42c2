#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A scene session as a value: what is remembered about one window of an app, connected or not
/// (Apple's `UISceneSession`). Disconnecting a scene keeps its session; destroying the session
/// forgets it.
public struct SceneSession: Sendable, Hashable {
    /// Stable across app and daemon restarts; 1–255 bytes.
    public var persistentIdentifier: String
    /// The app the session belongs to (`CFBundleIdentifier`).
    public var bundleIdentifier: String
    /// The session's role.
    public var role: SceneRole
    /// The name of the configuration the app chose, once it has chosen.
    public var configurationName: String?
    /// Where the scene is in its life cycle; `unattached` while no process shows it.
    public var activationState: SceneActivationState
    /// The window title, if any.
    public var title: String?
    /// The window's frame in screen coordinates, when known.
    public var frame: Rect?
    /// The activity to restore the scene's state from at its next connection.
    public var stateRestorationActivity: UserActivity?
    /// App-defined values kept with the session.
    public var userInfo: [String: PropertyListValue]
    /// Which target content this scene can and prefers to show.
    public var activationConditions: SceneActivationConditions

    /// Makes a session.
    /// - Throws: `FerryModelError` `.invalidArgument` for an empty or over-long persistent identifier.
    public init(persistentIdentifier: String, bundleIdentifier: String, role: SceneRole = .windowApplication,
                configurationName: String? = nil, activationState: SceneActivationState = .unattached,
                title: String? = nil, frame: Rect? = nil, stateRestorationActivity: UserActivity? = nil,
                userInfo: [String: PropertyListValue] = [:],
                activationConditions: SceneActivationConditions = SceneActivationConditions()) throws {
        try SceneSession.validatePersistentIdentifier(persistentIdentifier)
        self.persistentIdentifier = persistentIdentifier
        self.bundleIdentifier = bundleIdentifier
        self.role = role
        self.configurationName = configurationName
        self.activationState = activationState
        self.title = title
        self.frame = frame
        self.stateRestorationActivity = stateRestorationActivity
        self.userInfo = userInfo
        self.activationConditions = activationConditions
    }

    /// The `userInfo` key that keeps a scene on this machine: with the value `true`, its
    /// activities are never advertised to the user's other devices (Handoff), whatever the
    /// activities say; the app's own `FerryHandoffLocal` (its manifest) does the same for all its
    /// scenes.
    public static let handoffLocalKey = "FerryHandoffLocal"

    /// Whether the scene is kept on this machine (``handoffLocalKey`` is `true` in `userInfo`).
    public var isHandoffLocal: Bool { userInfo[Self.handoffLocalKey]?.booleanValue == true }

    /// Where the broker serves scene session objects (`org.ferry.SceneSession1`).
    public static let pathPrefix = "/org/ferry/Scenes"

    /// The object path of the session `persistentIdentifier`
    /// (`/org/ferry/Scenes/<ObjectPathElement.escape(id)>`).
    public static func objectPath(_ persistentIdentifier: String) -> String {
        pathPrefix + "/" + ObjectPathElement.escape(persistentIdentifier)
    }

    /// The persistent identifier whose object path is `path`, nil when `path` is not a session's.
    public static func persistentIdentifier(fromObjectPath path: String) -> String? {
        guard path.hasPrefix(pathPrefix + "/"),
              let identifier = ObjectPathElement.unescape(Substring(path.utf8.dropFirst(pathPrefix.utf8.count + 1))),
              (try? validatePersistentIdentifier(identifier)) != nil else { return nil }
        return identifier
    }

    /// A new, random persistent identifier (a UUID string).
    public static func makePersistentIdentifier() -> String { UUID().uuidString }

    static func validatePersistentIdentifier(_ identifier: String, at keyPath: String = "persistentIdentifier") throws {
        let count = identifier.utf8.count
        guard count > 0, count <= 255, !identifier.utf8.contains(0) else {
            throw FerryModelError.invalid("a persistent identifier must be 1-255 bytes without NUL", at: keyPath)
        }
    }
}

/// What a connecting scene is asked to show (Apple's `UIScene.ConnectionOptions`): the app picks
/// the scene's configuration from these, typically by the first activity's type.
public struct SceneConnectionOptions: Sendable, Hashable {
    /// The user activities to continue (a drop's activity, a restoration activity).
    public var userActivities: [UserActivity]
    /// URLs to open (Apple's `urlContexts`), e.g. a dropped file.
    public var urls: [URL]
    /// The bundle identifier of the app that asked, when it may be told.
    public var sourceApplication: String?

    /// Makes connection options.
    public init(userActivities: [UserActivity] = [], urls: [URL] = [], sourceApplication: String? = nil) {
        self.userActivities = userActivities
        self.urls = urls
        self.sourceApplication = sourceApplication
    }

    /// Whether there is nothing to show (an app opened plainly).
    public var isEmpty: Bool { userActivities.isEmpty && urls.isEmpty }
}
