#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import BrokerCore
import FerryModel

/// What the drag service needs from the scenes: hit tests on the desktop, the apps behind the
/// scenes and the apps' manifests, and a new scene for an edge drop.
extension SceneService {
    /// A connected scene under a drag, with what the drag service needs to drive it.
    struct DragTarget: Sendable {
        /// The scene's persistent identifier.
        var id: String
        /// Its app.
        var appID: String
        /// Its frame, desktop coordinates.
        var frame: Rect
        /// The unique bus name of the app's registered connection.
        var uniqueName: String
        /// The app's call queue.
        var callbacks: AppCallbacks
        /// False for a scene of the external-display role: it is never asked about a drag
        /// (it proposes forbidden) and takes no drop.
        var isInteractive = true
    }

    /// What lies under a point of the desktop.
    struct DragHit: Sendable {
        /// The front-most connected scene containing the point, nil when none.
        var scene: DragTarget?
        /// The edge zone the point is in, nil outside the edge zones.
        var edge: ScenePlacement?
        /// The screen containing the point (the nearest one off every screen).
        var screen: Int
    }

    /// The front-most connected scene at `point` (its app running), the edge zone and the screen.
    ///
    /// The drag service asks this on every move: it reads the desktop only.
    func dragHit(at point: Point) -> DragHit {
        var target: DragTarget?
        if let window = desktop.window(at: point), let app = running[window.appID] {
            target = DragTarget(id: window.id, appID: window.appID, frame: window.frame, uniqueName: app.uniqueName,
                                callbacks: app.callbacks, isInteractive: isInteractive(window.id))
        }
        let screen = desktop.screen(containing: point) ?? desktop.nearestScreen(to: point)
        return DragHit(scene: target, edge: desktop.edge(at: point), screen: screen.index)
    }

    /// Whether a scene takes user interaction (drops, pastes, drags): every scene but those of
    /// the external-display role.
    func isInteractive(_ id: String) -> Bool {
        sessions[id]?.role != .windowExternalDisplayNonInteractive
    }

    /// A connected scene by persistent identifier, nil when unknown or not connected.
    func dragTarget(_ id: String) -> DragTarget? {
        guard let window = desktop.windows[id], window.isConnected, let app = running[window.appID] else { return nil }
        return DragTarget(id: id, appID: window.appID, frame: window.frame, uniqueName: app.uniqueName,
                          callbacks: app.callbacks, isInteractive: isInteractive(id))
    }

    /// The running app registered with scenes as `appID`: its unique name and call queue.
    func runningApp(_ appID: String) -> (uniqueName: String, callbacks: AppCallbacks)? {
        running[appID].map { ($0.uniqueName, $0.callbacks) }
    }

    /// The manifests of every app that ever registered with scenes (the running ones' current
    /// manifests), by app id.
    var knownManifests: [String: AppManifest] {
        var manifests = knownApps
        for (appID, app) in running { manifests[appID] = app.manifest }
        return manifests
    }

    /// The centre of a screen (an app-icon drag without a location starts there).
    func screenCentre(_ index: Int) -> Point {
        let frame = screens[min(max(index, 0), screens.count - 1)].frame
        return Point(x: frame.midX, y: frame.midY)
    }

    /// Why ``openSceneForDrop(appID:activity:urls:placement:screen:sourceUniqueName:)`` would
    /// fail for `appID` now, nil when it would open (or show) a scene: the app is unknown or
    /// registered without scenes, does not declare the activity, or has its one scene already
    /// and the activity prefers none of its sessions.
    func edgeDropRefusal(appID: String, activity: UserActivity?) async -> String? {
        do {
            let manifest = try await sceneManifest(of: appID)
            try Self.checkDeclared(activity, in: manifest)
            if let target = activity?.targetContentIdentifier, sessionPreferring(target, appID: appID) != nil { return nil }
            try refuseSecondScene(of: appID, manifest: manifest)
            return nil
        } catch {
            return "\(appID) could not open a scene: \((error as? FerryModelError)?.message ?? "\(error)")"
        }
    }

    /// Opens a scene for an edge drop through the `RequestActivation` path: the app chooses its
    /// configuration, the new session gets `activity` or `urls` in its connection options and
    /// takes the `placement` half of `screen`, the scene beneath the other half.
    /// - Parameters:
    ///   - sourceUniqueName: the source app's connection (the options' source application).
    /// - Returns: the session's persistent identifier.
    /// - Throws: `FerryModelError` as `RequestActivation` does.
    func openSceneForDrop(appID: String, activity: UserActivity?, urls: [URL], placement: ScenePlacement, screen: Int,
                          sourceUniqueName: String) async throws -> String {
        var request = try ActivationRequest([:])
        request.userActivity = activity
        request.urls = urls
        request.placement = placement
        request.screen = screen
        return try await requestActivation(appID: appID, persistentID: "", request: request,
                                           caller: Caller(uniqueName: sourceUniqueName, uid: ownUID, pid: nil))
    }
}
