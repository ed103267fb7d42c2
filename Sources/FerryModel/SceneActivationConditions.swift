/// Which user activities a scene is willing or keen to handle, judged by their
/// `targetContentIdentifier` (Apple's `UISceneActivationConditions`).
///
/// Defaults: a scene can activate for anything and prefers nothing.
public struct SceneActivationConditions: Sendable, Hashable {
    /// Content this scene can show. Default `TRUEPREDICATE`.
    public var canActivateForTargetContentIdentifierPredicate: ActivationPredicate = .truePredicate
    /// Content this scene should be chosen for over others. Default `FALSEPREDICATE`.
    public var prefersToActivateForTargetContentIdentifierPredicate: ActivationPredicate = .falsePredicate

    /// The default conditions: can activate for anything, prefers nothing.
    public init() {}

    /// Conditions from two predicates.
    public init(canActivateFor: ActivationPredicate, prefersToActivateFor: ActivationPredicate) {
        canActivateForTargetContentIdentifierPredicate = canActivateFor
        prefersToActivateForTargetContentIdentifierPredicate = prefersToActivateFor
    }

    /// Conditions parsed from NSPredicate format strings (see ``ActivationPredicate/init(format:)``).
    /// - Throws: `FerryModelError` `.invalidArgument` with key path `canActivateFor` or
    ///   `prefersToActivateFor` for a predicate that does not parse.
    public init(canActivateFor: String = "TRUEPREDICATE", prefersToActivateFor: String = "FALSEPREDICATE") throws {
        do {
            canActivateForTargetContentIdentifierPredicate = try ActivationPredicate(format: canActivateFor)
        } catch let error as FerryModelError { throw error.nested(under: "canActivateFor") }
        do {
            prefersToActivateForTargetContentIdentifierPredicate = try ActivationPredicate(format: prefersToActivateFor)
        } catch let error as FerryModelError { throw error.nested(under: "prefersToActivateFor") }
    }

    /// How well a scene fits some target content, best first when sorted descending.
    public enum Match: Int, Sendable, Hashable, Comparable {
        /// The scene cannot show it.
        case cannot = 0
        /// The scene can show it.
        case can = 1
        /// The scene can show it and prefers to.
        case prefers = 2

        /// Orders by raw value.
        public static func < (a: Match, b: Match) -> Bool { a.rawValue < b.rawValue }
    }

    /// How well the scene fits the content: the system activates a scene that prefers it, else
    /// one that can show it, else makes a new scene. Preferring implies being able.
    public func match(for targetContentIdentifier: String?) -> Match {
        guard canActivate(for: targetContentIdentifier) else { return .cannot }
        return prefersToActivate(for: targetContentIdentifier) ? .prefers : .can
    }

    /// Whether the scene can show the content (a nil identifier matches only `TRUEPREDICATE`-like predicates).
    public func canActivate(for targetContentIdentifier: String?) -> Bool {
        canActivateForTargetContentIdentifierPredicate.evaluate(targetContentIdentifier)
    }

    /// Whether the scene prefers to show the content.
    public func prefersToActivate(for targetContentIdentifier: String?) -> Bool {
        prefersToActivateForTargetContentIdentifierPredicate.evaluate(targetContentIdentifier)
    }
}
