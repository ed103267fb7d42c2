import Ferry
import FerryModel
import FerryTerminal

extension SceneCommand {
    /// One app of `Broker1.ListApps`, as `ferry apps` shows it (its JSON object, too).
    struct App: Sendable, Equatable, Encodable {
        var appID: String
        var name: String
        /// Its highest scene state's name (`foregroundActive` … `unattached`).
        var state: String
        /// Its connected scenes.
        var scenes: Int
        var pid: Int64
        var showsScenes: Bool
        var supportsMultipleScenes: Bool

        /// The row for an app of the broker's list.
        init(_ app: RegisteredApp) {
            appID = app.appID
            name = app.name
            state = app.activationState.name
            scenes = app.connectedScenes
            pid = app.processID
            showsScenes = app.showsScenes
            supportsMultipleScenes = app.supportsMultipleScenes
        }
    }

    /// One session of `Scenes1.ListSessions`: the SceneSession wire keys the CLI shows, plus
    /// `screen` and `stackIndex`.
    struct Session: Sendable, Equatable {
        var persistentIdentifier: String
        var app: String
        var configuration: String?
        var state: SceneActivationState
        var title: String?
        var frame: Rect?
        var screen: Int
        /// 0 = front of its screen.
        var stackIndex: Int

        init(persistentIdentifier: String, app: String, configuration: String? = nil, state: SceneActivationState = .unattached,
             title: String? = nil, frame: Rect? = nil, screen: Int = 0, stackIndex: Int = 0) {
            self.persistentIdentifier = persistentIdentifier
            self.app = app
            self.configuration = configuration
            self.state = state
            self.title = title
            self.frame = frame
            self.screen = screen
            self.stackIndex = stackIndex
        }

        /// The row for a session of the broker's list (an empty configuration name or title shows
        /// as none).
        init(_ scene: DesktopScene) {
            persistentIdentifier = scene.session.persistentIdentifier
            app = scene.session.bundleIdentifier
            configuration = scene.session.configurationName.flatMap { $0.isEmpty ? nil : $0 }
            state = scene.session.activationState
            title = scene.session.title.flatMap { $0.isEmpty ? nil : $0 }
            frame = scene.session.frame
            screen = scene.screen
            stackIndex = scene.stackIndex
        }
    }

    /// One screen of `Scenes1.Screens`.
    struct Screen: Sendable, Equatable {
        var index: Int
        var frame: Rect
        /// The external display (Scenes1 Version 2; false from an older broker).
        var isExternal: Bool

        /// The row for a screen of the broker's desktop model.
        init(_ screen: DesktopScreen) {
            index = screen.index
            frame = screen.frame
            isExternal = screen.isExternal
        }
    }

    /// The shortest prefix `ferry scene` accepts for a session (a full identifier is always fine).
    static let minimumPrefix = 4

    /// The session `argument` names: a persistent identifier, or a unique prefix of one (at least
    /// ``minimumPrefix`` characters; letters match in either case).
    /// - Throws: `CLIFailure` `.usage` for a short or ambiguous prefix (listing the matches),
    ///   `.notFound` when nothing matches.
    static func resolve(_ argument: String, among sessions: [Session]) throws -> Session {
        if let exact = sessions.first(where: { $0.persistentIdentifier == argument }) { return exact }
        guard argument.utf8.count >= minimumPrefix else {
            throw CLIFailure(.usage, "'\(argument)' is too short: give a session's persistent identifier or at least \(minimumPrefix) characters of it")
        }
        let wanted = asciiLowercased(argument)
        let matches = sessions.filter { asciiLowercased($0.persistentIdentifier).hasPrefix(wanted) }
        if matches.count == 1 { return matches[0] }
        if matches.isEmpty { throw CLIFailure(.notFound, "no scene session '\(argument)' (ferry scenes lists them)") }
        let listed = matches.map { "\($0.persistentIdentifier) (\($0.app))" }.joined(separator: ", ")
        throw CLIFailure(.usage, "'\(argument)' matches \(matches.count) sessions: \(listed)")
    }

    private static func asciiLowercased(_ text: String) -> String {
        String(decoding: text.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
    }
}

/// A coordinate as people write it: `48`, `-12`, `10.5`.
func formatNumber(_ value: Double) -> String {
    if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
    return String(value)
}

/// A frame as `X,Y WIDTHxHEIGHT` (`48,48 960x640`).
func formatFrame(_ frame: Rect?) -> String {
    guard let frame else { return "-" }
    return "\(formatNumber(frame.origin.x)),\(formatNumber(frame.origin.y)) \(formatNumber(frame.size.width))x\(formatNumber(frame.size.height))"
}

/// The longest title (or app name) a table shows; `--json` has it whole.
let tableTitleLimit = 60

/// Rows as left-aligned columns two spaces apart, the last column unpadded; each line ends in a
/// newline. Cells are passed through `String.printableLine(limit:)`, so a title holding a newline
/// or a tab cannot break a row.
func formatTable(_ rows: [[String]]) -> String {
    let rows = rows.map { $0.map { $0.printableLine() } }
    guard let columns = rows.map(\.count).max(), columns > 0 else { return "" }
    var widths = [Int](repeating: 0, count: columns)
    for row in rows {
        for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
    }
    var text = ""
    for row in rows {
        var line = ""
        for (index, cell) in row.enumerated() {
            if index == row.count - 1 {
                line += cell
            } else {
                line += cell + String(repeating: " ", count: widths[index] - cell.count + 2)
            }
        }
        while line.hasSuffix(" ") { line.removeLast() }
        text += line + "\n"
    }
    return text
}

/// A frame in JSON: `{"x": …, "y": …, "width": …, "height": …}`.
struct FrameJSON: Encodable, Equatable {
    var x: Double
    var y: Double
    var width: Double
    var height: Double

    init?(_ frame: Rect?) {
        guard let frame else { return nil }
        x = frame.origin.x
        y = frame.origin.y
        width = frame.size.width
        height = frame.size.height
    }
}
