import FerryModel
import FerryTerminal

/// `ferry paste --into APP[/SESSION]`: a paste action in an app's scene (the Paste menu item),
/// not a paste to standard output. The scene's paste configuration decides; when it accepts,
/// the app's `paste(itemProviders:)` reads the pasteboard.
struct PasteIntoScene {
    /// `APP[/SESSION]` as given.
    var target: SceneTarget
    var pasteboard = PasteboardName.general
    var bus: String?

    /// The line printed for an accepted paste: `accepted: TYPES — MESSAGE`, one line whatever
    /// the app answered (`String.printableLine(limit:)`).
    static func acceptedLine(_ outcome: SceneCommand.PasteOutcome) -> String {
        let types = outcome.types.isEmpty ? "nothing read" : outcome.types.joined(separator: ", ")
        return ("accepted: \(types)" + (outcome.message.isEmpty ? "" : " — \(outcome.message)")).printableLine() + "\n"
    }

    /// The failure for a declined paste: `declined: REASON` (status 1).
    static func declined(_ outcome: SceneCommand.PasteOutcome) -> CLIFailure {
        var reason = outcome.reason.isEmpty ? "the scene does not accept what the pasteboard holds" : outcome.reason
        if !outcome.configuration.isEmpty, !reason.contains(outcome.configuration[0]) {
            reason += " (it accepts \(outcome.configuration.joined(separator: ", ")))"
        }
        return CLIFailure(.failure, "declined: \(reason)".printableLine())
    }

    /// Pastes into the scene; errors are thrown for the root command to report.
    func run() async throws {
        try PasteboardName.validate(pasteboard)
        let broker = try await SceneCommand.Broker.connect(address: bus)
        let app = try await broker.appID(target.app)
        var persistentID: String?
        if let session = target.session {
            let target = try SceneCommand.resolve(session, among: try await broker.sessions(app: app))
            persistentID = target.persistentIdentifier
        }
        let outcome = try await broker.paste(persistentID: persistentID, app: app, pasteboard: pasteboard)
        guard outcome.accepted else { throw Self.declined(outcome) }
        try writeOut(Self.acceptedLine(outcome))
    }
}
