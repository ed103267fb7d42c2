import ArgumentParser
import Ferry
import FerryModel
import FerryTerminal
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `ferry scene open APP`: `requestSceneSessionActivation` with no session — a new scene, or the
/// existing one whose activation conditions prefer the activity's target content.
struct SceneOpenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "open",
        abstract: "Open a scene of an app, optionally for a user activity.",
        discussion: """
            --activity makes a user activity of that type (one the app declares in \
            NSUserActivityTypes); the app chooses the scene's configuration from it. --info \
            adds an entry to the activity's userInfo: a value written as a plain decimal \
            integer (42, -7; not 007 or +1) is an integer, anything else a string. \
            --target-content sets its targetContentIdentifier: a scene whose activation \
            conditions prefer it (else one that can show it) gets the activity instead of a \
            new scene opening. --info and --target-content need --activity.

            --placement puts the new scene in the left or right half of its screen and the \
            scene beneath (--requesting, else the front-most) in the other half; without it \
            new scenes cascade. --url adds a URL to the connection options. --role \
            external-display asks for a scene of the role \
            UIWindowSceneSessionRoleExternalDisplayNonInteractive (the app's manifest must have \
            configurations for it); the default is an application window.

            Prints the session's persistent identifier, then what happened: 'connected' (the \
            app is running and showed the scene), 'continued' (an existing scene got the \
            activity), or 'waiting' (the app is not running; the scene connects when it next \
            registers). An app that supports only one scene and already has it exits with \
            status 1; an app the broker has never seen with status 2; a running app that does \
            not show scenes with status 4; one that does not answer in time with status 5.

            JSON keys: persistentIdentifier, app, new (bool), connected (bool), configuration \
            (string or null), state.
            """)

    @ArgumentParser.Argument(help: ArgumentHelp("The app: its id (CFBundleIdentifier) or its name.", valueName: "app"))
    var app: String

    @Option(name: .long, help: ArgumentHelp("A user activity of this type.", valueName: "type"))
    var activity: String?

    @Option(name: .long, help: ArgumentHelp("An entry of the activity's userInfo (repeatable).", valueName: "key=value"))
    var info: [String] = []

    @Option(name: .customLong("target-content"), help: ArgumentHelp("The activity's targetContentIdentifier.", valueName: "id"))
    var targetContent: String?

    @Option(name: .long, help: ArgumentHelp("Put the new scene in that half of its screen.", valueName: "side"))
    var placement: ScenePlacement?

    @Option(name: .long, help: ArgumentHelp("A URL for the scene to open (repeatable).", valueName: "url"))
    var url: [String] = []

    @Option(name: .long, help: ArgumentHelp("The scene that asks: the new one opens on its screen.", valueName: "session"))
    var requesting: String?

    @Option(name: .long, help: ArgumentHelp("The new scene's role.", valueName: "role"))
    var role: SceneRoleArgument?

    @Flag(name: .long, help: "Print one JSON object (keys are listed in the discussion).")
    var json = false

    @OptionGroup var bus: BusOptions

    func validate() throws {
        guard !app.isEmpty else { throw ValidationError("APP must not be empty.") }
        if activity == nil, !info.isEmpty || targetContent != nil {
            throw ValidationError("--info and --target-content need --activity.")
        }
        if let activity, !UserActivity.isValidActivityType(activity) {
            throw ValidationError("--activity '\(activity)' is not an activity type (1-255 ASCII letters, digits, '.', '-', '_').")
        }
        _ = try Self.userInfo(info)
        for text in url where !Self.isAbsoluteURL(text) {
            throw ValidationError("--url '\(text)' is not an absolute URL.")
        }
        if let requesting, requesting.isEmpty { throw ValidationError("--requesting needs a session.") }
    }

    /// `--info KEY=VALUE` entries as userInfo: plain decimal integers become integers.
    /// - Throws: `ValidationError` for an entry without `=`, an empty key, or a key given twice.
    static func userInfo(_ entries: [String]) throws -> [String: PropertyListValue] {
        var info: [String: PropertyListValue] = [:]
        for entry in entries {
            guard let equals = entry.firstIndex(of: "="), equals != entry.startIndex else {
                throw ValidationError("--info needs KEY=VALUE, not '\(entry)'.")
            }
            let key = String(entry[..<equals]), value = String(entry[entry.index(after: equals)...])
            guard info[key] == nil else { throw ValidationError("--info \(key) is given twice.") }
            if let number = Int64(value), String(number) == value {
                info[key] = .integer(number)
            } else {
                info[key] = .string(value)
            }
        }
        return info
    }

    static func isAbsoluteURL(_ text: String) -> Bool {
        guard let url = URL(string: text), let scheme = url.scheme, !scheme.isEmpty else { return false }
        return true
    }

    /// The user activity `--activity`, `--info` and `--target-content` describe; nil without
    /// `--activity`.
    func userActivity() throws -> UserActivity? {
        guard let activity else { return nil }
        var made = try UserActivity(activityType: activity)
        // Text for the app: bytes of an argument that were not UTF-8 become U+FFFD.
        made.userInfo = try Self.userInfo(info.map(RawArguments.lossy))
        made.targetContentIdentifier = targetContent.map(RawArguments.lossy)
        return made
    }

    /// The request's options for these arguments (`requesting` already resolved).
    func requestOptions(requesting: String?) throws -> SceneActivationRequestOptions {
        let urls = try url.map { text in
            guard let parsed = URL(string: RawArguments.lossy(text)) else { throw ValidationError("--url '\(text)' is not an absolute URL.") }
            return parsed
        }
        return SceneActivationRequestOptions(requestingScene: requesting, placement: placement, urls: urls, role: role?.role)
    }

    struct Report: Encodable {
        var persistentIdentifier: String
        var app: String
        var new: Bool
        var connected: Bool
        var configuration: String?
        var state: String

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(persistentIdentifier, forKey: .persistentIdentifier)
            try c.encode(app, forKey: .app)
            try c.encode(new, forKey: .new)
            try c.encode(connected, forKey: .connected)
            try c.encode(configuration, forKey: .configuration)
            try c.encode(state, forKey: .state)
        }

        enum CodingKeys: String, CodingKey { case persistentIdentifier, app, new, connected, configuration, state }
    }

    func run() async throws {
        let broker = try await SceneCommand.Broker.connect(bus)
        let app = try await broker.appID(self.app)
        let before = try await broker.sessions(app: app)
        var requestingID: String?
        if let requesting {
            requestingID = try SceneCommand.resolve(requesting, among: try await broker.sessions()).persistentIdentifier
        }
        let identifier: String
        do {
            identifier = try await broker.requestActivation(app: app, persistentID: nil, userActivity: try userActivity(),
                                                            options: try requestOptions(requesting: requestingID))
        } catch where SceneCommand.isBrokerError(error, .multipleScenesNotSupported) {
            let existing = before.first.map { ": 'ferry scene activate \($0.persistentIdentifier)' brings it forward" } ?? ""
            throw CLIFailure(.failure, "\(app) supports only one scene and already has it\(existing)")
        } catch where SceneCommand.isBrokerError(error, .unavailable) {
            throw CLIFailure(.unavailable, "\(app) is running but does not show scenes (it registered without them)")
        }
        let session = try await broker.sessions(app: app).first { $0.persistentIdentifier == identifier }
        let isNew = !before.contains { $0.persistentIdentifier == identifier }
        let connected = (session?.state ?? .unattached) != .unattached
        if json {
            return try printJSON(Report(persistentIdentifier: identifier, app: app, new: isNew, connected: connected,
                                        configuration: session?.configuration, state: (session?.state ?? .unattached).name))
        }
        let shown = [session?.configuration, session.map { $0.state.name }].compactMap { $0 }.joined(separator: ", ").printableLine()
        let outcome = if !connected {
            "waiting: \(app) is not running; the scene connects when it next registers"
        } else if isNew {
            "connected (\(shown))"
        } else {
            "continued in an existing scene (\(shown))"
        }
        try writeOut("\(identifier)  \(outcome)\n")
    }
}
