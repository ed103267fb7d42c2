import DBus
import FerryBus
import FerryModel

extension DragService {
    /// `org.ferry.DragManager1`: handlers resolve the caller, read and check their arguments,
    /// then hand over to the actor.
    nonisolated var managerInterface: Interface {
        Interface(Self.interfaceName) {
            Property("Version", "u", get: { _ in .uint32(Self.version) })
            Method("BeginDrag", in: ["source_session": "s", "options": "a{sv}"], out: ["session": "o", "pasteboard": "o"]) { call in
                let caller = try await self.resolveCaller(call)
                let (source, options) = try call.arguments(String.self, VariantDictionary.self)
                let request = try DragBeginRequest(options)
                let (session, pasteboard) = try await self.beginDrag(from: source, request: request, caller: caller)
                return [.objectPath(session), .objectPath(pasteboard)]
            }
            Method("LastDrag", out: ["drag": "a{sv}"]) { call in
                _ = try await self.resolveCaller(call)
                return [await self.lastDrag()]
            }
            Method("SetPreviews", in: ["session": "o", "previews": "aa{sv}"]) { call in
                let caller = try await self.resolveCaller(call)
                let number = try Self.dragNumber(call.arguments[0])
                let previews = try DragPreview.list(try WireReader.readers(dbus: call.arguments[1], path: "previews"))
                try await self.setPreviews(number, previews, caller: caller)
                return []
            }
            Method("Previews", in: ["session": "o"], out: ["previews": "aa{sv}"]) { call in
                let caller = try await self.resolveCaller(call)
                let number = try Self.dragNumber(call.arguments[0])
                let previews = try await self.previews(number, caller: caller)
                return [.array(of: "a{sv}", DragPreview.wireList(previews).map(\.dbusValue))]
            }
            Signal("DragBegan", ["session": "o", "source_app": "s"])
            Signal("DragEnded", ["session": "o", "operation": "s"])
        }
    }

    /// `org.ferry.DragSession1` for a drag. Its fixed properties are answered from the values
    /// captured here, the live ones (State, Location, Target, Operation) from the actor; Move
    /// runs on the connection's thread (P5).
    nonisolated func sessionInterface(_ session: DragSession) -> Interface {
        let number = session.number, initiator = session.initiator
        let constants: [(MemberName, Signature, DBusValue)] = [
            ("SourceApp", "s", .string(session.sourceApp)),
            ("SourceSession", "s", .string(session.sourceSession)),
            ("Pasteboard", "s", .string(session.pasteboard)),
            ("AllowsMove", "b", .boolean(session.allowsMove)),
            ("RestrictedToApp", "b", .boolean(session.restrictedToApp)),
        ]
        /// The initiator is resolved already; anyone else is checked (and then refused).
        @Sendable func check(_ call: MethodCall) async throws {
            if call.sender.rawValue != initiator { _ = try await self.resolveCaller(call) }
        }
        return Interface(Self.sessionInterfaceName) {
            Property("Version", "u", get: { _ in .uint32(Self.sessionVersion) })
            constants.map { name, signature, value in
                InterfaceMember.property(Property(name, signature, get: { _ in value }))
            }
            Property("State", "s", get: { _ in .string(try await self.live(number).state.rawValue) })
            Property("Location", "(dd)", get: { _ in
                let location = try await self.live(number).location
                return .structure([.double(location.x), .double(location.y)])
            })
            Property("Target", "s", get: { _ in .string(try await self.live(number).current?.id ?? "") })
            Property("Operation", "s", get: { _ in .string(try await self.live(number).proposal.operation.name) })
            Method("Move", in: ["location": "(dd)"], out: ["operation": "s", "precise": "b", "target": "s", "edge": "s"],
                   execution: .connectionThread) { call in
                try await check(call)
                let location = try Self.point(call.arguments[0], keyPath: "location")
                return try await self.move(number, to: location, sender: call.sender.rawValue)
            }
            Method("Drop", out: ["outcome": "a{sv}"]) { call in
                try await check(call)
                return [try await self.drop(number, sender: call.sender.rawValue)]
            }
            Method("Cancel") { call in
                try await check(call)
                try await self.cancel(number, sender: call.sender.rawValue)
                return []
            }
            Signal("Moved", ["location": "(dd)", "target": "s", "operation": "s"])
        }
    }
}

extension DragService {
    /// A running drag, for its live properties.
    /// - Throws: `FerryModelError` `.notFound` once it has ended.
    func live(_ number: Int) throws -> DragSession {
        guard let session = sessions[number] else { throw FerryModelError(.notFound, "drag \(number) has ended") }
        return session
    }
}
