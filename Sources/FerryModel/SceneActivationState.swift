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
}

/// How a window goes away when its session is destroyed (Apple's `UIWindowScene.DismissalAnimation`).
public enum SceneDismissalAnimation: Int32, Sendable, Hashable, CaseIterable {
    /// The usual close.
    case standard = 1
    /// The content was saved or sent.
    case commit = 2
    /// The content was discarded.
    case decline = 3
}
