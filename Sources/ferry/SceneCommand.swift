import ArgumentParser
import Ferry
import FerryModel

/// `ferry scene`: ask the broker to open, bring forward, refresh or close an app's scene
/// (`UIApplication.requestSceneSession…` from outside the app).
struct SceneCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scene",
        abstract: "Open, activate, refresh or close an app's scene.",
        discussion: """
            SESSION is a persistent identifier as 'ferry scenes' prints it, or a unique prefix \
            of one of at least 4 characters (letters match in either case). A prefix matching \
            several sessions is a usage error (status 64) listing them; one matching none \
            exits with status 2.

            APP (here and in 'ferry scenes --app', 'paste --into', 'drag', 'share --from') is \
            an app's id or its name as 'ferry apps' shows it (Notes), when exactly one \
            registered app has that name (letters in either case when none matches exactly); \
            a name several apps share is a usage error (status 64) listing their ids.
            """,
        subcommands: [SceneOpenCommand.self, SceneActivateCommand.self, SceneRefreshCommand.self, SceneCloseCommand.self])

    /// Whether `error` is the broker's `org.ferry.Error.<code>`.
    static func isBrokerError(_ error: any Error, _ code: FerryError.Code) -> Bool {
        (error as? FerryError)?.code == code
    }
}
