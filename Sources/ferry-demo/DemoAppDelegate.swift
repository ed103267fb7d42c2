import Ferry
import FerryModel

/// The demo apps' application delegate: chooses configurations by activity type (the seed's
/// `configurationForConnecting`), makes scene delegates, deletes the state files of discarded
/// sessions, and names the app's share activities (``DemoApp/applicationActivities(for:)``).
final class DemoAppDelegate: ApplicationDelegate {
    let app: DemoApp

    init(app: DemoApp) {
        self.app = app
    }

    /// The configuration's name for a connecting scene: from the fresh activity's type, else from
    /// the session's restoration activity, else the one its state file or the session remembers,
    /// else `Default`.
    func configurationName(for session: SceneSession, options: SceneConnectionOptions) -> String {
        if let activity = options.userActivities.first ?? session.stateRestorationActivity {
            return app.kind.configurationName(forActivityType: activity.activityType)
        }
        if let saved = app.states.state(of: session.persistentIdentifier) { return saved.configuration }
        return session.configurationName ?? DemoKind.defaultConfiguration
    }

    func application(_ application: Application, configurationForConnecting session: SceneSession,
                     options: SceneConnectionOptions) async -> SceneConfiguration? {
        let name = configurationName(for: session, options: options)
        return application.manifest.configuration(named: name, role: session.role)
            ?? SceneConfiguration(name: name, role: session.role)
    }

    func application(_ application: Application, sceneDelegateFor session: SceneSession) -> any SceneDelegate {
        DemoSceneDelegate(app: app)
    }

    func applicationActivities(for application: Application) -> [any ApplicationActivity] {
        app.applicationActivities(for: application)
    }

    func application(_ application: Application, didDiscardSceneSessions persistentIdentifiers: [String]) async {
        for id in persistentIdentifiers {
            let deleted = app.states.discard(id)
            app.printer.print(DemoEvent("discard", session: id, deleted ? [("deleted", .flag)] : []))
        }
    }
}
