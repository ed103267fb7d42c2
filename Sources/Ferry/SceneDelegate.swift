import FerryModel

/// What an app does with one of its scenes (Apple's `UISceneDelegate` / `UIWindowSceneDelegate`,
/// plus the scene's responder duties for paste). The library calls these in the order the broker
/// drives the scene: ``scene(_:willConnectTo:options:)`` once, then activation-state changes,
/// continued activities, refreshes and pastes, and ``sceneDidDisconnect(_:)`` last.
///
/// Every requirement but the connection has a default: nothing happens, no restoration activity,
/// no paste configuration (the scene accepts nothing).
public protocol SceneDelegate: AnyObject, Sendable {
    /// The scene is about to be shown for `session` (Apple's `scene(_:willConnectTo:options:)`).
    /// `options` holds what to show (activities, URLs); empty when the scene is restored, then
    /// `session.stateRestorationActivity` says what it showed (the seeds'
    /// `options.userActivities.first ?? session.stateRestorationActivity`).
    func scene(_ scene: Scene, willConnectTo session: SceneSession, options: SceneConnectionOptions) async
    /// The scene went away; its session may stay and connect again later.
    func sceneDidDisconnect(_ scene: Scene) async
    /// The scene's activation state changed, one step at a time as the seeds' life cycle goes.
    func scene(_ scene: Scene, didChangeActivationStateFrom old: SceneActivationState,
               to new: SceneActivationState) async
    /// The activity that restores what the scene shows now (Apple's
    /// `stateRestorationActivity(for:)`); the library stores it with the session.
    func stateRestorationActivity(for scene: Scene) async -> UserActivity?
    /// An activity sent to this existing scene, chosen by its activation conditions.
    func scene(_ scene: Scene, continue activity: UserActivity) async
    /// `requestSceneSessionRefresh` reached the scene: redraw it.
    func sceneDidRefresh(_ scene: Scene) async
    /// The types the scene accepts for paste (Apple's `UIResponder.pasteConfiguration`); nil
    /// accepts nothing.
    func pasteConfiguration(for scene: Scene) -> PasteConfiguration?
    /// Pastes the items (Apple's `paste(itemProviders:)`); their loaders read the pasteboard as a
    /// user action. Runs only when ``pasteConfiguration(for:)`` accepts what the pasteboard holds.
    /// - Returns: a one-line summary of what was pasted, for the paste's result.
    /// - Throws: any error; the paste then fails with it (`FerryError` codes keep their name).
    func scene(_ scene: Scene, paste itemProviders: [ItemProvider]) async throws -> String
}

extension SceneDelegate {
    /// Does nothing.
    public func scene(_ scene: Scene, willConnectTo session: SceneSession, options: SceneConnectionOptions) async {}
    /// Does nothing.
    public func sceneDidDisconnect(_ scene: Scene) async {}
    /// Does nothing.
    public func scene(_ scene: Scene, didChangeActivationStateFrom old: SceneActivationState,
                      to new: SceneActivationState) async {}
    /// No restoration activity.
    public func stateRestorationActivity(for scene: Scene) async -> UserActivity? { nil }
    /// Does nothing.
    public func scene(_ scene: Scene, continue activity: UserActivity) async {}
    /// Does nothing.
    public func sceneDidRefresh(_ scene: Scene) async {}
    /// nil: the scene accepts nothing.
    public func pasteConfiguration(for scene: Scene) -> PasteConfiguration? { nil }
    /// Throws `FerryError` `.unavailable`: the scene does not paste.
    public func scene(_ scene: Scene, paste itemProviders: [ItemProvider]) async throws -> String {
        throw FerryError(.unavailable, "the scene does not paste")
    }
}
