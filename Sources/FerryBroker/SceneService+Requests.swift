#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import BrokerCore
import DBus
import FerryBus
import FerryModel
import Logging

/// The options of `org.ferry.Scenes1.RequestActivation`, read and checked.
struct ActivationRequest: Sendable {
    var userActivity: UserActivity?
    var urls: [URL] = []
    var requestingScene: String?
    var placement: ScenePlacement?
    var screen: Int?
    /// The role of a new session (`UIWindowSceneSessionRoleApplication` unless asked).
    var role = SceneRole.windowApplication

    /// Reads `options`; unknown keys are ignored.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key (`options.placement`).
    init(_ options: VariantDictionary) throws {
        let dictionary = WireReader(dbus: options, path: "options")
        userActivity = try dictionary.decode(UserActivity.self, "userActivity")
        if let texts = try dictionary.strings("urls", of: "strings") {
            urls = try texts.enumerated().map { index, text in
                guard let url = URL(string: text), url.scheme != nil else {
                    throw FerryModelError(.invalidArgument, "not an absolute URL", keyPath: "options.urls[\(index)]")
                }
                return url
            }
        }
        requestingScene = try dictionary.string("requestingScene")
        if let name = try dictionary.string("placement") {
            guard let placement = ScenePlacement(rawValue: name) else {
                throw FerryModelError(.invalidArgument, "unknown placement \"\(name)\" (known: left, right)",
                                      keyPath: "options.placement")
            }
            self.placement = placement
        }
        if let name = try dictionary.string("role") {
            guard !name.isEmpty else { throw FerryModelError(.invalidArgument, "must not be empty", keyPath: "options.role") }
            role = SceneRole(rawValue: name)
        }
        if let index = try dictionary.int64("screen") {
            guard index >= 0, index <= Int64(Int32.max) else {
                throw FerryModelError(.invalidArgument, "a screen index must not be negative", keyPath: "options.screen")
            }
            screen = Int(index)
        }
    }

    /// The connection options for the app.
    func connectionOptions(sourceApplication: String?) -> SceneConnectionOptions {
        SceneConnectionOptions(userActivities: userActivity.map { [$0] } ?? [], urls: urls,
                               sourceApplication: sourceApplication)
    }
}

extension SceneService {
    /// `RequestActivation`: an existing session brought forward, a session chosen by its
    /// activation conditions, or a new one.
    /// - Returns: the session's persistent identifier.
    func requestActivation(appID requestedApp: String, persistentID: String, request: ActivationRequest,
                           caller: Caller) async throws -> String {
        let source = registry.app(of: caller.uniqueName)?.appID
        let options = request.connectionOptions(sourceApplication: source)
        if !persistentID.isEmpty {
            guard let session = sessions[persistentID] else {
                throw FerryModelError(.notFound, "there is no scene session \"\(persistentID)\"", keyPath: "persistent_id")
            }
            guard requestedApp.isEmpty || requestedApp == session.bundleIdentifier else {
                throw FerryModelError(.invalidArgument,
                                      "session \(persistentID) belongs to \(session.bundleIdentifier), not \(requestedApp)",
                                      keyPath: "app_id")
            }
            let manifest = try await sceneManifest(of: session.bundleIdentifier)
            try Self.checkDeclared(request.userActivity, in: manifest)
            try await activateExisting(persistentID, options: options)
            return persistentID
        }
        guard !requestedApp.isEmpty else {
            throw FerryModelError(.invalidArgument, "name the app, or an existing session in persistent_id", keyPath: "app_id")
        }
        let manifest = try await sceneManifest(of: requestedApp)
        try Self.checkDeclared(request.userActivity, in: manifest)
        if let requesting = request.requestingScene, sessions[requesting] == nil {
            throw FerryModelError(.invalidArgument, "there is no scene session \"\(requesting)\"",
                                  keyPath: "options.requestingScene")
        }
        guard request.role == .windowApplication || !manifest.configurations(for: request.role).isEmpty else {
            throw FerryModelError(.invalidArgument, "\(requestedApp) declares no scene configuration for the role \(request.role)",
                                  keyPath: "options.role")
        }
        if let screen = request.screen, screen >= screens.count {
            throw FerryModelError(.invalidArgument, "there is no screen \(screen) (the desktop has \(screens.count))",
                                  keyPath: "options.screen")
        }
        if let screen = request.screen, screens[screen].isExternal {
            throw FerryModelError(.invalidArgument,
                                  "screen \(screen) is the external display: only scenes of the external-display role go there (options.role)",
                                  keyPath: "options.screen")
        }
        if request.role == .windowExternalDisplayNonInteractive, desktop.externalDisplay == nil {
            throw FerryModelError(.unavailable, "no external display is connected (ferryd --external-display WIDTHxHEIGHT)")
        }
        if let target = request.userActivity?.targetContentIdentifier,
           let chosen = sessionPreferring(target, appID: requestedApp) {
            try await activateExisting(chosen, options: options)
            return chosen
        }
        try refuseSecondScene(of: requestedApp, manifest: manifest)
        return try await openNew(appID: requestedApp, role: request.role, options: options, screen: request.screen,
                                 requesting: request.requestingScene, placement: request.placement)
    }

