import DBus
import FerryModel
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the broker's `org.ferry.Client1` scene calls do to the app, as delegate calls. The broker
/// makes one call at a time per app and waits for each answer, so these never overlap.
extension Application {
    /// `ChooseConfiguration`: the delegate's choice, else (nil, or a name the manifest does not
    /// declare for the session's role) the manifest's default for the role. A scene this process
    /// already shows (a broker that restarted reconnects it) keeps its configuration; the delegate
    /// is not asked.
    func chooseConfiguration(for session: SceneSession, options: SceneConnectionOptions) async -> String {
        if let shown = scene(for: session.persistentIdentifier)?.session.configurationName { return shown }
        let chosen = await delegate.application(self, configurationForConnecting: session, options: options)
        if let chosen, manifest.configuration(named: chosen.name, role: session.role) != nil { return chosen.name }
        return manifest.defaultConfiguration(for: session.role)?.name ?? chosen?.name ?? ""
    }

    /// `ConnectScene`: a new scene (its delegate's `willConnectTo` runs, then its state is saved),
    /// or, for a scene this process already shows (the broker restarted), a reconnection: no
    /// second `willConnectTo`; an activity queued for the session meanwhile reaches the delegate's
    /// `scene(_:continue:)`, and what the app set is sent to the broker again.
    func connectScene(_ session: SceneSession, options: SceneConnectionOptions) async throws(FerryError) {
        guard session.bundleIdentifier == appID else {
            throw FerryError(.invalidArgument, "session: the session belongs to \(session.bundleIdentifier), not \(appID)")
        }
        let identifier = session.persistentIdentifier
        if let existing = scene(for: identifier) {
            existing.snapshot.withLock { current in
                let kept = current
                current = session
                current.title = kept.title
                current.userInfo = kept.userInfo
                current.activationConditions = kept.activationConditions
                current.activationState = kept.activationState
                current.stateRestorationActivity = kept.stateRestorationActivity ?? session.stateRestorationActivity
            }
            // Options the broker queued for this session while it did not know this process (a
            // request between its restart and this app's registration) must not be lost.
            for activity in options.userActivities {
                await existing.delegate.scene(existing, continue: activity)
            }
            saves.enqueue(.resend(identifier))
            return
        }
        let sceneDelegate = delegate.application(self, sceneDelegateFor: session)
        var connecting = session
        connecting.activationState = .unattached
        let scene = Scene(application: self, session: connecting, delegate: sceneDelegate)
        scenes.withLock { $0[identifier] = scene }
        await sceneDelegate.scene(scene, willConnectTo: connecting, options: options)
        saves.enqueue(.save(identifier))
    }

    /// `SceneChanged`: state (`i`), frame (`a{sv}`), screen (`u`). A new state reaches the
    /// delegate (when it differs from the scene's) and is followed by a save.
    func sceneChanged(_ identifier: String, changes: [String: WireValue]) async throws(FerryError) {
        let scene = try connected(identifier)
        var state: SceneActivationState?
        var frame: Rect?
        do {
            if let value = changes["state"] { state = try SceneActivationState(wireValue: value, keyPath: "state") }
            if let value = changes["frame"] {
                guard let dictionary = value.dictionaryValue else {
                    throw FerryModelError(.invalidArgument, "expected a dictionary (a{sv})", keyPath: "frame")
                }
                do { frame = try Rect(wireDictionary: dictionary) } catch let error as FerryModelError {
                    throw FerryModelError(error.code, error.message, keyPath: "frame" + (error.keyPath.map { "." + $0 } ?? ""))
                }
            }
        } catch {
            throw FerryError(.invalidArgument, "changes: \(FerryError.converting(error).message)")
        }
        let old = scene.snapshot.withLock { current -> SceneActivationState in
            defer {
                if let state { current.activationState = state }
                if let frame { current.frame = frame }
            }
            return current.activationState
        }
        guard let state, state != old else { return }
        await scene.delegate.scene(scene, didChangeActivationStateFrom: old, to: state)
        saves.enqueue(.save(identifier))
    }

    /// `ContinueActivity`: the delegate's `scene(_:continue:)`, then a save.
    func continueActivity(_ identifier: String, _ activity: UserActivity) async throws(FerryError) {
        let scene = try connected(identifier)
        await scene.delegate.scene(scene, continue: activity)
        saves.enqueue(.save(identifier))
    }

