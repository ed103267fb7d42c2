import DBus
import FerryModel
import Synchronization

extension FerryClient {
    static let dragPath: ObjectPath = "/org/ferry/Drag"
    static let dragInterface: InterfaceName = "org.ferry.DragManager1"

    /// Begins a drag from a connected scene (a scripted drag: this client is its initiator and
    /// moves, drops or cancels it through the returned session).
    ///
    /// With `options.providers` nil the source app provides the items (its scene delegate's
    /// ``SceneDelegate/scene(_:itemsForBeginning:)``); otherwise this client writes them on the
    /// drag pasteboard right after the drag begins (large ones promised when the client is
    /// registered: it must stay connected until the drag ends). An ``Application`` beginning a
    /// drag from one of its own scenes asks that scene's delegate itself; then the `allowsMove`
    /// and `restrictedToApp` of its ``DragItems`` cannot change the drag any more: pass them in
    /// `options`.
    /// - Parameters:
    ///   - persistentIdentifier: the source scene.
    ///   - options: start location, move, restriction, item, providers.
    /// - Returns: the running drag.
    /// - Throws: `FerryError`: `.notFound` (an unknown or not-connected scene; "nothing to drag"
    ///   when the source provides no items), `.timeout` (the source app did not answer in 5 s),
    ///   `.invalidArgument` (a bad option, an empty item), `.tooLarge`, `.noBroker`.
    ///
    /// D-Bus: `org.ferry.DragManager1.BeginDrag`, then `org.ferry.Pasteboard1.SetItems` when
    /// the caller provides the items, and `org.ferry.DragManager1.SetPreviews` for previews.
    public func beginDrag(fromScene persistentIdentifier: String, options: DragOptions = DragOptions())
        async throws(FerryError) -> DragSession {
        guard !persistentIdentifier.isEmpty else {
            throw FerryError(.invalidArgument, "the source scene's persistent identifier is empty")
        }
        var wire: [String: DBusValue] = [
            "allowsMove": .boolean(options.allowsMove),
            "restrictedToApp": .boolean(options.restrictedToApp),
        ]
        if let location = options.location { wire["location"] = try Self.dragLocation(location) }
        if let item = options.item {
            guard let index = UInt32(exactly: item) else { throw FerryError(.invalidArgument, "item: \(item) is not an index") }
            wire["item"] = .uint32(index)
        }
        if let providers = options.providers {
            guard !providers.isEmpty else { throw FerryError(.invalidArgument, "providers: nothing to drag") }
            wire["items"] = .string("initiator")
        }
        // The source app beginning a drag from its own scene writes its items itself (the broker
        // does not ask it), and hears the drag's moves.
        let application = Application.of(self)
        let ownScene = application?.scene(for: persistentIdentifier)
        if ownScene != nil { wire["items"] = .string("initiator") }
        let session = try await callBeginDrag(persistentIdentifier, wire)
        if let application, let ownScene, options.providers == nil {
            try await provideOwnItems(session, application: application, scene: ownScene, options: options)
            try await setPreviews(options.previews, of: session)
            return session
        }
        if let providers = options.providers {
            do {
                try await session.pasteboard.writeDragItems(providers, append: false)
            } catch {
                try? await session.cancel()
                throw error
            }
        }
        try await setPreviews(options.previews, of: session)
        if let application, let ownScene {
            await application.watchDrag(session.id, from: ownScene, broker: state.withLock { $0.brokerOwner })
        }
        return session
    }

    /// Sets `previews` on a drag that just began (nothing when there are none); a failure
    /// cancels the drag.
    /// - Throws: `FerryError` from `SetPreviews`.
    private func setPreviews(_ previews: [DragPreview?], of session: DragSession) async throws(FerryError) {
        guard previews.contains(where: { $0 != nil }) else { return }
        do {
            try await session.setPreviews(previews)
        } catch {
            try? await session.cancel()
            throw error
        }
    }