    /// Refuses a new scene of an app that does not support multiple scenes and already has a
    /// session (Apple's `UISceneError.multipleScenesNotSupported`).
    /// - Throws: `FerryModelError` `.multipleScenesNotSupported`.
    func refuseSecondScene(of appID: String, manifest: AppManifest) throws {
        guard !manifest.supportsMultipleScenes,
              let existing = sessions.values.first(where: { $0.bundleIdentifier == appID }) else { return }
        throw FerryModelError(.multipleScenesNotSupported,
                              "\(appID) does not support multiple scenes and already has session \(existing.persistentIdentifier)")
    }

    /// The manifest of an app that may have scenes: a running app registered with scenes, else
    /// one that registered with scenes before.
    /// - Throws: `FerryModelError` `.unavailable` for a running app registered without scenes,
    ///   `.notFound` for an app never seen.
    func sceneManifest(of appID: String) async throws -> AppManifest {
        if let app = running[appID] { return app.manifest }
        if await registry.registeredApps.contains(where: { $0.appID == appID && !$0.showsScenes }) {
            throw FerryModelError(.unavailable, "\(appID) is registered without scenes")
        }
        if let manifest = knownApps[appID] { return manifest }
        throw FerryModelError(.notFound, "no app \(appID) has ever registered with scenes", keyPath: "app_id")
    }

    /// Refuses an activity whose type the app does not declare in `NSUserActivityTypes`.
    static func checkDeclared(_ activity: UserActivity?, in manifest: AppManifest) throws {
        guard let activity, !manifest.declaresActivityType(activity.activityType) else { return }
        throw FerryModelError(.invalidArgument,
                              "\(manifest.bundleIdentifier) does not declare the activity type \"\(activity.activityType)\" in NSUserActivityTypes",
                              keyPath: "options.userActivity.activityType")
    }

    /// The app's session whose activation conditions prefer `target`, else one that can show
    /// it; among equals the connected, front-most one.
    func sessionPreferring(_ target: String, appID: String) -> String? {
        var best: (match: SceneActivationConditions.Match, connected: Bool, order: Int64, id: String)?
        for session in sessions.values where session.bundleIdentifier == appID {
            let match = session.activationConditions.match(for: target)
            guard match != .cannot else { continue }
            let window = desktop.windows[session.persistentIdentifier]
            let candidate = (match, window?.isConnected ?? false, window?.stackOrder ?? 0, session.persistentIdentifier)
            if let current = best,
               (current.match, current.connected ? 1 : 0, current.order) >= (candidate.0, candidate.1 ? 1 : 0, candidate.2) {
                continue
            }
            best = candidate
        }
        return best?.id
    }

