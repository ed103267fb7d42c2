import BrokerCore
import DBus
import FerryBus
import FerryModel
import Logging

extension SceneService {
    // MARK: - Registration

    /// An app registered with scenes=true: its manifest is kept (durably, before the
    /// registration is answered) and its calls get a queue. ``restoreScenes(of:uniqueName:)``
    /// then reconnects its sessions, once the registration has been answered.
    /// - Throws: `FerryModelError` `.storageFailed`; `.unavailable` when the registration has
    ///   already ended (its connection closed while the broker got here).
    package func appRegistered(_ app: AppRegistration, manifest bytes: [UInt8]) throws {
        // The connection may have closed since the registry took it, and appDisconnected may
        // have run already: keeping the app would leave a dead connection "running" its scenes.
        guard registry.app(of: app.caller.uniqueName)?.appID == app.appID else {
            throw FerryModelError(.unavailable, "\(app.appID) went away while it registered")
        }
        try store.saveApp(app.appID, manifest: bytes)
        knownApps[app.appID] = app.manifest
        if let current = running[app.appID], current.uniqueName == app.caller.uniqueName,
           current.callbacks.path.rawValue == app.clientPath {
            running[app.appID]?.manifest = app.manifest  // registered again from the same connection
            return
        }
        if let stale = running[app.appID] { detach(app.appID, uniqueName: stale.uniqueName) }
        let callbacks = AppCallbacks(appID: app.appID, destination: try BusName(app.caller.uniqueName),
                                     path: try ObjectPath(app.clientPath), connection: connection, direct: direct,
                                     logger: logger)
        running[app.appID] = RunningApp(uniqueName: app.caller.uniqueName, manifest: app.manifest, callbacks: callbacks)
    }

    /// Delivers the discards made while the app was not running, then reconnects each of its
    /// archived sessions back to front (their pending options with them), or opens its first
    /// session when it has none. Stops when the app goes away.
    package func restoreScenes(of appID: String, uniqueName: String) async {
        guard let app = running[appID], app.uniqueName == uniqueName else { return }
        do {
            let discards = try store.pendingDiscards(of: appID)
            if !discards.isEmpty {
                _ = try await app.callbacks.call("DiscardSceneSessions", [.array(of: .string, discards.map(DBusValue.string))],
                                                 timeout: timeouts.call)
                try store.clearPendingDiscards(of: appID, discards)
                logger.debug("told \(appID) of \(discards.count) session(s) discarded while it was not running")
            }
        } catch {
            logger.warning("cannot deliver the pending discards of \(appID): \(error)")
        }
        guard isCurrent(app) else { return }
        let own = sessions.values.filter { $0.bundleIdentifier == appID }.map(\.persistentIdentifier)
        if own.isEmpty {
            do {
                _ = try await openNew(appID: appID, options: SceneConnectionOptions(), screen: nil, requesting: nil,
                                      placement: nil)
            } catch {
                logger.warning("cannot open the first scene of \(appID): \(error)")
            }
            return
        }
        let backToFront = own.sorted { (desktop.windows[$0]?.stackOrder ?? 0) < (desktop.windows[$1]?.stackOrder ?? 0) }
        for id in backToFront {
            guard isCurrent(app) else { return }
            guard sessions[id] != nil, desktop.windows[id]?.isConnected != true else { continue }
            do {
                try await connect(id, app: app, options: pending[id] ?? SceneConnectionOptions())
            } catch {
                logger.warning("cannot reconnect scene \(id) of \(appID): \(error)")
            }
        }
    }

    /// A connection went away or unregistered: the scenes of the app it registered become
    /// unattached (their sessions stay), and the other scenes' states are derived again.
    package func appDisconnected(uniqueName: String) {
        guard let appID = running.first(where: { $0.value.uniqueName == uniqueName })?.key else { return }
        detach(appID, uniqueName: uniqueName)
    }

    private func detach(_ appID: String, uniqueName: String) {
        guard let app = running[appID], app.uniqueName == uniqueName else { return }
        running[appID] = nil
        app.callbacks.close()
        var count = 0
        for session in sessions.values where session.bundleIdentifier == appID {
            if desktop.windows[session.persistentIdentifier]?.isConnected == true { count += 1 }
            desktop.setConnected(session.persistentIdentifier, false)
        }
        if count > 0 { logger.info("\(count) scene(s) of \(appID) are unattached: the app is gone") }
        rederive()
    }

    // MARK: - Update

    /// `SceneSession1.Update`: the owning app reports what changed; every change is checked
    /// first, then stored, then announced.
    /// - Throws: `FerryModelError` `.notFound`, `.permissionDenied` (not the session's app's
    ///   registered connection), `.invalidArgument` naming the key.
    func update(_ id: String, changes: VariantDictionary, caller: Caller) throws {
        guard var session = sessions[id] else { throw FerryModelError(.notFound, "there is no scene session \"\(id)\"") }
        guard let registered = registry.app(of: caller.uniqueName), registered.appID == session.bundleIdentifier else {
            throw FerryModelError(.permissionDenied,
                                  "only the connection that registered \(session.bundleIdentifier) may update its scene \(id)")
        }
        let dictionary = WireReader(dbus: changes, path: "changes")
        var properties: [String: DBusValue] = [:]
        if let title = try dictionary.string("title") {
            session.title = title.isEmpty ? nil : title
            properties["Title"] = .string(title)
        }
        if let wire = try dictionary.lookup("userInfo") {
            guard case .dictionary = wire, case .dictionary(let entries) = try PropertyListValue(wireValue: wire, keyPath: "changes.userInfo") else {
                throw FerryModelError(.invalidArgument, "expected a dictionary (a{sv})", keyPath: "changes.userInfo")
            }
            session.userInfo = entries
            properties["UserInfo"] = try Self.userInfoValue(entries)
        }
        if let activity = try dictionary.dictionary("stateRestorationActivity") {
            session.stateRestorationActivity = activity.entries.isEmpty ? nil : try activity.decodeHere(UserActivity.self)
            properties["StateRestorationActivity"] = try Self.activityValue(session.stateRestorationActivity)
        }
        if let conditions = try dictionary.decode(SceneActivationConditions.self, "activationConditions") {
            session.activationConditions = conditions
        }
        var frame: Rect?
        if let rect = try dictionary.decode(Rect.self, "frame") {
            let limit = Desktop.coordinateLimit
            guard [rect.minX, rect.minY].allSatisfy({ $0.isFinite && abs($0) <= limit }),
                  [rect.size.width, rect.size.height].allSatisfy({ $0.isFinite && $0 >= 1 && $0 <= limit }) else {
                throw FerryModelError(.invalidArgument, "a frame needs finite coordinates and a size of at least 1×1",
                                      keyPath: "changes.frame")
            }
            frame = rect
        }
        let before = desktop
        let previous = sessions[id]
        sessions[id] = session
        if let frame { _ = desktop.setFrame(id, frame) }
        do {
            try persist(changedWindows(since: before).union([id]))
        } catch {
            desktop = before
            sessions[id] = previous
            throw error
        }
        emitChanged(id, properties)
        if changes["stateRestorationActivity"] != nil || changes["userInfo"] != nil { handoffMayHaveChanged() }
        if frame != nil {
            windowsChanged(since: before, notifying: true, except: id)
            rederive()
        }
    }
}
