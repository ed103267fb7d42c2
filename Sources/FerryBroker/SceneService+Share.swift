import FerryModel

/// What the share service needs from the scenes: a connected scene to share and its app, and
/// the call queue of a running app (an activity app's calls go through the same queue as its
/// scene calls).
extension SceneService {
    /// A connected scene by persistent identifier, as a share's source; nil when unknown, not
    /// connected, or its app is not running.
    func shareSource(_ id: String) -> Share.Source? {
        dragTarget(id).map { Share.Source(sceneID: $0.id, appID: $0.appID, uniqueName: $0.uniqueName, callbacks: $0.callbacks) }
    }
}