    /// Brings an existing session forward; a connected scene gets the activity
    /// (`ContinueActivity`), then the URLs (`OpenURLContexts`); an archived one connects now when
    /// its app runs, or keeps the options for its next connection.
    func activateExisting(_ id: String, options: SceneConnectionOptions) async throws {
        guard sessions[id] != nil else { throw FerryModelError(.notFound, "there is no scene session \"\(id)\"") }
        try changeDesktop { $0.bringToFront(id) }
        guard let session = sessions[id] else { return }
        let appID = session.bundleIdentifier
        if desktop.windows[id]?.isConnected == true, let app = running[appID] {
            for activity in options.userActivities {
                _ = try await app.callbacks.call("ContinueActivity", [.string(id), try activity.dbusValue()],
                                                 timeout: timeouts.call)
            }
            if !options.urls.isEmpty {
                let contexts = SceneConnectionOptions(urls: options.urls, sourceApplication: options.sourceApplication)
                _ = try await app.callbacks.call("OpenURLContexts", [.string(id), try contexts.dbusValue()],
                                                 timeout: timeouts.call)
            }
        } else if let app = running[appID] {
            if connecting.contains(id) {
                // Its scene is connecting right now (a restore): that connection delivers these
                // when it is done (``connect(_:app:options:)``).
                queue(options, for: id)
            } else {
                try await connect(id, app: app, options: options)
            }
        } else if !options.isEmpty {
            queue(options, for: id)
        }
    }

    /// Keeps `options` (after any already kept) for the session's next connection, durably.
    private func queue(_ options: SceneConnectionOptions, for id: String) {
        guard !options.isEmpty else { return }
        var kept = pending[id] ?? SceneConnectionOptions()
        kept.userActivities += options.userActivities
        kept.urls += options.urls
        kept.sourceApplication = options.sourceApplication ?? kept.sourceApplication
        pending[id] = kept
        do { try persist([id]) } catch { logger.error("cannot keep the connection options of \(id): \(error)") }
    }

    /// Makes a new session, places it, and connects it when its app runs (removing it again
    /// when the app fails to connect it).
    /// - Returns: its persistent identifier.
    func openNew(appID: String, role: SceneRole = .windowApplication, options: SceneConnectionOptions, screen: Int?,
                 requesting: String?, placement: ScenePlacement?) async throws -> String {
        let id = SceneSession.makePersistentIdentifier()
        let before = desktop
        if role == .windowExternalDisplayNonInteractive {
            guard desktop.placeOnExternalDisplay(id: id, appID: appID) != nil else {
                throw FerryModelError(.unavailable, "no external display is connected (ferryd --external-display WIDTHxHEIGHT)")
            }
        } else {
            _ = desktop.placeNew(id: id, appID: appID, screen: screen, requesting: requesting, placement: placement)
        }
        sessions[id] = try SceneSession(persistentIdentifier: id, bundleIdentifier: appID, role: role,
                                        frame: desktop.windows[id]?.frame)
        let app = running[appID]
        if app == nil, !options.isEmpty { pending[id] = options }
        do {
            try persist(changedWindows(since: before).union([id]))
        } catch {
            desktop = before
            sessions[id] = nil
            pending[id] = nil
            throw error
        }
        try? exportSession(id)
        emitSessionSignal("SessionAdded", id, appID: appID)
        logger.info("new scene session \(id) of \(appID)\(app == nil ? " (archived: the app is not running)" : "")")
        windowsChanged(since: before, notifying: true)
        rederive()
        if let app {
            // What the placement moved (the scene beneath), to move back if the new scene fails.
            let placed = desktop
            do {
                try await connect(id, app: app, options: options)
            } catch {
                if sessions[id] != nil, desktop.windows[id]?.isConnected != true {
                    forget(id)
                    undoPlacement(from: before, to: placed)
                }
                throw error
            }
        }
        return id
    }

    /// Gives the windows a failed new scene's placement moved their frames back, unless they
    /// have moved again since.
    private func undoPlacement(from before: Desktop, to placed: Desktop) {
        try? changeDesktop { desktop in
            for (id, window) in placed.windows {
                guard let old = before.windows[id], old.frame != window.frame,
                      desktop.windows[id]?.frame == window.frame else { continue }
                _ = desktop.setFrame(id, old.frame)
            }
        }
    }

