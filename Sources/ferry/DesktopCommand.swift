import ArgumentParser
import DesktopPicture
import FerryModel

/// `ferry desktop`: the broker's desktop model — screens, edge zones, and every scene on them.
struct DesktopCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "desktop",
        abstract: "Show the desktop: screens, edge zones and scenes.",
        discussion: """
            Without options, one paragraph per screen: its frame and edge zones, then its \
            scenes front to back (app, title, configuration, state, frame, the first 8 \
            characters of the session).

            --svg and --png draw the desktop instead: the screens with their edge zones \
            shaded, every scene with a title bar (app — title), its configuration and its \
            state (foregroundActive strong, background faded, unattached ghosted). The PNG is \
            drawn at half scale. FILE '-' is standard output; a file is replaced only once \
            it is complete. Nothing else is printed unless --json is given too.

            JSON keys: edgeZone, screens (array of objects with index, frame (x, y, width, \
            height) and scenes (front to back: app, persistentIdentifier, configuration, \
            state, title, frame, stackIndex)).
            """)

    @Option(name: .long, help: ArgumentHelp("Draw the desktop as SVG into this file.", valueName: "file"))
    var svg: String?

    @Option(name: .long, help: ArgumentHelp("Draw the desktop as PNG into this file.", valueName: "file"))
    var png: String?

    @Flag(name: .long, help: "Print one JSON object (keys are listed in the discussion).")
    var json = false

    @OptionGroup var bus: BusOptions

    /// What the broker reported, scenes grouped by screen.
    struct Snapshot {
        var screens: [SceneCommand.Screen]
        var edgeZone: Double
        var sessions: [SceneCommand.Session]

        /// The scenes on `screen`, front to back.
        func scenes(on screen: Int) -> [SceneCommand.Session] {
            sessions.filter { $0.screen == screen }.sorted { $0.stackIndex < $1.stackIndex }
        }

        /// The picture: scenes with a frame, back to front (screen by screen), titled by app name.
        func picture(appNames: [String: String]) -> DesktopPicture {
            let drawn = sessions.filter { $0.frame != nil }.sorted {
                ($0.screen, -$0.stackIndex) < ($1.screen, -$1.stackIndex)
            }
            return DesktopPicture(screens: screens.map(\.frame), edgeZone: edgeZone, scenes: drawn.map {
                DesktopPicture.Scene(frame: $0.frame ?? Rect(x: 0, y: 0, width: 0, height: 0), appName: appNames[$0.app] ?? $0.app,
                                     title: $0.title ?? "", configuration: $0.configuration ?? "", state: $0.state)
            })
        }

        /// The text summary.
        func text() -> String {
            var text = ""
            for screen in screens {
                if !text.isEmpty { text += "\n" }
                text += "screen \(screen.index): \(formatFrame(screen.frame)), edge zones \(formatNumber(edgeZone)) px\n"
                let scenes = self.scenes(on: screen.index)
                if scenes.isEmpty {
                    text += "  (no scenes)\n"
                    continue
                }
                let rows = scenes.map {
                    [$0.app, $0.title.map { $0.printableLine(limit: tableTitleLimit) } ?? "-", $0.configuration ?? "-", $0.state.name,
                     formatFrame($0.frame), String($0.persistentIdentifier.prefix(8))]
                }
                text += formatTable(rows).split(separator: "\n").map { "  " + $0 + "\n" }.joined()
            }
            return text
        }
    }

    struct ScreenJSON: Encodable {
        var index: Int
        var frame: FrameJSON?
        var scenes: [SceneJSON]
    }

    struct SceneJSON: Encodable {
        var app: String
        var persistentIdentifier: String
        var configuration: String?
        var state: String
        var title: String?
        var frame: FrameJSON?
        var stackIndex: Int

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(app, forKey: .app)
            try c.encode(persistentIdentifier, forKey: .persistentIdentifier)
            try c.encode(configuration, forKey: .configuration)
            try c.encode(state, forKey: .state)
            try c.encode(title, forKey: .title)
            try c.encode(frame, forKey: .frame)
            try c.encode(stackIndex, forKey: .stackIndex)
        }

        enum CodingKeys: String, CodingKey { case app, persistentIdentifier, configuration, state, title, frame, stackIndex }
    }

    struct Report: Encodable {
        var edgeZone: Double
        var screens: [ScreenJSON]
    }

    func validate() throws {
        for (name, path) in [("--svg", svg), ("--png", png)] where path?.isEmpty == true {
            throw ValidationError("\(name) needs a file name.")
        }
        // Standard output holds one document: two would run together into neither.
        if svg == "-", png == "-" { throw ValidationError("--svg and --png cannot both write to standard output ('-').") }
        if json, svg == "-" || png == "-" { throw ValidationError("--json cannot share standard output with a picture ('-').") }
    }

    /// Writes `bytes` to `path` (`-`: standard output), replacing it only once complete.
    static func write(_ bytes: [UInt8], to path: String) throws {
        if path == "-" { return try OutputFile.standardOutput.write(bytes) }
        let file = try AtomicFile(path: path)
        do {
            try file.output.write(bytes)
            try file.commit()
        } catch {
            file.discard()
            throw error
        }
    }

    func run() async throws {
        try await reportingFailures {
            let broker = try await SceneCommand.Broker.connect(bus)
            let (screens, edgeZone) = try await broker.desktop()
            let snapshot = Snapshot(screens: screens, edgeZone: edgeZone, sessions: try await broker.sessions())
            if svg != nil || png != nil {
                var names: [String: String] = [:]
                for app in try await broker.apps() where !app.name.isEmpty { names[app.appID] = app.name }
                let picture = snapshot.picture(appNames: names)
                if let svg { try Self.write(Array(picture.svg().utf8), to: svg) }
                if let png { try Self.write(try picture.png(), to: png) }
                if !json { return }
            }
            if json {
                let report = Report(edgeZone: edgeZone, screens: screens.map { screen in
                    ScreenJSON(index: screen.index, frame: FrameJSON(screen.frame), scenes: snapshot.scenes(on: screen.index).map {
                        SceneJSON(app: $0.app, persistentIdentifier: $0.persistentIdentifier, configuration: $0.configuration,
                                  state: $0.state.name, title: $0.title, frame: FrameJSON($0.frame), stackIndex: $0.stackIndex)
                    })
                })
                return try printJSON(report)
            }
            try writeOut(snapshot.text())
        }
    }
}
