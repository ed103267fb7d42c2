import FerryModel
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Options of ``Application/requestSceneSessionActivation(_:userActivity:options:)`` (Apple's
/// `UIScene.ActivationRequestOptions` / `UIWindowScene.ActivationRequestOptions`).
public struct SceneActivationRequestOptions: Sendable, Hashable {
    /// The persistent identifier of the scene that asks: a new scene opens on its screen,
    /// cascaded from it, and it is the scene "beneath" for ``placement``.
    public var requestingScene: String?
    /// The half of the screen the new scene takes (the scene beneath takes the other half);
    /// nil cascades it.
    public var placement: ScenePlacement?
    /// Absolute URLs for the connection options (Apple's `urlContexts`).
    public var urls: [URL]
    /// The screen for a new scene without a requesting scene (default 0).
    public var screen: Int?
    /// The new scene's role (default ``SceneRole/windowApplication``); the app's manifest must
    /// have configurations for it.
    public var role: SceneRole?

    /// Makes options; the defaults ask for nothing special.
    public init(requestingScene: String? = nil, placement: ScenePlacement? = nil, urls: [URL] = [], screen: Int? = nil,
                role: SceneRole? = nil) {
        self.requestingScene = requestingScene
        self.placement = placement
        self.urls = urls
        self.screen = screen
        self.role = role
    }
}

/// Options of ``Application/requestSceneSessionDestruction(_:options:)`` (Apple's
/// `UIWindowSceneDestructionRequestOptions`).
public struct SceneDestructionRequestOptions: Sendable, Hashable {
    /// How the window goes away (Apple's `windowDismissalAnimation`).
    public var animation: SceneDismissalAnimation

    /// Makes options (a standard dismissal by default).
    public init(animation: SceneDismissalAnimation = .standard) {
        self.animation = animation
    }
}
