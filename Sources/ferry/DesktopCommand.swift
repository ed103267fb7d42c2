import ArgumentParser
import DesktopPicture
import Ferry
import FerryModel

/// `ferry desktop`: the broker's desktop model — screens, edge zones, and every scene on them.
struct DesktopCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "desktop",
        abstract: "Show the desktop: screens, edge zones and scenes.",
        discussion: """
            Without options, one paragraph per screen: its frame and edge zones (the \
            external display, where external-display scenes go, is marked and has none), then its \
            scenes front to back (app, title, configuration, state, frame, the first 8 \
            characters of the session), then the last drag since ferryd started, if any.

            --svg and --png draw the desktop instead: the screens with their edge zones \
            shaded, every scene with a title bar (app — title), its configuration and its \
            state (foregroundActive strong, background faded, unattached ghosted), and the \
            last drag's path on top: a mark per step coloured by the proposal there (cancel \
            grey, forbidden red, copy green, move blue; a violet square where a drop would \
            open a scene at an edge), a ring at the drop coloured by the outcome, and a \
            label saying how it ended; while a drag runs, its preview (its first item's \
            title and image, the image scaled into a 64-point box) as a card beside its \
            current point. The PNG is drawn at half scale. FILE '-' is standard \
            output; FILE is written as 'ferry paste -o' writes it (a file replaced only once \
            complete, keeping its mode and owner; links followed; FIFOs and devices written \
            through). Nothing else is printed \
            unless --json is given too.

            JSON keys: edgeZone, screens (array of objects with index, frame (x, y, width, \
            height), external (bool) and scenes (front to back: app, persistentIdentifier, configuration, \
            state, title, frame, stackIndex)), lastDrag (null, or id, sourceApp, \
            sourceSession, app, state, operation, target, newSession, reason, steps: \
            array of objects with x, y, target and operation, previewTitle and \
            previewImageBytes (the running drag's preview)).
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
        /// The last drag since ferryd started (`DragManager1.LastDrag`).
        var lastDrag: DragRecord? = nil

        /// The scenes on `screen`, front to back.
        func scenes(on screen: Int) -> [SceneCommand.Session] {
            sessions.filter { $0.screen == screen }.sorted { $0.stackIndex < $1.stackIndex }
        }

        /// The picture: scenes with a frame, back to front (screen by screen), titled by app name.
        func picture(appNames: [String: String]) -> DesktopPicture {
            let drawn = sessions.filter { $0.frame != nil }.sorted {
                ($0.screen, -$0.stackIndex) < ($1.screen, -$1.stackIndex)
            }
            return DesktopPicture(screens: screens.map(\.frame), externalScreens: Set(screens.filter(\.isExternal).map(\.index)),
                                  edgeZone: edgeZone, scenes: drawn.map {
                DesktopPicture.Scene(frame: $0.frame ?? Rect(x: 0, y: 0, width: 0, height: 0), appName: appNames[$0.app] ?? $0.app,
                                     title: $0.title ?? "", configuration: $0.configuration ?? "", state: $0.state)
            }, drag: lastDrag.map { dragPath($0, appNames: appNames) })
        }

        /// The last drag as the picture draws it: its steps (an `edge:` target is an edge
        /// step), the outcome once it ended, and ``dragSummary(_:appNames:)`` as the label.
        func dragPath(_ record: DragRecord, appNames: [String: String]) -> DesktopPicture.DragPath {
            DesktopPicture.DragPath(steps: record.steps.map {
                DesktopPicture.DragPath.Step(location: $0.location, operation: $0.operation, isEdge: $0.target.hasPrefix("edge:"))
            }, outcome: record.operation, label: dragSummary(record, appNames: appNames),
               preview: record.preview.map { DesktopPicture.DragPath.Preview(title: $0.title, image: $0.image.map { Array($0) }) })
        }

        /// `drag 7: copy to Gallery/5E6F7A8B`, `drag 8: opened Notes/1A2B3C4D at the right edge`,
        /// `drag 9: cancel — REASON`, `drag 10: dragging` (scenes named by app name when known).
        func dragSummary(_ record: DragRecord, appNames: [String: String]) -> String {
            func scene(_ identifier: String, app: String? = nil) -> String {
                let app = app ?? sessions.first { $0.persistentIdentifier == identifier }?.app
                return app.map { "\(appNames[$0] ?? $0)/\(identifier.prefix(8))" } ?? String(identifier.prefix(8))
            }
            var text = "drag \(record.id): "
            guard let operation = record.operation else { return text + (record.state.isEmpty ? "running" : record.state) }
            if let opened = record.newSession {
                let edge = record.steps.last.flatMap { $0.target.hasPrefix("edge:") ? String($0.target.dropFirst(5)) : nil }
                text += "opened \(scene(opened, app: record.app))" + (edge.map { " at the \($0) edge" } ?? "")
            } else if operation.transfersItems {
                text += operation.name + (record.target.map { " to \(scene($0))" } ?? "")
            } else {
                text += operation.name + (record.reason.map { " — \($0)" } ?? "")
            }
            return text.printableLine()
        }

        /// The text summary.
        func text() -> String {
            var text = ""
            for screen in screens {
                if !text.isEmpty { text += "\n" }
                text += screen.isExternal
                    ? "screen \(screen.index) (external display, non-interactive): \(formatFrame(screen.frame)), no edge zones\n"
                    : "screen \(screen.index): \(formatFrame(screen.frame)), edge zones \(formatNumber(edgeZone)) px\n"
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
            if let lastDrag {
                let from = lastDrag.sourceSession.map { "\(lastDrag.sourceApp)/\($0.prefix(8))" } ?? "the icon of \(lastDrag.sourceApp)"
                let steps = "\(lastDrag.steps.count) step\(lastDrag.steps.count == 1 ? "" : "s")"
                var previewText = ""
                if let preview = lastDrag.preview {
                    let parts = [preview.title.map { "\"\($0.printableLine(limit: tableTitleLimit))\"" },
                                 preview.image.map { "a \($0.count)-byte image" }].compactMap { $0 }
                    previewText = ", showing " + parts.joined(separator: " and ")
                }
                text += "\n" + "last \(dragSummary(lastDrag, appNames: [:])) (from \(from), \(steps)\(previewText))".printableLine() + "\n"
            }
            return text
        }
    }

    struct ScreenJSON: Encodable {
        var index: Int
        var frame: FrameJSON?
        var external: Bool
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
        var lastDrag: DragJSON?

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(edgeZone, forKey: .edgeZone)
            try c.encode(screens, forKey: .screens)
            try c.encode(lastDrag, forKey: .lastDrag)
        }

        enum CodingKeys: String, CodingKey { case edgeZone, screens, lastDrag }
    }

    /// `DragManager1.LastDrag` in JSON, absent values as null.
    struct DragJSON: Encodable {
        var record: DragRecord

        struct Step: Encodable {
            var x: Double
            var y: Double
            var target: String
            var operation: String
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(record.id, forKey: .id)
            try c.encode(record.sourceApp, forKey: .sourceApp)
            try c.encode(record.sourceSession, forKey: .sourceSession)
            try c.encode(record.app, forKey: .app)
            try c.encode(record.state, forKey: .state)
            try c.encode(record.operation?.name, forKey: .operation)
            try c.encode(record.target, forKey: .target)
            try c.encode(record.newSession, forKey: .newSession)
            try c.encode(record.reason, forKey: .reason)
            try c.encode(record.steps.map { Step(x: $0.location.x, y: $0.location.y, target: $0.target, operation: $0.operation.name) },
                         forKey: .steps)
            try c.encode(record.preview?.title, forKey: .previewTitle)
            try c.encode(record.preview?.image?.count, forKey: .previewImageBytes)
        }

        enum CodingKeys: String, CodingKey {
            case id, sourceApp, sourceSession, app, state, operation, target, newSession, reason, steps
            case previewTitle, previewImageBytes
        }
    }

    func validate() throws {
        for (name, path) in [("--svg", svg), ("--png", png)] where path?.isEmpty == true {
            throw ValidationError("\(name) needs a file name.")
        }
        // Standard output holds one document: two would run together into neither.
        if svg == "-", png == "-" { throw ValidationError("--svg and --png cannot both write to standard output ('-').") }
        if json, svg == "-" || png == "-" { throw ValidationError("--json cannot share standard output with a picture ('-').") }
    }

    /// Writes `bytes` to `path` (`-`: standard output; see `OutputPath`), replacing a file only once complete.
    static func write(_ bytes: [UInt8], to path: String) throws {
        let file = try OutputPath(path: PathArgument(path))
        do {
            try file.output.write(bytes)
            try file.commit()
        } catch {
            file.discard()
            throw error
        }
    }

    func run() async throws {
        let client = try await bus.connect()
        let broker = SceneCommand.Broker(client: client)
        let (screens, edgeZone) = try await broker.desktop()
        // A broker without the drag service (an older ferryd) simply has no last drag.
        let snapshot = Snapshot(screens: screens, edgeZone: edgeZone, sessions: try await broker.sessions(),
                                lastDrag: (try? await client.lastDrag()) ?? nil)
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
                ScreenJSON(index: screen.index, frame: FrameJSON(screen.frame), external: screen.isExternal, scenes: snapshot.scenes(on: screen.index).map {
                    SceneJSON(app: $0.app, persistentIdentifier: $0.persistentIdentifier, configuration: $0.configuration,
                              state: $0.state.name, title: $0.title, frame: FrameJSON($0.frame), stackIndex: $0.stackIndex)
                })
            }, lastDrag: snapshot.lastDrag.map(DragJSON.init))
            return try printJSON(report)
        }
        try writeOut(snapshot.text())
    }
}
