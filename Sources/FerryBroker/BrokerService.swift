import BrokerCore
import DBus
import FerryModel
import FerryBus
import Logging

/// The broker's D-Bus face: `org.ferry.Broker1` at `/org/ferry/Broker` (apps, pasteboards, the
/// paste log), and the watch that drops a registration, and its promises, when its connection
/// goes away.
package struct BrokerService: Sendable {
    /// The well-known name the broker owns.
    package static let busName: BusName = "org.ferry.Broker"
    /// The broker object's path.
    package static let path: ObjectPath = "/org/ferry/Broker"
    /// The interface's name.
    package static let interfaceName: InterfaceName = "org.ferry.Broker1"
    /// The interface's version (its `Version` property).
    package static let version: UInt32 = 8

    /// The connection the broker serves on.
    package let connection: Connection
    /// The registered apps.
    package let registry: AppRegistry
    /// The pasteboards.
    package let pasteboards: PasteboardService
    /// The scene sessions, when ferryd serves them.
    package let scenes: SceneService?
    /// The direct connections' socket, nil when the broker serves none.
    package let direct: DirectListener?
    /// Callers' credentials, for the standard interfaces (refused when of another uid) and the
    /// broker's methods: the broker's one cache (``PasteboardService/callers``), which
    /// ``watch(_:alsoClosed:)`` fills ahead of first calls.
    let callers: CallerCache
    private let logger: Logger

    /// Makes the service; nothing is exported until ``export()``.
    /// - Parameters:
    ///   - pasteboards: serves the pasteboards; `Broker1.Pasteboard` and friends call into it,
    ///     and it learns here when a connection goes away.
    ///   - scenes: serves the scene sessions; registrations with scenes=true and connections
    ///     going away reach it.
    ///   - direct: grants direct connections (`OpenDirect`) and closes a client's when it leaves
    ///     the bus; nil: `OpenDirect` is `Unavailable`.
    ///   - logger: gets registrations and unregistrations (info).
    package init(connection: Connection, registry: AppRegistry, pasteboards: PasteboardService,
                scenes: SceneService? = nil, direct: DirectListener? = nil, logger: Logger) {
        self.connection = connection
        self.direct = direct
        self.registry = registry
        self.pasteboards = pasteboards
        self.scenes = scenes
        self.callers = pasteboards.callers
        self.logger = logger
    }

    /// Refuses `Introspectable` and `Properties` calls from callers of another uid, on every
    /// object of the connection, with `org.ferry.Error.PermissionDenied`: scene titles, user
    /// info, restoration activities, pasteboard names and change counts are theirs no more than
    /// the methods are. `Peer` stays open. Call it before exporting anything.
    package func restrictStandardInterfaces() {
        let callers = callers, connection = connection
        connection.restrictStandardInterfaces(StandardAccess(known: { try callers.known($0) != nil },
                                                            resolve: { _ = try await callers.resolve($0, on: connection) }))
    }

    /// Exports `org.ferry.Broker1` at ``path``.
    package func export() throws {
        try connection.export(interface, at: Self.path)
    }

    /// Watches connections come and go: asks the bus about each new one before it calls
    /// (``CallerCache/prefetch(_:on:)``), and removes the registrations of those that vanish;
    /// returns when the connection closes or the task is cancelled.
    ///
    /// Subscribe before exporting (call ``startWatching()``) so no disappearance is missed.
    /// - Parameter alsoClosed: told of every connection gone, after the services above (ferryd's
    ///   drags: their scenes are no longer targets by then).
    package func watch(_ changes: NameOwnerChanges, alsoClosed: (@Sendable (String) async -> Void)? = nil) async {
        // On the connection's thread: a new connection is asked about in the round its signal
        // came in, not after a pool thread wakes (hundreds of µs on a busy machine, as long as
        // `ferry paste` takes to send its first call).
        await withTaskExecutorPreference(connection.taskExecutor) { await watchChanges(changes, alsoClosed: alsoClosed) }
    }

    private func watchChanges(_ changes: NameOwnerChanges, alsoClosed: (@Sendable (String) async -> Void)?) async {
        do {
            for try await change in changes where change.name.rawValue.hasPrefix(":") {
                guard change.newOwner == nil else {
                    callers.prefetch(change.name, on: connection)
                    continue
                }
                callers.forget(change.name.rawValue)
                let app = await registry.connectionClosed(change.name.rawValue)
                if let app { announceUnregistered(app, reason: "disconnected") }
                await scenes?.appDisconnected(uniqueName: change.name.rawValue)
                await pasteboards.connectionClosed(change.name.rawValue, wasRegistered: app != nil)
                await direct?.connectionClosed(change.name.rawValue)
                await alsoClosed?(change.name.rawValue)
            }
        } catch {}
    }

    /// Subscribes to `NameOwnerChanged` for ``watch(_:)``.
    package func startWatching() async throws -> NameOwnerChanges {
        try await connection.nameOwnerChanges()
    }

    /// The caller's unique name and credentials, as the bus reports them (kept by the broker's
    /// cache); the methods decide on another uid themselves.
    /// - Throws: `DBusError` when the bus cannot say (the caller is gone).
    func resolveCaller(_ call: MethodCall) async throws -> Caller {
        try await callers.caller(call, on: connection)
    }

    private var interface: Interface {
        Interface(Self.interfaceName) {
            Property("Version", "u", get: { _ in .uint32(Self.version) })
            Method("RegisterApp", in: ["app_id": "s", "manifest": "ay", "client_path": "o", "options": "a{sv}"]) { call in
                let caller = try await resolveCaller(call)
                let (appID, manifest, clientPath, options) = try call.arguments(String.self, [UInt8].self, ObjectPath.self,
                                                                                 VariantDictionary.self)
                let showsScenes = try WireReader(dbus: options, path: "options").bool("scenes") ?? false
                if showsScenes && scenes == nil {
                    throw FerryModelError(.unavailable, "this broker does not serve scenes")
                }
                let app = try await registry.register(appID: appID, manifest: manifest, clientPath: clientPath.rawValue,
                                                      caller: caller, showsScenes: showsScenes)
                // The caller may have vanished while we worked: then its NameOwnerChanged has passed.
                if try await connection.owner(of: call.sender) == nil {
                    if let gone = await registry.connectionClosed(caller.uniqueName) {
                        announceUnregistered(gone, reason: "disconnected")
                    }
                    await scenes?.appDisconnected(uniqueName: caller.uniqueName)
                    return []
                }
                if let scenes {
                    if showsScenes {
                        do {
                            try await scenes.appRegistered(app, manifest: manifest)
                        } catch {
                            // Not kept: the registration does not stand either (nor does an earlier
                            // one of this connection that the scene service still holds).
                            _ = await registry.connectionClosed(caller.uniqueName)
                            await scenes.appDisconnected(uniqueName: caller.uniqueName)
                            throw error
                        }
                    } else {
                        await scenes.appDisconnected(uniqueName: caller.uniqueName)
                    }
                }
                logger.info("registered \(app.appID)",
                            metadata: ["sender": "\(caller.uniqueName)", "pid": "\(caller.pid.map(String.init) ?? "?")"])
                try connection.emit(path: Self.path, interface: Self.interfaceName, member: "AppRegistered",
                                    body: [.string(app.appID), .string(caller.uniqueName)])
                if showsScenes, let scenes {
                    // Not awaited: the reply goes now. The first scene calls may still reach the app
                    // just before it (the client library is ready for them before RegisterApp).
                    let appID = app.appID, uniqueName = caller.uniqueName
                    Task { await scenes.restoreScenes(of: appID, uniqueName: uniqueName) }
                }
                return []
            }
            Method("UnregisterApp") { call in
                let caller = try await resolveCaller(call)
                let app = try await registry.unregister(caller)
                announceUnregistered(app, reason: "on request")
                await scenes?.appDisconnected(uniqueName: caller.uniqueName)
                // Without a registration the broker cannot call the app back: its promises go.
                await pasteboards.dropPromises(of: caller.uniqueName)
                return []
            }
            Method("ListApps", out: ["apps": "aa{sv}"]) { call in
                let apps = try await registry.registeredApps(visibleTo: try await resolveCaller(call))
                var described: [DBusValue] = []
                for app in apps {
                    let summary = await scenes?.summary(of: app.appID) ?? (0, .unattached)
                    described.append(try Self.describe(app, scenes: summary.scenes, state: summary.state))
                }
                return [.array(of: "a{sv}", described)]
            }
            Method("Pasteboard", in: ["name": "s", "options": "a{sv}"], out: ["path": "o"]) { call in
                let caller = try await resolveCaller(call)
                try AppRegistry.checkSameUser(caller, ownUID: pasteboards.ownUID)
                let (name, options) = try call.arguments(String.self, VariantDictionary.self)
                let create = try WireReader(dbus: options, path: "options").bool("create") ?? true
                return [.objectPath(try await pasteboards.pasteboardPath(named: name, caller: caller.uniqueName,
                                                                         create: create))]
            }
            Method("RemovePasteboard", in: ["name": "s"]) { call in
                try AppRegistry.checkSameUser(try await resolveCaller(call), ownUID: pasteboards.ownUID)
                try await pasteboards.removePasteboard(try call.argument(0, as: String.self))
                return []
            }
            Method("ListPasteboards", out: ["names": "as"]) { call in
                try AppRegistry.checkSameUser(try await resolveCaller(call), ownUID: pasteboards.ownUID)
                return [.array(element: .string, elements: try pasteboards.pasteboardNames().map(DBusValue.string))]
            }
            Method("PasteLog", in: ["limit": "u"], out: ["entries": "aa{sv}"]) { call in
                try AppRegistry.checkSameUser(try await resolveCaller(call), ownUID: pasteboards.ownUID)
                let limit = min(Int(try call.argument(0, as: UInt32.self)), PasteboardStore.pasteLogLimit)
                let records = try await pasteboards.pasteLog(limit: limit)
                return [.array(element: "a{sv}", elements: records.map(PasteboardMetadata.pasteRecord))]
            }
            Method("OpenDirect", out: ["address": "s", "token": "ay"]) { call in
                let caller = try await resolveCaller(call)
                try AppRegistry.checkSameUser(caller, ownUID: pasteboards.ownUID)
                guard call.connection === connection else {
                    throw FerryModelError(.invalidArgument, "OpenDirect is asked over the bus, not over a direct connection")
                }
                guard let direct else { throw FerryModelError(.unavailable, "this broker serves no direct connections") }
                let (address, token) = try await direct.grant(to: caller)
                return [.string(address), .bytes(token)]
            }
            Method("TypeDeclarations", out: ["declarations": "aa{sv}"]) { call in
                try AppRegistry.checkSameUser(try await resolveCaller(call), ownUID: pasteboards.ownUID)
                return [.array(element: "a{sv}", elements: try Self.describe(registry.typeDeclarations))]
            }
            Method("PendingPasteConsents", out: ["requests": "aa{sv}"]) { call in
                try AppRegistry.checkSameUser(try await resolveCaller(call), ownUID: pasteboards.ownUID)
                return [.array(element: "a{sv}", elements: try pasteboards.consents.pending.map { try $0.dbusValue() })]
            }
            Method("AnswerPasteConsent", in: ["id": "t", "decision": "s", "options": "a{sv}"]) { call in
                let caller = try await resolveCaller(call)
                try AppRegistry.checkSameUser(caller, ownUID: pasteboards.ownUID)
                // The user answers (the CLI, a notifier): an app must not answer for itself or another.
                if let app = registry.app(of: caller.uniqueName) {
                    throw FerryModelError(.permissionDenied, "\(app.appID) is a registered app: only the user answers paste "
                                          + "consent requests (ferry policy allow|deny, a desktop notifier)")
                }
                let (id, decision, options) = try call.arguments(UInt64.self, String.self, VariantDictionary.self)
                guard decision == "allow" || decision == "deny" else {
                    throw FerryModelError(.invalidArgument, "decision: expected \"allow\" or \"deny\", found \"\(decision)\"")
                }
                let remember = try WireReader(dbus: options, path: "options").bool("remember") ?? false
                try pasteboards.answerConsent(id, allow: decision == "allow", remember: remember)
                return []
            }
            Signal("AppRegistered", ["app_id": "s", "unique_name": "s"])
            Signal("AppUnregistered", ["app_id": "s"])
            Signal("PasteConsentRequested", ["id": "t", "reader_app": "s", "reader_process": "s", "source_app": "s",
                                             "pasteboard": "s", "types": "as"])
            Signal("PasteConsentEnded", ["id": "t", "outcome": "s"])
        }
    }

    private func announceUnregistered(_ app: AppRegistration, reason: String) {
        logger.info("unregistered \(app.appID): \(reason)", metadata: ["sender": "\(app.caller.uniqueName)"])
        try? connection.emit(path: Self.path, interface: Self.interfaceName, member: "AppUnregistered",
                             body: [.string(app.appID)])
    }

    /// The declarations as `TypeDeclarations` lists them: exported first, each a declaration's
    /// wire dictionary with `exported` (b) added.
    static func describe(_ declarations: AppTypeDeclarations) throws -> [DBusValue] {
        let tagged = declarations.exported.map { ($0, true) } + declarations.imported.map { ($0, false) }
        return try tagged.map { declaration, exported in
            var wire = try declaration.wireDictionary()
            wire["exported"] = .bool(exported)
            return wire.dbusValue
        }
    }

    /// One app as `ListApps` describes it.
    static func describe(_ app: AppRegistration, scenes: Int, state: SceneActivationState) throws -> DBusValue {
        let manifest = app.manifest
        let documentTypes = manifest.documentTypes.flatMap(\.contentTypeIdentifiers)
        return .variantDictionary([
            "app-id": .string(app.appID),
            "name": .string(manifest.name ?? app.appID),
            "unique-name": .string(app.caller.uniqueName),
            "pid": .uint32(app.caller.pid ?? 0),
            "uid": .uint32(app.caller.uid),
            "client-path": .objectPath(try ObjectPath(app.clientPath)),
            "activity-types": .array(of: "s", manifest.userActivityTypes.map(DBusValue.string)),
            "supports-multiple-scenes": .boolean(manifest.supportsMultipleScenes),
            "document-types": .array(of: "s", documentTypes.map(DBusValue.string)),
            "shows-scenes": .boolean(app.showsScenes),
            "scenes": .uint32(UInt32(clamping: scenes)),
            "state": .string(state.name),
        ])
    }

}

/// A model error thrown by a handler is replied as `org.ferry.Error.<Code>`, its key path (if
/// any) leading the message. (A conformance cannot be narrower than its type and protocol, so
/// this witness stays `public` in a module that is otherwise `package`.)
extension FerryModelError: DBusErrorConvertible {
    /// The error as the handler's D-Bus reply: `org.ferry.Error.<Code>` and the message.
    public var dbusError: DBusError {
        let text = keyPath.map { "\($0): \(message)" } ?? message
        return DBusError((try? ErrorName(code.dbusErrorName)) ?? .failed, text)
    }
}
