#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import BrokerCore
import FerryModel

/// What the built-in open-in-new-scene activity needs from the scenes: the app that opens a user
/// activity, and a new scene of it.
extension SceneService {
    /// The app that opens a user activity of `activityType` (an edge drop, open-in-new-scene): the app
    /// declaring the type in `NSUserActivityTypes`, `preferred` first, then every app known to
    /// scenes by id; nil when none declares it.
    /// - Parameters:
    ///   - activityType: the activity's type.
    ///   - preferred: the app to ask first (the share's source app).
    func appDeclaring(activityType: String, preferring preferred: String?) -> String? {
        let manifests = knownManifests
        let order = (preferred.map { manifests[$0] != nil ? [$0] : [] } ?? []) + manifests.keys.sorted().filter { $0 != preferred }
        return order.first { manifests[$0]?.declaresActivityType(activityType) == true }
    }

    /// Opens a scene of `appID` for a share's user activity through the `RequestActivation` path
    /// (as an edge drop does, without placement): the app chooses its configuration and the
    /// session gets `activity` in its connection options — or, when the activity's
    /// `targetContentIdentifier` prefers an existing session, that one is activated.
    /// - Parameters:
    ///   - appID: the app (``appDeclaring(activityType:preferring:)``).
    ///   - activity: the user activity.
    ///   - sharerUniqueName: the sharer's connection (the options' source application).
    /// - Returns: the session's persistent identifier.
    /// - Throws: `FerryModelError` as `RequestActivation` does.
    func openSceneForShare(appID: String, activity: UserActivity, sharerUniqueName: String) async throws -> String {
        var request = try ActivationRequest([:])
        request.userActivity = activity
        return try await requestActivation(appID: appID, persistentID: "", request: request,
                                           caller: Caller(uniqueName: sharerUniqueName, uid: ownUID, pid: nil))
    }
}
