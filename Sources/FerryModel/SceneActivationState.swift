/// A scene's life-cycle state (Apple's `UIScene.ActivationState`), with Apple's raw values.
public enum SceneActivationState: Int32, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Not connected to a process (the session is archived or the scene is being set up).
    case unattached = -1
    /// On screen and receiving events.
    case foregroundActive = 0
    /// On screen, not receiving events.
    case foregroundInactive = 1
    /// Off screen.
    case background = 2

    /// A lower-camel-case name, as used on the CLI (`foregroundActive`).
    public var name: String {
        switch self {
        case .unattached: "unattached"
        case .foregroundActive: "foregroundActive"
        case .foregroundInactive: "foregroundInactive"
        case .background: "background"
        }
    }

    /// The state with a ``name``, or nil.
    public init?(name: String) {
        guard let state = SceneActivationState.allCases.first(where: { $0.name == name }) else { return nil }
        self = state
    }

    /// The ``name``.
    public var description: String { name }

    /// How far up the state is: unattached 0, background 1, foregroundInactive 2, foregroundActive 3.
    public var level: Int {
        switch self {
        case .unattached: 0
        case .background: 1
        case .foregroundInactive: 2
        case .foregroundActive: 3
        }
    }

    /// The states a scene passes through going from `old` to `new`, ending with `new` (empty when
    /// they are equal), as the seeds' life cycle goes: a connecting scene enters the foreground
    /// inactive first; active and background are always separated by foregroundInactive; a
    /// disconnecting scene goes straight to unattached.
    public static func steps(from old: SceneActivationState, to new: SceneActivationState) -> [SceneActivationState] {
        guard old != new else { return [] }
        if new == .unattached { return [.unattached] }
        if old == .unattached { return new == .foregroundActive ? [.foregroundInactive, .foregroundActive] : [new] }
        if (old == .foregroundActive && new == .background) || (old == .background && new == .foregroundActive) {
            return [.foregroundInactive, new]
        }
        return [new]
    }
}

/// How a window goes away when its session is destroyed (Apple's `UIWindowScene.DismissalAnimation`).
public enum SceneDismissalAnimation: Int32, Sendable, Hashable, CaseIterable {
    /// The usual close.
    case standard = 1
    /// The content was saved or sent.
    case commit = 2
    /// The content was discarded.
    case decline = 3

    /// The lower-case name used on the bus and the CLI (`standard`, `commit`, `decline`).
    public var name: String {
        switch self {
        case .standard: "standard"
        case .commit: "commit"
        case .decline: "decline"
        }
    }

    /// The animation with a ``name``, or nil.
    public init?(name: String) {
        guard let animation = SceneDismissalAnimation.allCases.first(where: { $0.name == name }) else { return nil }
        self = animation
    }
}

/// Where a new scene goes on its screen (`UIWindowScene.ActivationRequestOptions.placement`'s
/// desktop reading): that half of the screen, the scene beneath taking the other half.
public enum ScenePlacement: String, Sendable, Hashable, CaseIterable {
    /// The left half.
    case left
    /// The right half.
    case right
}
