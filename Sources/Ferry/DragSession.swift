import DBus
import FerryModel
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How a scripted drag begins (``FerryClient/beginDrag(fromScene:options:)``).
public struct DragOptions: Sendable {
    /// Where the drag starts, in desktop coordinates; nil is the source scene's centre.
    public var location: Point?
    /// Whether the user asks for a move (the source app may still refuse it).
    public var allowsMove: Bool
    /// Whether only the source app's scenes may be entered.
    public var restrictedToApp: Bool
    /// Which of the source scene's draggable things, when the source app provides the items (the
    /// app decides what the index means; nil is its main one).
    public var item: Int?
    /// The items: nil lets the source app provide them (`ProvideDragItems`); otherwise the caller
    /// writes these right after the drag begins (promising large ones when the client is
    /// registered) and must stay connected to serve them until the drag ends.
    public var providers: [ItemProvider]?
    /// The items' previews, one per item from the first, set right after the items are written
    /// (`DragManager1.SetPreviews`; they replace any the source app set); empty sets none.
    public var previews: [DragPreview?]

    /// Makes options.
    public init(location: Point? = nil, allowsMove: Bool = false, restrictedToApp: Bool = false,
                item: Int? = nil, providers: [ItemProvider]? = nil, previews: [DragPreview?] = []) {
        self.location = location
        self.allowsMove = allowsMove
        self.restrictedToApp = restrictedToApp
        self.item = item
        self.providers = providers
        self.previews = previews
    }
}

/// The answer to one move of a drag: the proposal where it is now.
///
/// D-Bus: the reply of `org.ferry.DragSession1.Move`.
public struct DragMove: Sendable, Hashable {
    /// The proposal there: cancel (nothing accepts here), forbidden, copy or move, precise or not.
    public let proposal: DropProposal
    /// The scene under the drag, nil for none.
    public let target: String?
    /// The half of the screen a drop here would open a new scene in, nil when it would not.
    public let edge: ScenePlacement?

    /// Makes a move's answer.
    public init(proposal: DropProposal, target: String? = nil, edge: ScenePlacement? = nil) {
        self.proposal = proposal
        self.target = target
        self.edge = edge
    }
}

/// How a drop ended.
///
/// D-Bus: the reply of `org.ferry.DragSession1.Drop`.
public struct DragOutcome: Sendable, Hashable {
    /// The final operation (copy or move when the items were transferred).
    public let operation: DropOperation
    /// The scene that performed the drop, if one did.
    public let target: String?
    /// The target's one-line summary of what it did.
    public let message: String?
    /// The types the target read.
    public let types: [String]
    /// The scene an edge drop opened.
    public let newSession: String?
    /// The app whose scene an edge drop opened.
    public let app: String?
    /// Why the drag ended as cancel or forbidden.
    public let reason: String?

    /// Makes an outcome.
    public init(operation: DropOperation, target: String? = nil, message: String? = nil, types: [String] = [],
                newSession: String? = nil, app: String? = nil, reason: String? = nil) {
        self.operation = operation
        self.target = target
        self.message = message
        self.types = types
        self.newSession = newSession
        self.app = app
        self.reason = reason
    }
}

/// A running drag this client began (the broker calls this client "the initiator"): move it,
/// add items, drop or cancel. After the drop or cancel the session is gone and its calls are
/// `.notFound`. The broker also ends a drag by itself (its source app left, a minute without a
/// call); items this client promised for it are kept until ``drop()`` or ``cancel()`` is called
/// — call one even then (it fails with `.notFound`).
///
/// D-Bus: `org.ferry.DragSession1` at `/org/ferry/Drag/<n>`.
public final class DragSession: Sendable {
    static let interface: InterfaceName = "org.ferry.DragSession1"

    /// The drag's number (`"7"`).
    public let id: String
    /// The session's object path (`/org/ferry/Drag/7`).
    public let path: ObjectPath
    /// The drag pasteboard's name (`org.ferry.drag.7`).
    public let pasteboardName: String
    let client: FerryClient
    let pasteboardPath: ObjectPath

    init(client: FerryClient, id: String, path: ObjectPath, pasteboardName: String, pasteboardPath: ObjectPath) {
        self.client = client
        self.id = id
        self.path = path
        self.pasteboardName = pasteboardName
        self.pasteboardPath = pasteboardPath
    }

    /// The drag pasteboard (its items' metadata can be read while the drag runs).
    var pasteboard: Pasteboard { Pasteboard(source: .client(client), name: pasteboardName, path: pasteboardPath) }