    /// Begins a drag of an app's icon: no items, no source scene; only a drop at a screen's edge
    /// does something (the app's default configuration opens there).
    /// - Parameters:
    ///   - appID: the dragged app (a known app).
    ///   - location: where the drag starts, desktop coordinates.
    /// - Throws: `FerryError`: `.notFound` for an unknown app, `.invalidArgument`, `.noBroker`.
    ///
    /// D-Bus: `org.ferry.DragManager1.BeginDrag` with the option `app`.
    public func beginAppIconDrag(app appID: String, at location: Point) async throws(FerryError) -> DragSession {
        guard !appID.isEmpty else { throw FerryError(.invalidArgument, "app: the app id is empty") }
        return try await callBeginDrag("", ["app": .string(appID), "location": try Self.dragLocation(location)])
    }

    /// The most recent drag (running or ended), nil when there was none since the broker started.
    /// - Throws: `FerryError` `.noBroker`, `.bus` for a malformed answer.
    ///
    /// D-Bus: `org.ferry.DragManager1.LastDrag`.
    public func lastDrag() async throws(FerryError) -> DragRecord? {
        let reply = try await FerryError.bridging {
            try await connection.call(destination: Self.brokerName, path: Self.dragPath, interface: Self.dragInterface,
                                      member: "LastDrag", timeout: .seconds(30))
        }
        guard let value = reply.first,
              let dictionary = try? [String: DBusValue](dbusValue: value.unwrappingVariants) else {
            throw FerryError(.bus, "DragManager1.LastDrag answered with an unexpected signature")
        }
        return try DragRecord(dbus: dictionary)
    }

    /// The items of a drag this app begins from its own scene: its delegate's `itemsForBeginning`,
    /// as for a `ProvideDragItems` (the drag's moves are then watched). Nothing to drag, or a
    /// failed write, cancels the drag.
    /// - Throws: `FerryError` `.notFound` "nothing to drag", what the write throws.
    private func provideOwnItems(_ session: DragSession, application: Application, scene: Scene,
                                 options: DragOptions) async throws(FerryError) {
        let frame = scene.session.frame ?? .zero
        let location = options.location.map { Point(x: $0.x - frame.minX, y: $0.y - frame.minY) }
            ?? Point(x: frame.size.width / 2, y: frame.size.height / 2)
        let request = DragRequest(id: session.id, item: options.item ?? 0, location: location, wantsMove: options.allowsMove)
        let count: UInt32
        do {
            let result = try await application.provideDragItems(session.id, scene: scene, pasteboard: session.pasteboardPath,
                                                                request: request, broker: state.withLock { $0.brokerOwner })
            if case .uint32(let written)? = result["count"] { count = written } else { count = 0 }
        } catch {
            try? await session.cancel()
            throw error
        }
        guard count > 0 else {
            try? await session.cancel()
            throw FerryError(.notFound, "nothing to drag: the scene \(scene.persistentIdentifier) provides no items")
        }
    }

    /// Calls `BeginDrag` and makes the session from its answer.
    private func callBeginDrag(_ source: String, _ options: [String: DBusValue]) async throws(FerryError) -> DragSession {
        let reply = try await FerryError.bridging {
            try await connection.call(destination: Self.brokerName, path: Self.dragPath, interface: Self.dragInterface,
                                      member: "BeginDrag", body: [.string(source), options.dbusValue],
                                      timeout: .seconds(15))
        }
        guard reply.count == 2, case .objectPath(let path) = reply[0], case .objectPath(let pasteboardPath) = reply[1],
              let id = path.rawValue.split(separator: "/").last.map(String.init), !id.isEmpty else {
            throw FerryError(.bus, "DragManager1.BeginDrag answered with an unexpected reply")
        }
        let name = PasteboardName.name(fromObjectPath: pasteboardPath.rawValue) ?? "org.ferry.drag.\(id)"
        return DragSession(client: self, id: id, path: path, pasteboardName: name, pasteboardPath: pasteboardPath)
    }

    /// A `(dd)` location, checked to be finite.
    static func dragLocation(_ point: Point) throws(FerryError) -> DBusValue {
        guard point.x.isFinite, point.y.isFinite else {
            throw FerryError(.invalidArgument, "location: \(point) is not a finite point")
        }
        return .structure([.double(point.x), .double(point.y)])
    }
}
