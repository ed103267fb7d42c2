import DBus
import FerryBus
import FerryModel

/// The sharing methods of `org.ferry.Client1` (version 4): each checks that the broker calls,
/// decodes its arguments (a malformed one is `org.ferry.Error.InvalidArgument` naming the key)
/// and hands over to the client's ``Application``.
extension ClientObject {
    static func shareMethods(for client: FerryClient) -> [InterfaceMember] {
        [
            .method(Method("ProvideActivityItems", in: ["share": "s", "persistent_id": "s", "pasteboard": "o", "options": "a{sv}"],
                           out: ["result": "a{sv}"]) { [weak client] call in
                try await serving(client, call) { application throws(FerryError) in
                    let share = try string(call.arguments[0])
                    let scene = try application.connected(try string(call.arguments[1]))
                    guard case .objectPath(let pasteboard) = call.arguments[2].unwrappingVariants else {
                        throw FerryError(.invalidArgument, "pasteboard: expected an object path")
                    }
                    let result = try await application.provideActivityItems(share, scene: scene, pasteboard: pasteboard)
                    return [result.dbusValue]
                }
            }),
            // On the connection's thread: no hop to start the handler or send the answer (the
            // broker waits 250 ms at most while the sharer lists).
            .method(Method("CanPerformActivities", in: ["share": "s", "activity_types": "as", "info": "a{sv}"],
                           out: ["able": "as"], execution: .connectionThread) { [weak client] call in
                try await serving(client, call) { application throws(FerryError) in
                    let share = try string(call.arguments[0])
                    let types = try activityTypes(call.arguments[1])
                    let items = try ActivityItems.decode(share: share, info: call.arguments[2])
                    let able = application.performableActivities(types, items: items)
                    return [.array(of: .string, able.map { .string($0.rawValue) })]
                }
            }),
            .method(Method("PerformActivity", in: ["share": "s", "activity_type": "s", "info": "a{sv}"],
                           out: ["result": "a{sv}"]) { [weak client] call in
                try await performing(client, call)
            }),
            .method(Method("ShareCompleted", in: ["share": "s", "persistent_id": "s", "completion": "a{sv}"]) {
                [weak client] call in
                try await serving(client, call) { application throws(FerryError) in
                    let share = try string(call.arguments[0])
                    let completion: ShareCompletion
                    do {
                        completion = try ShareCompletion(dbusValue: call.arguments[2], keyPath: "completion")
                    } catch {
                        throw FerryError(.invalidArgument, FerryError.converting(error).message)
                    }
                    await application.shareCompleted(share, scene: try string(call.arguments[1]), completion: completion)
                    return []
                }
            }),
        ]
    }

    /// `PerformActivity`: the registered activity performs. Its error goes back as it is: a
    /// `FerryError` as its `org.ferry.Error.*` name (or, for code `.bus`, the app's own D-Bus
    /// error name it carries, unless that is an `org.freedesktop.DBus.*` name), any other error
    /// as `org.freedesktop.DBus.Error.Failed` with its description — the sharer's completion
    /// then names it.
    private static func performing(_ client: FerryClient?, _ call: MethodCall) async throws -> [DBusValue] {
        var failure: DBusError?
        let reply = try await serving(client, call) { application throws(FerryError) in
            let share = try string(call.arguments[0])
            let name = try string(call.arguments[1])
            let type = ActivityType(rawValue: name)
            do { try type.validate() } catch {
                throw FerryError(.invalidArgument, "activity_type: \(FerryError.converting(error).message)")
            }
            do {
                return [try await application.performActivity(type, share: share, info: call.arguments[2])]
            } catch let error as FerryError {
                // An app's own error name (code `.bus`) travels as it is; the bus's own names
                // (NoReply, Disconnected …) would tell the broker the app went away.
                guard error.code == .bus, let text = error.dbusErrorName, !text.hasPrefix("org.freedesktop.DBus."),
                      let name = try? ErrorName(text) else { throw error }
                failure = DBusError(name, error.message)
                return []
            } catch {
                failure = DBusError(.failed, "\(error)")
                return []
            }
        }
        if let failure { throw failure }
        return reply
    }

    /// The `activity_types` argument: well-formed activity types.
    private static func activityTypes(_ value: DBusValue) throws(FerryError) -> [ActivityType] {
        guard let names = try? value.unwrappingVariants.get([String].self) else {
            throw FerryError(.invalidArgument, "activity_types: expected an array of strings")
        }
        var types: [ActivityType] = []
        for (index, name) in names.enumerated() {
            let type = ActivityType(rawValue: name)
            do { try type.validate() } catch {
                throw FerryError(.invalidArgument, "activity_types[\(index)]: \(FerryError.converting(error).message)")
            }
            types.append(type)
        }
        return types
    }
}
