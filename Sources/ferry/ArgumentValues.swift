import ArgumentParser
import FerryModel

// The values `ferry`'s options take that are more than a string or a number, each parsed once by
// ArgumentParser (`ExpressibleByArgument`): bad input is a usage error (status 64) in
// ArgumentParser's words, `The value 'V' is invalid for '--at <x,y>'`, and for a choice of names
// the names it takes (`Please provide one of 'left' and 'right'.`), which the help lists too.

/// `X,Y` in desktop coordinates (`ferry drag --at`, `--via`): two finite numbers separated by a
/// comma, spaces around them allowed, each within ±``DragCommand/coordinateLimit`` (the broker's
/// range for a drag's location). A negative X is written `--at=-12,40`.
extension Point: ExpressibleByArgument {
    /// The point `argument` names, nil for anything else.
    public init?(argument: String) {
        let parts = argument.split(separator: ",", omittingEmptySubsequences: false).map { part in
            String(part.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
        }
        guard parts.count == 2, let x = Double(parts[0]), let y = Double(parts[1]),
              x.isFinite, y.isFinite, abs(x) <= DragCommand.coordinateLimit, abs(y) <= DragCommand.coordinateLimit
        else { return nil }
        self.init(x: x, y: y)
    }
}

/// A screen edge or half (`ferry drag --edge`, `ferry scene open --placement`): `left` or `right`.
extension ScenePlacement: ExpressibleByArgument {}

/// How a closed scene's window goes (`ferry scene close --animation`): the names of
/// `SceneDismissalAnimation` (whose raw values are the wire's numbers, not names to type).
enum DismissalAnimationArgument: String, CaseIterable, ExpressibleByArgument {
    /// The usual close.
    case standard
    /// The content was saved or sent.
    case commit
    /// The content was discarded.
    case decline

    /// The animation sent to the broker.
    var animation: SceneDismissalAnimation {
        switch self {
        case .standard: .standard
        case .commit: .commit
        case .decline: .decline
        }
    }
}

/// `APP[/SESSION]` (`ferry drag --from`/`--to`, `ferry share --from`, `ferry paste --into`): an
/// app, by id or display name, and optionally one of its scene sessions, by persistent
/// identifier or a unique prefix; without a session, the app's front-most connected scene.
struct SceneTarget: ExpressibleByArgument, Equatable {
    /// The app as given (an id or a display name) until ``SceneCommand/Broker/resolve(_:)`` makes
    /// it the app's id.
    var app: String
    /// The session as given (an identifier or a prefix); nil for the front-most scene.
    var session: String?

    /// A target by its parts.
    init(app: String, session: String? = nil) {
        self.app = app
        self.session = session
    }

    /// The target `argument` names: a non-empty app, then optionally `/` and a non-empty session.
    init?(argument: String) {
        let parts = argument.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let first = parts.first, !first.isEmpty, parts.count == 1 || !parts[1].isEmpty else { return nil }
        self.init(app: String(first), session: parts.count == 2 ? String(parts[1]) : nil)
    }
}

/// The role of a scene `ferry scene open --role` asks for.
enum SceneRoleArgument: String, CaseIterable, ExpressibleByArgument {
    /// An interactive window.
    case application
    /// A non-interactive window on the external display.
    case externalDisplay = "external-display"

    /// The session role sent to the broker.
    var role: SceneRole {
        switch self {
        case .application: .windowApplication
        case .externalDisplay: .windowExternalDisplayNonInteractive
        }
    }
}
