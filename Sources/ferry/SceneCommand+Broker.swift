import Ferry
import FerryModel
import FerryTerminal

extension SceneCommand {
    /// The broker's app and scene calls the CLI makes, through the client library's
    /// ``FerryClient`` (`registeredApps()`, `sceneSessions(app:)`, the scene requests): the CLI is
    /// not an app, so it needs none of the library's `Application` machinery. Adds what only the
    /// CLI needs: apps named by display name, rows in the CLI's shape.
    struct Broker {
        let client: FerryClient

        /// Connects to the bus `--bus` names (or the session bus).
        static func connect(_ bus: BusOptions) async throws -> Broker {
            try await connect(address: bus.bus)
        }

        /// Connects to the bus at `address`, or the session bus.
        static func connect(address: String?) async throws -> Broker {
            Broker(client: try await BusOptions.connect(address))
        }

        /// The registered apps, sorted by app id.
        ///
        /// D-Bus: `org.ferry.Broker1.ListApps`.
        func apps() async throws -> [App] {
            try await client.registeredApps().map(App.init)
        }

        /// The app id `argument` means: an app id the broker knows, as it is; else the display
        /// name (`Notes`, `CFBundleName`) of exactly one registered app — matched exactly, or
        /// ignoring ASCII case when no name matches exactly; else `argument` unchanged (the call
        /// it goes to says what is wrong with it).
        /// - Throws: `CLIFailure` `.usage` when the name is several apps', listing their ids.
        func appID(_ argument: String) async throws -> String {
            let apps = try await apps()
            if apps.contains(where: { $0.appID == argument }) { return argument }
            var named = apps.filter { $0.name == argument }
            if named.isEmpty { named = apps.filter { !$0.name.isEmpty && Self.asciiLowercased($0.name) == Self.asciiLowercased(argument) } }
            guard named.count <= 1 else {
                throw CLIFailure(.usage, "'\(argument.printableLine())' is the name of \(named.count) apps: "
                                 + named.map(\.appID).joined(separator: ", ") + "; give one's app id")
            }
            return named.first?.appID ?? argument
        }

        /// `target` (`--from`, `--to`, `--into`) with its app taken by id or display name
        /// (``appID(_:)``).
        func resolve(_ target: SceneTarget) async throws -> SceneTarget {
            var target = target
            target.app = try await appID(target.app)
            return target
        }

        private static func asciiLowercased(_ text: String) -> String {
            String(String.UnicodeScalarView(text.unicodeScalars.map { ("A"..."Z").contains($0) ? Unicode.Scalar($0.value + 32)! : $0 }))
        }

        /// Every session (or `app`'s), apps sorted by id, each app's sessions front to back.
        ///
        /// D-Bus: `org.ferry.Scenes1.ListSessions`.
        func sessions(app: String? = nil) async throws -> [Session] {
            try await client.sceneSessions(app: app).map(Session.init)
        }

        /// Asks for a scene: an existing session brought forward (`persistentID`), or a new one
        /// for `app`. Returns the session's persistent identifier.
        ///
        /// D-Bus: `org.ferry.Scenes1.RequestActivation`.
        func requestActivation(app: String, persistentID: String?, userActivity: UserActivity? = nil,
                               options: SceneActivationRequestOptions = .init()) async throws -> String {
            try await client.requestSceneSessionActivation(app: app, session: persistentID, userActivity: userActivity, options: options)
        }

        /// D-Bus: `org.ferry.Scenes1.RequestRefresh`.
        func requestRefresh(_ persistentID: String) async throws {
            try await client.requestSceneSessionRefresh(persistentID)
        }

        /// D-Bus: `org.ferry.Scenes1.RequestDestruction`.
        func requestDestruction(_ persistentID: String, animation: SceneDismissalAnimation) async throws {
            try await client.requestSceneSessionDestruction(persistentID, options: SceneDestructionRequestOptions(animation: animation))
        }

        /// A paste action in a scene: `persistentID`, or `app`'s front-most connected scene.
        ///
        /// D-Bus: `org.ferry.Scenes1.Paste`.
        func paste(persistentID: String?, app: String, pasteboard: String) async throws -> PasteOutcome {
            if let persistentID { return try await client.paste(intoScene: persistentID, from: pasteboard) }
            return try await client.paste(intoFrontSceneOf: app, from: pasteboard)
        }

        /// The desktop's screens (left to right) and edge-zone width.
        ///
        /// D-Bus: `org.freedesktop.DBus.Properties.GetAll` of `org.ferry.Scenes1`.
        func desktop() async throws -> (screens: [Screen], edgeZone: Double) {
            let layout = try await client.desktopLayout()
            return (layout.screens.map(Screen.init), layout.edgeZone)
        }
    }

    /// What `Scenes1.Paste` answered.
    typealias PasteOutcome = ScenePasteResult
}
