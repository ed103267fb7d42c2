/// The role of a scene session (Apple's `UISceneSession.Role`), spelled as in Info.plist.
public struct SceneRole: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The Info.plist key, e.g. `UIWindowSceneSessionRoleApplication`.
    public let rawValue: String

    /// Wraps a role name; unknown roles are kept as they are.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// An interactive window (Apple's `windowApplication`).
    public static let windowApplication = SceneRole(rawValue: "UIWindowSceneSessionRoleApplication")
    /// A non-interactive window on an external display (Apple's `windowExternalDisplayNonInteractive`).
    public static let windowExternalDisplayNonInteractive =
        SceneRole(rawValue: "UIWindowSceneSessionRoleExternalDisplayNonInteractive")

    /// The raw name.
    public var description: String { rawValue }
}

/// A named scene configuration from an app's manifest (Apple's `UISceneConfiguration`): the app
/// picks one by name when a scene connects, typically by the connecting user activity's type.
public struct SceneConfiguration: Sendable, Hashable {
    /// The configuration's name, unique per app and role (`UISceneConfigurationName`).
    public var name: String
    /// The role it serves.
    public var role: SceneRole
    /// `UISceneDelegateClassName`, if given.
    public var delegateClassName: String?
    /// `UISceneClassName`, if given.
    public var sceneClassName: String?
    /// `UISceneStoryboardFile`, if given.
    public var storyboardName: String?

    /// Makes a configuration.
    public init(name: String, role: SceneRole = .windowApplication, delegateClassName: String? = nil,
                sceneClassName: String? = nil, storyboardName: String? = nil) {
        self.name = name
        self.role = role
        self.delegateClassName = delegateClassName
        self.sceneClassName = sceneClassName
        self.storyboardName = storyboardName
    }
}
