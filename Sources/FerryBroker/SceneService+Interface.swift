import BrokerCore
import DBus
import FerryBus
import FerryModel

extension SceneService {
    /// `org.ferry.Scenes1`: handlers resolve the caller, read and check their arguments, then
    /// hand over to the actor.
    nonisolated var interface: Interface {
        Interface(Self.interfaceName) {
            Property("Version", "u", get: { _ in .uint32(Self.version) })
            Property("Screens", "aa{sv}", get: { [screens] _ in
                .array(of: "a{sv}", screens.map { screen in
                    .variantDictionary(["index": .uint32(UInt32(screen.index)),
                                        "frame": Self.frameWire(screen.frame).dbusValue,
                                        "external": .boolean(screen.isExternal)])
                })
            })
            Property("EdgeZone", "d", get: { [edgeZone] _ in .double(edgeZone) })
            Method("RequestActivation", in: ["app_id": "s", "persistent_id": "s", "options": "a{sv}"],
                   out: ["session": "o", "persistent_id": "s"]) { call in
                let caller = try await self.resolveCaller(call)
                let (appID, persistentID, options) = try call.arguments(String.self, String.self, VariantDictionary.self)
                let request = try ActivationRequest(options)
                let id = try await self.requestActivation(appID: appID, persistentID: persistentID, request: request,
                                                     caller: caller)
                return [.objectPath(try ObjectPath(SceneSession.objectPath(id))), .string(id)]
            }
            Method("RequestRefresh", in: ["persistent_id": "s"]) { call in
                _ = try await self.resolveCaller(call)
                try await self.requestRefresh(try call.argument(0, as: String.self))
                return []
            }
            Method("RequestDestruction", in: ["persistent_id": "s", "options": "a{sv}"]) { call in
                _ = try await self.resolveCaller(call)
                let (id, options) = try call.arguments(String.self, VariantDictionary.self)
                let animation = try WireReader(dbus: options, path: "options").string("animation").map { name in
                    guard let animation = SceneDismissalAnimation(name: name) else {
                        throw FerryModelError(.invalidArgument,
                                              "unknown animation \"\(name)\" (known: standard, commit, decline)",
                                              keyPath: "options.animation")
                    }
                    return animation
                } ?? .standard
                try await self.requestDestruction(id, animation: animation)
                return []
            }
            Method.replying("ListSessions", in: ["options": "a{sv}"], out: ["sessions": "aa{sv}"]) { call in
                _ = try await self.resolveCaller(call)
                let app = try WireReader(dbus: try call.argument(0, as: VariantDictionary.self), path: "options").string("app")
                return try call.reply(try await self.listSessions(app: app))
            }
            Method("Paste", in: ["persistent_id": "s", "pasteboard": "s", "options": "a{sv}"], out: ["result": "a{sv}"]) { call in
                _ = try await self.resolveCaller(call)
                let (id, pasteboard, options) = try call.arguments(String.self, String.self, VariantDictionary.self)
                let app = try WireReader(dbus: options, path: "options").string("app")
                try PasteboardName.validate(pasteboard)
                return [try await self.paste(into: id, app: app, pasteboard: pasteboard)]
            }
            Method("ListRemoteActivities", in: ["options": "a{sv}"], out: ["activities": "aa{sv}"]) { call in
                _ = try await self.resolveCaller(call)
                let all = try WireReader(dbus: try call.argument(0, as: VariantDictionary.self), path: "options").bool("all") ?? false
                return [.array(of: "a{sv}", await self.listRemoteActivities(all: all))]
            }
            Method("ContinueRemoteActivity", in: ["activity": "s", "options": "a{sv}"],
                   out: ["session": "o", "persistent_id": "s"]) { call in
                let caller = try await self.resolveCaller(call)
                let (name, options) = try call.arguments(String.self, VariantDictionary.self)
                let app = try WireReader(dbus: options, path: "options").string("app")
                let id = try await self.continueRemoteActivity(name, app: app, caller: caller)
                return [.objectPath(try ObjectPath(SceneSession.objectPath(id))), .string(id)]
            }
            Signal("SessionAdded", ["session": "o", "persistent_id": "s", "app_id": "s"])
            Signal("SessionRemoved", ["session": "o", "persistent_id": "s", "app_id": "s"])
            Signal("RemoteActivityAvailable", ["activity": "a{sv}"])
            Signal("RemoteActivityWithdrawn", ["activity": "s"])
        }
    }

    /// `org.ferry.SceneSession1` for the session `id`.
    nonisolated func sessionInterface(_ id: String) -> Interface {
        func property(_ name: MemberName, _ signature: Signature) -> Property {
            Property(name, signature, get: { _ in try await self.sessionProperty(id, name.rawValue) })
        }
        return Interface(Self.sessionInterfaceName) {
            Property("Version", "u", get: { _ in .uint32(Self.sessionVersion) })
            property("PersistentIdentifier", "s")
            property("AppID", "s")
            property("Role", "s")
            property("Configuration", "s")
            property("State", "s")
            property("Title", "s")
            property("Frame", "(dddd)")
            property("Screen", "u")
            property("UserInfo", "a{sv}")
            property("StateRestorationActivity", "a{sv}")
            Method("Update", in: ["changes": "a{sv}"]) { call in
                let caller = try await self.resolveCaller(call)
                try await self.update(id, changes: try call.argument(0, as: VariantDictionary.self), caller: caller)
                return []
            }
        }
    }

