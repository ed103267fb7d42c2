import FerryModel
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Application {
    /// Brings an existing session forward, or asks for a new scene (Apple's
    /// `requestSceneSessionActivation(_:userActivity:options:errorHandler:)`).
    ///
    /// With `session` nil: a new scene showing `userActivity` (its `targetContentIdentifier` may
    /// pick an existing scene by its activation conditions instead, which then gets the activity
    /// through ``SceneDelegate/scene(_:continue:)``). The app's delegate chooses the new scene's
    /// configuration and its scene connects before this returns.
    /// - Parameters:
    ///   - session: the session to bring forward, nil for a new one.
    ///   - userActivity: the activity for the connection options; its type must be declared in
    ///     the manifest's `NSUserActivityTypes`.
    ///   - options: requesting scene, placement, URLs, screen.
    /// - Returns: the persistent identifier of the session activated.
    /// - Throws: `FerryError`: `.multipleScenesNotSupported` (the manifest does not support
    ///   multiple scenes and the app has one), `.invalidArgument` (an undeclared or malformed
    ///   activity, naming its key path; a bad option), `.notFound` (an unknown session),
    ///   `.timeout`, `.noBroker`.
    ///
    /// The broker calls the app one call at a time: a delegate method that awaits this (or a
    /// refresh or destruction request) stalls until the broker's timeouts, because the broker's
    /// calls for the request wait behind the one the delegate is answering. Start a `Task`
    /// instead.
    ///
    /// D-Bus: `org.ferry.Scenes1.RequestActivation`.
    @discardableResult
    public func requestSceneSessionActivation(_ session: SceneSession?, userActivity: UserActivity?,
                                              options: SceneActivationRequestOptions = .init())
        async throws(FerryError) -> String {
        try await client.requestSceneSessionActivation(app: appID, session: session?.persistentIdentifier, userActivity: userActivity,
                                                      options: options)
    }

    /// Asks for a session's scene to be redrawn (Apple's `requestSceneSessionRefresh`): its
    /// delegate's ``SceneDelegate/sceneDidRefresh(_:)`` runs. Nothing happens for an archived
    /// session.
    /// - Throws: `FerryError` `.notFound` for an unknown session, `.noBroker`.
    ///
    /// D-Bus: `org.ferry.Scenes1.RequestRefresh`.
    public func requestSceneSessionRefresh(_ session: SceneSession) async throws(FerryError) {
        try await client.requestSceneSessionRefresh(session.persistentIdentifier)
    }

    /// Destroys a session (Apple's `requestSceneSessionDestruction`): its scene disconnects, then
    /// the delegate's ``ApplicationDelegate/application(_:didDiscardSceneSessions:)`` runs.
    /// - Throws: `FerryError` `.notFound` for an unknown session, `.noBroker`.
    ///
    /// D-Bus: `org.ferry.Scenes1.RequestDestruction`.
    public func requestSceneSessionDestruction(_ session: SceneSession,
                                               options: SceneDestructionRequestOptions = .init())
        async throws(FerryError) {
        try await client.requestSceneSessionDestruction(session.persistentIdentifier, options: options)
    }
}