    /// Connects a session's scene in its running app: `ChooseConfiguration` (5 s; a name the
    /// manifest does not declare for the role means its first one), then `ConnectScene` (10 s),
    /// then the activation-state steps.
    /// - Throws: `FerryModelError`: `.timeout`, `.unavailable` (the app went away), `.notFound`
    ///   (the session was destroyed meanwhile).
    func connect(_ id: String, app: RunningApp, options: SceneConnectionOptions) async throws {
        guard !connecting.contains(id) else { return }
        connecting.insert(id)
        defer { connecting.remove(id) }
        guard let session = sessions[id] else { throw FerryModelError(.notFound, "scene session \(id) was destroyed") }
        let optionsValue = try options.dbusValue()
        var chosen = ""
        do {
            let reply = try await app.callbacks.call("ChooseConfiguration", [try Self.sessionValue(session), optionsValue],
                                                     timeout: timeouts.choose)
            if reply.count == 1, case .string(let name) = reply[0] { chosen = name }
        } catch let error as FerryModelError where error.code == .unavailable && !isCurrent(app) {
            throw error
        } catch {
            logger.warning("using the default configuration for \(id): \(error)", metadata: ["app": "\(session.bundleIdentifier)"])
        }
        try checkStillConnectable(id, app: app)
        guard var current = sessions[id] else { throw FerryModelError(.notFound, "scene session \(id) was destroyed") }
        let configuration = app.manifest.configuration(named: chosen, role: current.role)
            ?? app.manifest.defaultConfiguration(for: current.role)
        if configuration?.name != current.configurationName {
            current.configurationName = configuration?.name
            sessions[id] = current
            try persist([id])
            emitChanged(id, ["Configuration": .string(current.configurationName ?? "")])
        }
        _ = try await app.callbacks.call("ConnectScene", [try Self.sessionValue(current), optionsValue],
                                         timeout: timeouts.call)
        guard sessions[id] != nil else {
            // Destroyed while connecting: the app shows a scene for a session that is gone.
            _ = try? app.callbacks.enqueue("DisconnectScene", [.string(id), .variantDictionary(["reason": "destroyed"])],
                                           timeout: timeouts.call)
            throw FerryModelError(.notFound, "scene session \(id) was destroyed while it connected")
        }
        try checkStillConnectable(id, app: app)
        // Activities queued while it connected (a request for this session meanwhile) were not
        // in its connection options: they reach the connected scene as continuations.
        let queued = pending.removeValue(forKey: id)
        if queued != nil { try? persist([id]) }
        let late = (queued?.userActivities ?? []).filter { !options.userActivities.contains($0) }
        desktop.setConnected(id, true)
        logger.debug("\(current.bundleIdentifier) connected scene \(id) (\(current.configurationName ?? "no configuration"))")
        rederive()
        for activity in late {
            _ = try? app.callbacks.enqueue("ContinueActivity", [.string(id), try activity.dbusValue()], timeout: timeouts.call)
        }
    }

    /// Whether `app` is still the running registration of its app.
    func isCurrent(_ app: RunningApp) -> Bool {
        running[app.callbacks.appID]?.callbacks === app.callbacks
    }

    private func checkStillConnectable(_ id: String, app: RunningApp) throws {
        guard isCurrent(app) else {
            throw FerryModelError(.unavailable, "\(app.callbacks.appID) went away while scene \(id) connected")
        }
        guard sessions[id] != nil else { throw FerryModelError(.notFound, "scene session \(id) was destroyed") }
    }

    /// `RequestRefresh`: the app redraws a connected scene; nothing for an archived one.
    func requestRefresh(_ id: String) async throws {
        guard let session = sessions[id] else { throw FerryModelError(.notFound, "there is no scene session \"\(id)\"") }
        guard desktop.windows[id]?.isConnected == true, let app = running[session.bundleIdentifier] else { return }
        _ = try await app.callbacks.call("RefreshScene", [.string(id)], timeout: timeouts.call)
    }