    /// Exports the session's object.
    func exportSession(_ id: String) throws {
        try connection.export(sessionInterface(id), at: try ObjectPath(SceneSession.objectPath(id)))
    }

    /// Removes the session's object.
    func unexportSession(_ id: String) {
        if let path = try? ObjectPath(SceneSession.objectPath(id)) { connection.unexport(path) }
    }

    /// One property of a session object.
    /// - Throws: `FerryModelError` `.notFound` when the session is gone.
    func sessionProperty(_ id: String, _ name: String) throws -> DBusValue {
        guard let session = sessions[id] else {
            throw FerryModelError(.notFound, "there is no scene session \"\(id)\"")
        }
        switch name {
        case "PersistentIdentifier": return .string(id)
        case "AppID": return .string(session.bundleIdentifier)
        case "Role": return .string(session.role.rawValue)
        case "Configuration": return .string(session.configurationName ?? "")
        case "State": return .string(session.activationState.name)
        case "Title": return .string(session.title ?? "")
        case "Frame": return Self.frameStructure(session.frame ?? .zero)
        case "Screen": return .uint32(UInt32(clamping: desktop.windows[id]?.screen ?? 0))
        case "UserInfo": return try Self.userInfoValue(session.userInfo)
        case "StateRestorationActivity": return try Self.activityValue(session.stateRestorationActivity)
        default: throw FerryModelError(.notFound, "no property \(name)")
        }
    }

    /// The session properties whose values a broadcast signal never carries: they are the app's
    /// and its user's content, and a signal reaches every connection on the bus that asks for it.
    static let contentProperties: Set<String> = ["Title", "UserInfo", "StateRestorationActivity"]

    /// Emits `PropertiesChanged` for a session's object: new values of the other properties, and
    /// the names only of ``contentProperties`` (as invalidated), to be read with `Properties.Get`,
    /// which checks the caller.
    func emitChanged(_ id: String, _ changed: [String: DBusValue]) {
        guard !changed.isEmpty, let path = try? ObjectPath(SceneSession.objectPath(id)) else { return }
        let values = changed.filter { !Self.contentProperties.contains($0.key) }
        let invalidated = changed.keys.filter { Self.contentProperties.contains($0) }.sorted()
        try? connection.emitPropertiesChanged(path: path, interface: Self.sessionInterfaceName, changed: values,
                                              invalidated: invalidated)
    }

    /// Emits `SessionAdded` or `SessionRemoved`.
    func emitSessionSignal(_ member: MemberName, _ id: String, appID: String) {
        guard let path = try? ObjectPath(SceneSession.objectPath(id)) else { return }
        try? connection.emit(path: Self.path, interface: Self.interfaceName, member: member,
                             body: [.objectPath(path), .string(id), .string(appID)])
    }

    /// `ListSessions`: the wire dictionaries plus path, screen and stackIndex.
    func listSessions(app: String?) throws -> [MarshalledDictionary] {
        let placement = desktop.placements()
        var listed: [MarshalledDictionary] = []
        listed.reserveCapacity(sessions.count)
        for id in orderedSessionIDs(app: app) {
            guard let position = sessions.index(forKey: id) else { continue }
            let place = placement[id] ?? (0, 0)
            let cached = encodedSessions[id]
            let entry: EncodedSession
            if let cached, cached.session == sessions.values[position] {
                entry = try cached.placed(screen: place.screen, stackIndex: place.index)
            } else {
                let session = sessions.values[position]
                guard case .dictionary(_, _, let entries) = try Self.sessionValue(session),
                      let path = try? ObjectPath(SceneSession.objectPath(id)) else { continue }
                let base = try MarshalledDictionary(dbusValue: .dictionary(
                    key: .string, value: .variant,
                    entries: entries + [DBusDictionaryEntry(key: .string("path"), value: .variant(.objectPath(path)))]))
                entry = try EncodedSession(session: session, base: base, screen: place.screen, stackIndex: place.index)
            }
            if entry !== cached { encodedSessions[id] = entry }
            listed.append(entry.listed)
        }
        // Every session listed is cached now, so more entries than sessions means some were removed.
        if encodedSessions.count > sessions.count { encodedSessions = encodedSessions.filter { sessions[$0.key] != nil } }
        return listed
    }

    // MARK: - Value shapes

    static func frameWire(_ frame: Rect) -> [String: WireValue] {
        ["x": .double(frame.minX), "y": .double(frame.minY), "width": .double(frame.size.width),
         "height": .double(frame.size.height)]
    }

    static func frameStructure(_ frame: Rect) -> DBusValue {
        .structure([.double(frame.minX), .double(frame.minY), .double(frame.size.width), .double(frame.size.height)])
    }

    static func userInfoValue(_ userInfo: [String: PropertyListValue]) throws -> DBusValue {
        try PropertyListValue.dictionary(userInfo).wireValue().dbusValue
    }

    static func activityValue(_ activity: UserActivity?) throws -> DBusValue {
        guard let activity else { return [String: WireValue]().dbusValue }
        return try activity.dbusValue()
    }

    /// A session's wire dictionary as `a{sv}`.
    static func sessionValue(_ session: SceneSession) throws -> DBusValue {
        try session.dbusValue()
    }
}
