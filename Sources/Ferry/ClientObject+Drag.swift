import DBus
import FerryBus
import FerryModel

/// The drag and drop methods of `org.ferry.Client1` (version 3): each checks that the broker
/// calls, decodes its arguments (a malformed one is `org.ferry.Error.InvalidArgument` naming the
/// key) and hands over to the client's ``Application``.
extension ClientObject {
    static func dragMethods(for client: FerryClient) -> [InterfaceMember] {
        [
            .method(Method("ProvideDragItems", in: ["drag": "s", "persistent_id": "s", "pasteboard": "o", "options": "a{sv}"],
                           out: ["result": "a{sv}"]) { [weak client] call in
                try await serving(client, call) { application throws(FerryError) in
                    let drag = try string(call.arguments[0])
                    let scene = try application.connected(try string(call.arguments[1]))
                    guard case .objectPath(let pasteboard) = call.arguments[2].unwrappingVariants else {
                        throw FerryError(.invalidArgument, "pasteboard: expected an object path")
                    }
                    let request = try dragRequest(drag, options: call.arguments[3])
                    let result = try await application.provideDragItems(drag, scene: scene, pasteboard: pasteboard,
                                                                        request: request, broker: call.sender)
                    return [result.dbusValue]
                }
            }),
            // On the connection's thread: no hop to start the handler or send the proposal (the
            // broker waits 250 ms at most, and a drag moves often).
            .method(Method("DropEntered", in: ["drag": "s", "persistent_id": "s", "info": "a{sv}"],
                           out: ["operation": "s", "precise": "b"], execution: .connectionThread) { [weak client] call in
                try await proposing(client, call, entering: true)
            }),
            // On the connection's thread: no hop to start the handler or send the proposal (the
            // broker waits 250 ms at most, and a drag moves often).
            .method(Method("DropUpdated", in: ["drag": "s", "persistent_id": "s", "info": "a{sv}"],
                           out: ["operation": "s", "precise": "b"], execution: .connectionThread) { [weak client] call in
                try await proposing(client, call, entering: false)
            }),
            .method(Method("DropExited", in: ["drag": "s", "persistent_id": "s"]) { [weak client] call in
                try await serving(client, call) { application throws(FerryError) in
                    let drag = try string(call.arguments[0])
                    // A scene that disconnected meanwhile has nothing to hear.
                    if let scene = application.scene(for: try string(call.arguments[1])) {
                        await application.dropExited(drag, scene: scene)
                    }
                    return []
                }
            }),
            .method(Method("PerformDrop", in: ["drag": "s", "persistent_id": "s", "info": "a{sv}"],
                           out: ["result": "a{sv}"]) { [weak client] call in
                try await serving(client, call) { application throws(FerryError) in
                    let drag = try string(call.arguments[0])
                    let scene = try application.connected(try string(call.arguments[1]))
                    let (session, operation) = try DropSession.decode(id: drag, info: call.arguments[2], client: client)
                    guard let operation, operation.transfersItems else {
                        throw FerryError(.invalidArgument, "info.operation: expected copy or move")
                    }
                    let result = try await application.performDrop(session, operation: operation, in: scene)
                    return [result.dbusValue]
                }
            }),
            .method(Method("ConcludeDrop", in: ["drag": "s", "persistent_id": "s"]) { [weak client] call in
                try await serving(client, call) { application throws(FerryError) in
                    let drag = try string(call.arguments[0])
                    if let scene = application.scene(for: try string(call.arguments[1])) {
                        await application.concludeDrop(drag, scene: scene)
                    }
                    return []
                }
            }),
            .method(Method("DropEnded", in: ["drag": "s", "persistent_id": "s", "operation": "s"]) { [weak client] call in
                try await serving(client, call) { application throws(FerryError) in
                    let drag = try string(call.arguments[0])
                    let operation = try dropOperation(call.arguments[2])
                    await application.dropEnded(drag, scene: try string(call.arguments[1]), operation: operation)
                    return []
                }
            }),
            .method(Method("DragEnded", in: ["drag": "s", "persistent_id": "s", "operation": "s", "info": "a{sv}"]) {
                [weak client] call in
                try await serving(client, call) { application throws(FerryError) in
                    let drag = try string(call.arguments[0])
                    let operation = try dropOperation(call.arguments[2])
                    let info = try dictionary(call.arguments[3], what: "info")
                    func text(_ key: String) -> String? {
                        guard let value = info[key]?.stringValue, !value.isEmpty else { return nil }
                        return value
                    }
                    let end = DragEnd(id: drag, operation: operation, target: text("target"), newSession: text("newSession"))
                    await application.dragEnded(end, scene: try string(call.arguments[1]))
                    return []
                }
            }),
        ]
    }

    /// `DropEntered` / `DropUpdated`: the proposal `(s operation, b precise)`.
    private static func proposing(_ client: FerryClient?, _ call: MethodCall, entering: Bool) async throws -> [DBusValue] {
        try await serving(client, call) { application throws(FerryError) in
            let drag = try string(call.arguments[0])
            let scene = try application.connected(try string(call.arguments[1]))
            let (session, _) = try DropSession.decode(id: drag, info: call.arguments[2], client: client)
            let proposal = await application.dropProposal(for: session, in: scene, entering: entering)
            return [.string(proposal.operation.name), .boolean(proposal.isPrecise)]
        }
    }

    /// The request of `ProvideDragItems` from its options: item (u), location ((dd)), allowsMove (b).
    private static func dragRequest(_ drag: String, options value: DBusValue) throws(FerryError) -> DragRequest {
        guard let options = try? [String: DBusValue](dbusValue: value.unwrappingVariants) else {
            throw FerryError(.invalidArgument, "options: expected a dictionary (a{sv})")
        }
        var item = 0
        if let found = options["item"] {
            guard case .uint32(let index) = found.unwrappingVariants else {
                throw FerryError(.invalidArgument, "options.item: expected an unsigned integer (u)")
            }
            item = Int(index)
        }
        var location = Point.zero
        if let found = options["location"] {
            guard case .structure(let fields) = found.unwrappingVariants, fields.count == 2,
                  case .double(let x) = fields[0], case .double(let y) = fields[1], x.isFinite, y.isFinite else {
                throw FerryError(.invalidArgument, "options.location: expected a finite point (dd)")
            }
            location = Point(x: x, y: y)
        }
        var wantsMove = false
        if let found = options["allowsMove"] {
            guard case .boolean(let value) = found.unwrappingVariants else {
                throw FerryError(.invalidArgument, "options.allowsMove: expected a boolean")
            }
            wantsMove = value
        }
        return DragRequest(id: drag, item: item, location: location, wantsMove: wantsMove)
    }

    private static func dropOperation(_ value: DBusValue) throws(FerryError) -> DropOperation {
        let name = try string(value)
        guard let operation = DropOperation(name: name) else {
            throw FerryError(.invalidArgument, "operation: \"\(name)\" is not cancel, forbidden, copy or move")
        }
        return operation
    }
}