    /// `RequestDestruction`: the session is forgotten and its discard recorded (durably, in one
    /// transaction) and its object removed; a connected scene disconnects and its app is told.
    /// The discard stays recorded until the app confirms it, so an app that is not running, is
    /// slow, or dies first is told at its next registration.
    func requestDestruction(_ id: String, animation: SceneDismissalAnimation) async throws {
        guard let session = sessions[id] else { throw FerryModelError(.notFound, "there is no scene session \"\(id)\"") }
        let appID = session.bundleIdentifier
        let wasConnected = desktop.windows[id]?.isConnected == true
        let app = running[appID]
        try store.destroy(id, appID: appID)
        forget(id)
        logger.info("destroyed scene session \(id) of \(appID) (\(animation.name))")
        guard let app else { return }
        if wasConnected {
            _ = try? await app.callbacks.call("DisconnectScene", [
                .string(id), .variantDictionary(["reason": "destroyed", "animation": .string(animation.name)]),
            ], timeout: timeouts.call)
        }
        // Not confirmed (a timeout, or the app went away before its disconnection reached us):
        // the recorded discard is delivered again at its next registration; a second discard of
        // a session is harmless, a missed one leaves its saved state behind.
        do {
            _ = try await app.callbacks.call("DiscardSceneSessions", [.array(of: .string, [.string(id)])],
                                             timeout: timeouts.call)
            try store.clearPendingDiscards(of: appID, [id])
        } catch {
            logger.warning("the discard of \(id) stays recorded for \(appID)'s next registration: \(error)")
        }
    }

    /// Forgets a session in memory: desktop, object, `SessionRemoved`, states re-derived. The
    /// store is the caller's business.
    func forget(_ id: String) {
        guard let session = sessions.removeValue(forKey: id) else { return }
        pending[id] = nil
        try? store.remove(id)
        desktop.remove(id)
        unexportSession(id)
        emitSessionSignal("SessionRemoved", id, appID: session.bundleIdentifier)
        rederive()
    }

    /// `Paste`: a paste action in a connected scene, decided and performed by its app.
    func paste(into id: String, app appID: String?, pasteboard: String) async throws -> DBusValue {
        let target: String
        if id.isEmpty {
            guard let appID else {
                throw FerryModelError(.invalidArgument, "name the scene, or its app in options.app", keyPath: "persistent_id")
            }
            let connected = orderedSessionIDs(app: appID).filter {
                desktop.windows[$0]?.isConnected == true && sessions[$0]?.role != .windowExternalDisplayNonInteractive
            }
            guard let front = connected.max(by: { (desktop.windows[$0]?.stackOrder ?? 0) < (desktop.windows[$1]?.stackOrder ?? 0) }) else {
                if running[appID] == nil && knownApps[appID] == nil {
                    throw FerryModelError(.notFound, "no app \(appID) has ever registered with scenes", keyPath: "options.app")
                }
                throw FerryModelError(.unavailable, "\(appID) has no connected scene")
            }
            target = front
        } else {
            target = id
        }
        guard let session = sessions[target] else { throw FerryModelError(.notFound, "there is no scene session \"\(target)\"") }
        guard session.role != .windowExternalDisplayNonInteractive else {
            throw FerryModelError(.notInteractive, "scene \(target) of \(session.bundleIdentifier) is on the external display, which takes no pastes")
        }
        guard desktop.windows[target]?.isConnected == true, let app = running[session.bundleIdentifier] else {
            throw FerryModelError(.unavailable, "scene \(target) of \(session.bundleIdentifier) is not connected")
        }
        let reply = try await app.callbacks.call("PerformPaste", [.string(target), .string(pasteboard), .variantDictionary([:])],
                                                 timeout: timeouts.paste)
        guard reply.count == 1, case .dictionary(key: .string, value: .variant, _) = reply[0] else {
            throw FerryModelError(.unavailable, "\(session.bundleIdentifier) answered PerformPaste with \(reply.map(\.signature.rawValue).joined()) instead of a{sv}")
        }
        return reply[0]
    }
}
