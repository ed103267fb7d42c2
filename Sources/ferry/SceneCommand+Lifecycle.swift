import ArgumentParser
import FerryModel

/// `ferry scene activate SESSION`: `requestSceneSessionActivation` with that session.
struct SceneActivateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "activate",
        abstract: "Bring a scene to the front of its screen.",
        discussion: """
            The scene becomes foregroundActive and the screen's previous active scene \
            foregroundInactive. A scene whose app is not running stays archived until the app \
            registers. Nothing is printed.
            """)

    @Argument(help: ArgumentHelp("The session: a persistent identifier or a unique prefix (4+ characters).", valueName: "session"))
    var session: String

    @OptionGroup var bus: BusOptions

    func run() async throws {
        let broker = try await SceneCommand.Broker.connect(bus)
        let target = try SceneCommand.resolve(session, among: try await broker.sessions())
        _ = try await broker.requestActivation(app: target.app, persistentID: target.persistentIdentifier)
    }
}

/// `ferry scene refresh SESSION`: `requestSceneSessionRefresh`.
struct SceneRefreshCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "refresh",
        abstract: "Ask an app to redraw a scene.",
        discussion: "For a scene whose app is not running nothing happens (it draws afresh when it connects). Nothing is printed.")

    @Argument(help: ArgumentHelp("The session: a persistent identifier or a unique prefix (4+ characters).", valueName: "session"))
    var session: String

    @OptionGroup var bus: BusOptions

    func run() async throws {
        let broker = try await SceneCommand.Broker.connect(bus)
        let target = try SceneCommand.resolve(session, among: try await broker.sessions())
        try await broker.requestRefresh(target.persistentIdentifier)
    }
}

/// `ferry scene close SESSION`: `requestSceneSessionDestruction`.
struct SceneCloseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "close",
        abstract: "Close a scene and forget its session.",
        discussion: """
            A connected scene disconnects and its app discards the session's saved state; for \
            an app that is not running the discard is delivered when it next registers. \
            Nothing is printed.
            """)

    @Argument(help: ArgumentHelp("The session: a persistent identifier or a unique prefix (4+ characters).", valueName: "session"))
    var session: String

    @Option(name: .long, help: ArgumentHelp("How the window goes.", valueName: "animation"))
    var animation = DismissalAnimationArgument.standard

    @OptionGroup var bus: BusOptions

    func run() async throws {
        let broker = try await SceneCommand.Broker.connect(bus)
        let target = try SceneCommand.resolve(session, among: try await broker.sessions())
        try await broker.requestDestruction(target.persistentIdentifier, animation: animation.animation)
    }
}
