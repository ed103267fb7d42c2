import ArgumentParser
import FerryModel

/// `ferry scenes`: every scene session the broker keeps, connected or archived.
struct ScenesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scenes",
        abstract: "List scene sessions: each app's windows, open or archived.",
        discussion: """
            One line per session, apps sorted by id, each app's sessions front to back: the \
            app, the persistent identifier, the configuration the app chose, the activation \
            state (unattached while the app is not running), the title (control characters \
            shown as \\n, \\t, \\u{1B}; at most 60 characters, whole in JSON), and the frame \
            as X,Y WIDTHxHEIGHT. 'ferry scene' commands take a persistent identifier or a unique \
            prefix of one (at least 4 characters).

            JSON keys: scenes (array of objects with app, persistentIdentifier, configuration \
            (string or null), state, title (string or null), frame (x, y, width, height; or \
            null), screen, stackIndex (0 = front of its screen)).
            """)

    @Option(name: .long, help: ArgumentHelp("Only this app's sessions.", valueName: "app"))
    var app: String?

    @Flag(name: .long, help: "Print one JSON object (keys are listed in the discussion).")
    var json = false

    @OptionGroup var bus: BusOptions

    struct Entry: Encodable {
        var app: String
        var persistentIdentifier: String
        var configuration: String?
        var state: String
        var title: String?
        var frame: FrameJSON?
        var screen: Int
        var stackIndex: Int

        init(_ session: SceneCommand.Session) {
            app = session.app
            persistentIdentifier = session.persistentIdentifier
            configuration = session.configuration
            state = session.state.name
            title = session.title
            frame = FrameJSON(session.frame)
            screen = session.screen
            stackIndex = session.stackIndex
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(app, forKey: .app)
            try c.encode(persistentIdentifier, forKey: .persistentIdentifier)
            try c.encode(configuration, forKey: .configuration)
            try c.encode(state, forKey: .state)
            try c.encode(title, forKey: .title)
            try c.encode(frame, forKey: .frame)
            try c.encode(screen, forKey: .screen)
            try c.encode(stackIndex, forKey: .stackIndex)
        }

        enum CodingKeys: String, CodingKey { case app, persistentIdentifier, configuration, state, title, frame, screen, stackIndex }
    }

    struct Report: Encodable {
        var scenes: [Entry]

        /// The report as ``jsonLine(_:)`` writes it, through ``JSONText`` (a listing of 1,000
        /// sessions is 228 KiB of JSON) unless a frame holds a value `JSONEncoder` refuses.
        func jsonLine() throws -> String {
            let finite = scenes.allSatisfy { entry in
                entry.frame.map { [$0.x, $0.y, $0.width, $0.height].allSatisfy(\.isFinite) } ?? true
            }
            guard finite else { return try ferry.jsonLine(self) }
            var json = JSONText(capacity: 256 * scenes.count + 16)
            json.beginObject()
            json.key("scenes")
            json.beginArray()
            for entry in scenes {
                // Keys in sorted order, as JSONEncoder's `.sortedKeys` puts them.
                json.beginObject()
                json.key("app")
                json.string(entry.app)
                json.key("configuration")
                json.string(entry.configuration)
                json.key("frame")
                if let frame = entry.frame {
                    json.beginObject()
                    for (key, value) in [("height", frame.height), ("width", frame.width), ("x", frame.x), ("y", frame.y)] {
                        json.key(key)
                        json.number(value)
                    }
                    json.endObject()
                } else {
                    json.string(nil)
                }
                json.key("persistentIdentifier")
                json.string(entry.persistentIdentifier)
                json.key("screen")
                json.integer(entry.screen)
                json.key("stackIndex")
                json.integer(entry.stackIndex)
                json.key("state")
                json.string(entry.state)
                json.key("title")
                json.string(entry.title)
                json.endObject()
            }
            json.endArray()
            json.endObject()
            return json.line
        }
    }

    func validate() throws {
        if let app, app.isEmpty { throw ValidationError("--app needs an app id.") }
    }

    func run() async throws {
        let broker = try await SceneCommand.Broker.connect(bus)
        var app = self.app
        if let name = app { app = try await broker.appID(name) }
        let sessions = try await broker.sessions(app: app)
        if json { return try writeOut(Report(scenes: sessions.map(Entry.init)).jsonLine()) }
        if sessions.isEmpty { return }
        let rows = [["APP", "SESSION", "CONFIGURATION", "STATE", "TITLE", "FRAME"]]
            + sessions.map {
                [$0.app, $0.persistentIdentifier, $0.configuration ?? "-", $0.state.name, $0.title.map { $0.printableLine(limit: tableTitleLimit) } ?? "-", formatFrame($0.frame)]
            }
        try writeOut(formatTable(rows))
    }
}
