import FerryModel

/// What an app does for its scenes as a whole (Apple's `UIApplicationDelegate`, scene part):
/// chooses a connecting scene's configuration, makes its scene delegate, and forgets discarded
/// sessions.
public protocol ApplicationDelegate: AnyObject, Sendable {
    /// The configuration for a connecting scene (Apple's
    /// `application(_:configurationForConnecting:options:)`), typically chosen by the type of
    /// `options.userActivities.first`. nil, or a configuration the manifest does not declare for
    /// the session's role, means the manifest's default (its first configuration for the role).
    func application(_ application: Application, configurationForConnecting session: SceneSession,
                     options: SceneConnectionOptions) async -> SceneConfiguration?
    /// The delegate of a connecting scene (Apple instantiates `UISceneDelegateClassName`; Ferry
    /// asks). `session.configurationName` is the chosen configuration.
    func application(_ application: Application, sceneDelegateFor session: SceneSession) -> any SceneDelegate
    /// These sessions are gone for good (destroyed now, or while the app was not running):
    /// forget their saved state (Apple's `application(_:didDiscardSceneSessions:)`).
    func application(_ application: Application, didDiscardSceneSessions persistentIdentifiers: [String]) async
}

extension ApplicationDelegate {
    /// nil: the manifest's default configuration.
    public func application(_ application: Application, configurationForConnecting session: SceneSession,
                            options: SceneConnectionOptions) async -> SceneConfiguration? { nil }
    /// Does nothing.
    public func application(_ application: Application, didDiscardSceneSessions persistentIdentifiers: [String]) async {}
}