    /// Moves the drag to `location` (desktop coordinates) and returns the proposal there, once
    /// the target scene's app has answered.
    /// - Throws: `FerryError`: `.invalidArgument` for a location that is not finite, `.notFound`
    ///   when the drag has ended, `.permissionDenied` when this client did not begin it,
    ///   `.noBroker`.
    ///
    /// D-Bus: `org.ferry.DragSession1.Move`.
    public func move(to location: Point) async throws(FerryError) -> DragMove {
        guard location.x.isFinite, location.y.isFinite else {
            throw FerryError(.invalidArgument, "location: \(location) is not a finite point")
        }
        // Over the direct connection when there is one: a drag moves many times a second.
        let reply = try await FerryError.bridging {
            try await client.callHot(path: path, interface: Self.interface, member: "Move",
                                     body: [.structure([.double(location.x), .double(location.y)])], timeout: .seconds(30))
        }
        guard reply.count == 4, case .string(let operationName) = reply[0], case .boolean(let precise) = reply[1],
              case .string(let target) = reply[2], case .string(let edgeName) = reply[3],
              let operation = DropOperation(name: operationName) else {
            throw FerryError(.bus, "DragSession1.Move answered with an unexpected reply")
        }
        return DragMove(proposal: DropProposal(operation: operation, isPrecise: precise),
                        target: target.isEmpty ? nil : target, edge: ScenePlacement(rawValue: edgeName))
    }

    /// Adds items to the running drag (Apple's adding items to a drag session); large
    /// representations are promised when the client is registered, and must be served until the
    /// drag ends.
    /// - Throws: `FerryError`: `.invalidArgument` (an empty item, a drag that no longer takes
    ///   items), `.tooLarge` (over the drag's 16 MiB of held bytes), `.permissionDenied`,
    ///   `.notFound` (the drag ended), `.noBroker`.
    ///
    /// D-Bus: `org.ferry.Pasteboard1.SetItems` with `append` on the drag pasteboard.
    public func addItems(_ providers: [ItemProvider]) async throws(FerryError) {
        guard !providers.isEmpty else { return }
        try await pasteboard.writeDragItems(providers, append: true)
    }

    /// Drops at the last location: the target performs (reading the items) and concludes, or an
    /// edge drop opens a new scene, or the drag ends as cancel or forbidden.
    /// - Returns: how the drag ended.
    /// - Throws: `FerryError`: `.notFound` when the drag has already ended, `.permissionDenied`,
    ///   `.timeout`, `.noBroker`.
    ///
    /// D-Bus: `org.ferry.DragSession1.Drop`.
    public func drop() async throws(FerryError) -> DragOutcome {
        let reply: [DBusValue]
        do {
            reply = try await call("Drop", timeout: .seconds(90))
        } catch {
            // Failed or not, the drag is over (`.notFound`: it ended already; the broker ends a
            // drag it cannot drop): its promises go.
            await retirePromises()
            throw error
        }
        await retirePromises()
        guard let value = reply.first else { throw FerryError(.bus, "DragSession1.Drop answered nothing") }
        return try Self.outcome(value)
    }

    /// Ends the drag as cancel.
    /// - Throws: `FerryError`: `.notFound` when the drag has already ended, `.permissionDenied`,
    ///   `.noBroker`.
    ///
    /// D-Bus: `org.ferry.DragSession1.Cancel`.
    public func cancel() async throws(FerryError) {
        do {
            _ = try await call("Cancel")
        } catch {
            await retirePromises()  // `.notFound`: the drag ended already
            throw error
        }
        await retirePromises()
    }

    /// Lets the promised providers of this drag go (after their 60 s grace for reads in flight).
    /// A drag the broker ends by itself (its source left, 60 s without a call) keeps them until
    /// ``drop()`` or ``cancel()`` is called, which then fails with `.notFound`.
    func retirePromises() async {
        client.promises.reconcile(path: pasteboardPath, live: [])
    }

    /// Calls a `org.ferry.DragSession1` method on this session.
    private func call(_ member: MemberName, _ body: [DBusValue] = [], timeout: Duration = .seconds(30))
        async throws(FerryError) -> [DBusValue] {
        try await FerryError.bridging {
            try await client.connection.call(destination: FerryClient.brokerName, path: path, interface: Self.interface,
                                             member: member, body: body, timeout: timeout)
        }
    }

    /// An outcome from `Drop`'s `a{sv}`.
    /// - Throws: `FerryError` `.bus` for a malformed one.
    static func outcome(_ value: DBusValue) throws(FerryError) -> DragOutcome {
        let dictionary: [String: DBusValue]
        do { dictionary = try [String: DBusValue](dbusValue: value.unwrappingVariants) } catch {
            throw FerryError(.bus, "DragSession1.Drop answered a malformed outcome")
        }
        func text(_ key: String) -> String? {
            guard case .string(let value)? = dictionary[key]?.unwrappingVariants, !value.isEmpty else { return nil }
            return value
        }
        guard let name = text("operation"), let operation = DropOperation(name: name) else {
            throw FerryError(.bus, "DragSession1.Drop answered an outcome without a valid operation")
        }
        let types = (try? dictionary["types"]?.unwrappingVariants.get([String].self)) ?? []
        return DragOutcome(operation: operation, target: text("target"), message: text("message"), types: types,
                           newSession: text("newSession"), app: text("app"), reason: text("reason"))
    }
}