    /// `SaveActivity`: the delegate's `stateRestorationActivity(for:)` now, because another
    /// device continues the scene's activity (Apple's `updateUserActivityState` before it is
    /// sent); nil when the scene shows none.
    func saveActivity(_ identifier: String) async throws(FerryError) -> UserActivity? {
        let scene = try connected(identifier)
        let activity = await scene.delegate.stateRestorationActivity(for: scene)
        scene.snapshot.withLock { $0.stateRestorationActivity = activity }
        return activity
    }

    /// `OpenURLContexts`: the delegate's `scene(_:openURLContexts:)`.
    /// - Throws: `FerryError` `.notFound` for a scene that is not connected, `.invalidArgument`
    ///   for no URLs.
    func openURLContexts(_ identifier: String, _ options: SceneConnectionOptions) async throws(FerryError) {
        guard !options.urls.isEmpty else { throw FerryError(.invalidArgument, "options.urls: no URLs to open") }
        let scene = try connected(identifier)
        let contexts = options.urls.map { OpenURLContext(url: $0, sourceApplication: options.sourceApplication) }
        await scene.delegate.scene(scene, openURLContexts: contexts)
    }

    /// `RefreshScene`: the delegate's `sceneDidRefresh`.
    func refreshScene(_ identifier: String) async throws(FerryError) {
        let scene = try connected(identifier)
        await scene.delegate.sceneDidRefresh(scene)
    }

    /// `DisconnectScene`: the scene leaves ``connectedScenes`` (state unattached) and its
    /// delegate's `sceneDidDisconnect` runs.
    func disconnectScene(_ identifier: String) async throws(FerryError) {
        guard let scene = scenes.withLock({ $0.removeValue(forKey: identifier) }) else {
            throw FerryError(.notFound, "no connected scene \(identifier)")
        }
        scene.snapshot.withLock { $0.activationState = .unattached }
        await scene.delegate.sceneDidDisconnect(scene)
    }

    /// `DiscardSceneSessions`: a scene still shown for one of them disconnects first; then the
    /// delegate's `didDiscardSceneSessions`.
    func discardSceneSessions(_ identifiers: [String]) async {
        let removed = scenes.withLock { all in identifiers.compactMap { all.removeValue(forKey: $0) } }
        for scene in removed {
            scene.snapshot.withLock { $0.activationState = .unattached }
            await scene.delegate.sceneDidDisconnect(scene)
        }
        await delegate.application(self, didDiscardSceneSessions: identifiers)
    }

    /// After registering with a broker that restarted: scenes shown before the registration
    /// (`shown`) whose sessions that broker does not know (its state was lost) disconnect.
    /// Sessions it knows reconnect through `ConnectScene`; a scene that connected after the
    /// registration (the broker's new first scene) may be missing from a list taken just before
    /// it, so only `shown` ones are checked.
    func forgetScenesUnknownToBroker(among shown: Set<String>) async {
        guard !shown.isEmpty, let known = try? await Set(openSessions.map(\.persistentIdentifier)) else { return }
        let gone = scenes.withLock { all in
            let ids = all.keys.filter { shown.contains($0) && !known.contains($0) }
            return ids.compactMap { all.removeValue(forKey: $0) }
        }
        for scene in gone {
            scene.snapshot.withLock { $0.activationState = .unattached }
            await scene.delegate.sceneDidDisconnect(scene)
        }
    }

    /// The connected scene `identifier`.
    /// - Throws: `FerryError` `.notFound` when this process does not show it.
    func connected(_ identifier: String) throws(FerryError) -> Scene {
        guard let scene = scene(for: identifier) else { throw FerryError(.notFound, "no connected scene \(identifier)") }
        return scene
    }

    /// Saves every connected scene's state of the application registered through `client`, if
    /// any: the hook for the flush/termination path (``FerryClient/flush()``). Gives up after
    /// `limit`: a broker that does not answer must not hold up the process's exit.
    /// - Returns: false when `limit` passed first (the saves still running were cancelled).
    @discardableResult
    static func saveScenes(of client: FerryClient, limit: Duration) async -> Bool {
        guard let application = of(client) else { return true }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask { await application.saveState(); return true }
            group.addTask { try? await Task.sleep(for: limit); return false }
            let saved = await group.next() ?? false
            group.cancelAll()
            return saved
        }
    }
}
