import FerryModel

/// What an app does for its scenes as a whole (Apple's `UIApplicationDelegate`, scene part):
/// chooses a connecting scene's configuration, makes its scene delegate, forgets discarded
/// sessions, and names the activities it performs for shares.
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
    /// The activities this app performs for anyone's share (Apple's application activities,
    /// `UIActivity` subclasses). Asked once when the app registers and again after every
    /// re-registration with a broker that restarted; the library registers them with the broker
    /// and answers its `CanPerformActivities` and `PerformActivity` calls with them.
    ///
    /// D-Bus: `org.ferry.Sharing1.RegisterActivities`.
    func applicationActivities(for application: Application) -> [any ApplicationActivity]
}

extension ApplicationDelegate {
    /// nil: the manifest's default configuration.
    public func application(_ application: Application, configurationForConnecting session: SceneSession,
                            options: SceneConnectionOptions) async -> SceneConfiguration? { nil }
    /// Does nothing.
    public func application(_ application: Application, didDiscardSceneSessions persistentIdentifiers: [String]) async {}
    /// None.
    public func applicationActivities(for application: Application) -> [any ApplicationActivity] { [] }
}
