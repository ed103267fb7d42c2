import DBus
import Ferry
import FerryBus
import FerryModel
import FerryTerminal

extension SceneCommand {
    /// The broker's app and scene calls the CLI makes (`org.ferry.Broker1.ListApps`,
    /// `org.ferry.Scenes1.*`), straight on a `FerryClient`'s connection: the CLI is not an app,
    /// so it needs none of the client library's `Application` machinery.
    struct Broker {
        static let name: BusName = "org.ferry.Broker"
        static let brokerPath: ObjectPath = "/org/ferry/Broker"
        static let brokerInterface: InterfaceName = "org.ferry.Broker1"
        static let scenesPath: ObjectPath = "/org/ferry/Scenes"
        static let scenesInterface: InterfaceName = "org.ferry.Scenes1"

        let connection: Connection

        /// Connects to the bus `--bus` names (or the session bus).
        static func connect(_ bus: BusOptions) async throws -> Broker {
            try await connect(address: bus.bus)
        }

        /// Connects to the bus at `address`, or the session bus.
        static func connect(address: String?) async throws -> Broker {
            Broker(connection: try await BusOptions.connect(address).connection)
        }

        /// The registered apps, sorted by app id.
        ///
        /// D-Bus: `org.ferry.Broker1.ListApps`.
        func apps() async throws -> [App] {
            let reply = try await connection.call(destination: Self.name, path: Self.brokerPath, interface: Self.brokerInterface,
                                                  member: "ListApps")
            return try decodingReply { try replyReaders(reply.first, path: "apps").map(App.init) }
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
            var options = VariantDictionary()
            options.set("app", to: app)
            let reply = try await callScenes("ListSessions", [options.dbusValue])
            return try decodingReply { try replyReaders(reply.first, path: "sessions").map(Session.init) }
        }

        /// Asks for a scene: an existing session brought forward (`persistentID`), or a new one
        /// for `app`. Returns the session's persistent identifier.
        ///
        /// D-Bus: `org.ferry.Scenes1.RequestActivation` (the app answers within 15 s, so the
        /// call waits up to 30 s).
        func requestActivation(app: String, persistentID: String, options: VariantDictionary) async throws -> String {
            let reply = try await callScenes("RequestActivation", [.string(app), .string(persistentID), options.dbusValue],
                                             timeout: .seconds(30))
            guard reply.count == 2, case .string(let identifier) = reply[1] else {
                throw CLIFailure(.failure, "Scenes1.RequestActivation answered '\(reply.map(\.signature.rawValue).joined())', not 'os'")
            }
            return identifier
        }

        /// D-Bus: `org.ferry.Scenes1.RequestRefresh`.
        func requestRefresh(_ persistentID: String) async throws {
            _ = try await callScenes("RequestRefresh", [.string(persistentID)], timeout: .seconds(30))
        }

        /// D-Bus: `org.ferry.Scenes1.RequestDestruction`.
        func requestDestruction(_ persistentID: String, animation: SceneDismissalAnimation) async throws {
            _ = try await callScenes("RequestDestruction", [.string(persistentID), DBusValue.variantDictionary(["animation": .string(animation.name)])],
                                     timeout: .seconds(30))
        }

        /// A paste action in a scene: `persistentID`, or `app`'s front-most connected scene.
        ///
        /// D-Bus: `org.ferry.Scenes1.Paste` (the app has 30 s).
        func paste(persistentID: String?, app: String, pasteboard: String) async throws -> PasteOutcome {
            let options = persistentID == nil ? DBusValue.variantDictionary(["app": .string(app)]) : DBusValue.variantDictionary([:])
            let reply = try await callScenes("Paste", [.string(persistentID ?? ""), .string(pasteboard), options],
                                             timeout: .seconds(40))
            return try PasteOutcome(try replyReader(reply.first, path: "result"))
        }

        /// The desktop's screens (left to right) and edge-zone width.
        ///
        /// D-Bus: `org.freedesktop.DBus.Properties.GetAll` of `org.ferry.Scenes1`.
        func desktop() async throws -> (screens: [Screen], edgeZone: Double) {
            let reply = try await connection.call(destination: Self.name, path: Self.scenesPath,
                                                  interface: "org.freedesktop.DBus.Properties", member: "GetAll",
                                                  body: [.string(Self.scenesInterface.rawValue)])
            let properties = try replyReader(reply.first, path: "properties")
            return try decodingReply {
                (try (properties.dictionaries("Screens") ?? []).map(Screen.init), try properties.double("EdgeZone") ?? 0)
            }
        }

        private func callScenes(_ member: MemberName, _ body: [DBusValue], timeout: Duration? = nil) async throws -> [DBusValue] {
            try await connection.call(destination: Self.name, path: Self.scenesPath, interface: Self.scenesInterface,
                                      member: member, body: body, timeout: timeout)
        }
    }

    /// What `Scenes1.Paste` answered.
    struct PasteOutcome: Sendable, Equatable {
        var accepted: Bool
        /// The types the scene accepts (its paste configuration).
        var configuration: [String]
        /// What it read, when it accepted.
        var types: [String]
        /// Why not, when it declined.
        var reason: String
        /// The app's one-line summary.
        var message: String

        init(accepted: Bool = false, configuration: [String] = [], types: [String] = [], reason: String = "", message: String = "") {
            self.accepted = accepted
            self.configuration = configuration
            self.types = types
            self.reason = reason
            self.message = message
        }

        /// Reads the reply.
        /// - Throws: `CLIFailure` `.failure` naming a mistyped key.
        init(_ result: WireReader) throws {
            (accepted, configuration, types, reason, message) = try decodingReply {
                (try result.bool("accepted") ?? false, try result.strings("configuration") ?? [], try result.strings("types") ?? [],
                 try result.string("reason") ?? "", try result.string("message") ?? "")
            }
        }
    }
}

/// The broker's `a{sv}` reply value, read through the model's one `WireReader`; its errors
/// name keys under `path`.
/// - Throws: `CLIFailure` `.failure` for an empty reply or a value that is no dictionary.
func replyReader(_ value: DBusValue?, path: String) throws -> WireReader {
    guard let value else { throw CLIFailure(.failure, "the broker's reply is empty") }
    return try decodingReply { try WireReader(dbus: value, path: path) }
}

/// Readers of the broker's `aa{sv}` reply value, one per element (`path[index]`).
/// - Throws: `CLIFailure` `.failure` for an empty reply or a value that is no such array.
func replyReaders(_ value: DBusValue?, path: String) throws -> [WireReader] {
    guard let value else { throw CLIFailure(.failure, "the broker's reply is empty") }
    return try decodingReply { try WireReader.readers(dbus: value, path: path) }
}

/// Runs `body`, which reads a reply: a malformed reply (`FerryModelError`) becomes one line
/// naming the key, `the broker's reply: sessions[2].frame.x: expected a double (d), found s`.
func decodingReply<T>(_ body: () throws -> T) throws -> T {
    do { return try body() } catch let error as FerryModelError {
        let key = error.keyPath.map { "\($0): " } ?? ""
        throw CLIFailure(.failure, "the broker's reply: \(key)\(error.message)")
    }
}
