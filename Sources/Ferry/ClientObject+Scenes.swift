import DBus
import FerryBus
import FerryModel

/// The scene methods of `org.ferry.Client1` (version 2): each checks that the broker calls,
/// decodes its arguments (a malformed one is `org.ferry.Error.InvalidArgument` naming the key)
/// and hands over to the client's ``Application``.
extension ClientObject {
    static func sceneMethods(for client: FerryClient) -> [InterfaceMember] {
        [
            .method(Method("ChooseConfiguration", in: ["session": "a{sv}", "options": "a{sv}"],
                           out: ["configuration": "s"]) { [weak client] call in
                try await serving(client, call) { application throws(FerryError) in
                    let session = try Application.session(call.arguments[0], what: "session")
                    let options = try connectionOptions(call.arguments[1])
                    return [.string(await application.chooseConfiguration(for: session, options: options))]
                }
            }),
            .method(Method("ConnectScene", in: ["session": "a{sv}", "options": "a{sv}"]) { [weak client] call in
                try await serving(client, call) { application throws(FerryError) in
                    let session = try Application.session(call.arguments[0], what: "session")
                    let options = try connectionOptions(call.arguments[1])
                    try await application.connectScene(session, options: options)
                    return []
                }
            }),
            .method(Method("SceneChanged", in: ["persistent_id": "s", "changes": "a{sv}"]) { [weak client] call in
                try await serving(client, call) { application throws(FerryError) in
                    let changes = try dictionary(call.arguments[1], what: "changes")
                    try await application.sceneChanged(try string(call.arguments[0]), changes: changes)
                    return []
                }
            }),
            .method(Method("ContinueActivity", in: ["persistent_id": "s", "activity": "a{sv}"]) { [weak client] call in
                try await serving(client, call) { application throws(FerryError) in
                    let wire = try dictionary(call.arguments[1], what: "activity")
                    let activity: UserActivity
                    do {
                        activity = try UserActivity(wireDictionary: wire)
                    } catch {
                        throw FerryError(.invalidArgument, "activity: \(FerryError.converting(error).message)")
                    }
                    try await application.continueActivity(try string(call.arguments[0]), activity)
                    return []
                }
            }),
            .method(Method("SaveActivity", in: ["persistent_id": "s"], out: ["activity": "a{sv}"]) { [weak client] call in
                try await serving(client, call) { application throws(FerryError) in
                    let activity = try await application.saveActivity(try string(call.arguments[0]))
                    return [try Scene.wire(activity: activity)]
                }
            }),
            .method(Method("OpenURLContexts", in: ["persistent_id": "s", "options": "a{sv}"]) { [weak client] call in
                try await serving(client, call) { application throws(FerryError) in
                    let options = try connectionOptions(call.arguments[1])
                    try await application.openURLContexts(try string(call.arguments[0]), options)
                    return []
                }
            }),
            .method(Method("RefreshScene", in: ["persistent_id": "s"]) { [weak client] call in
                try await serving(client, call) { application throws(FerryError) in
                    try await application.refreshScene(try string(call.arguments[0]))
                    return []
                }
            }),
            .method(Method("DisconnectScene", in: ["persistent_id": "s", "options": "a{sv}"]) { [weak client] call in
                try await serving(client, call) { application throws(FerryError) in
                    try await application.disconnectScene(try string(call.arguments[0]))
                    return []
                }
            }),
            .method(Method("DiscardSceneSessions", in: ["persistent_ids": "as"]) { [weak client] call in
                try await serving(client, call) { application throws(FerryError) in
                    let identifiers: [String]
                    do { identifiers = try call.arguments[0].get([String].self) } catch {
                        throw FerryError(.invalidArgument, "persistent_ids: expected an array of strings")
                    }
                    await application.discardSceneSessions(identifiers)
                    return []
                }
            }),
            .method(Method("PerformPaste", in: ["persistent_id": "s", "pasteboard": "s", "options": "a{sv}"],
                           out: ["result": "a{sv}"]) { [weak client] call in
                try await serving(client, call) { application throws(FerryError) in
                    let scene = try application.connected(try string(call.arguments[0]))
                    let result = try await application.performPaste(in: scene, pasteboard: try string(call.arguments[1]))
                    return [result.dbusValue]
                }
            }),
        ]
    }

    /// Runs a scene or drag call for the broker only, with the client's application; a `FerryError` is
    /// answered as its `org.ferry.Error.*` name.
    static func serving(_ client: FerryClient?, _ call: MethodCall,
                        _ body: (Application) async throws(FerryError) -> [DBusValue]) async throws -> [DBusValue] {
        guard let client else { throw DBusError(unavailable, "the client is gone") }
        guard await client.isBroker(call.sender) else {
            throw DBusError(permissionDenied, "only the owner of org.ferry.Broker may call org.ferry.Client1")
        }
        guard let application = Application.of(client) else {
            throw DBusError(unavailable, "this app does not show scenes (it did not register with Application.register)")
        }
        do {
            return try await body(application)
        } catch {
            throw error.dbusError
        }
    }

    static func string(_ value: DBusValue) throws(FerryError) -> String {
        guard case .string(let text) = value.unwrappingVariants else {
            throw FerryError(.invalidArgument, "expected a string, found '\(value.signature)'")
        }
        return text
    }

    static func dictionary(_ value: DBusValue, what: String) throws(FerryError) -> [String: WireValue] {
        do {
            return try [String: WireValue](dbusValue: value, keyPath: what)
        } catch {
            throw FerryError(error)
        }
    }

    private static func connectionOptions(_ value: DBusValue) throws(FerryError) -> SceneConnectionOptions {
        let wire = try dictionary(value, what: "options")
        do {
            return try SceneConnectionOptions(wireDictionary: wire)
        } catch {
            throw FerryError(.invalidArgument, "options: \(FerryError.converting(error).message)")
        }
    }
}
