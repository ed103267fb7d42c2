import DBus
import FerryBus
import FerryModel

extension FerryClient {
    /// Sets the previews of drag `id`'s items, one per item from the first (nil: that item has
    /// none), replacing those set before.
    /// - Throws: `FerryError`: `.permissionDenied` (not the drag's source app or initiator, or
    ///   the drop has started), `.notFound` (the drag ended), `.invalidArgument` (more previews
    ///   than items), `.noBroker`.
    ///
    /// D-Bus: `org.ferry.DragManager1.SetPreviews`.
    func setDragPreviews(_ previews: [DragPreview?], drag id: String) async throws(FerryError) {
        let path = try Self.dragSessionPath(id)
        let list = DragPreview.wireList(previews).map(\.dbusValue)
        _ = try await FerryError.bridging {
            try await connection.call(destination: Self.brokerName, path: Self.dragPath, interface: Self.dragInterface,
                                      member: "SetPreviews", body: [.objectPath(path), .array(of: "a{sv}", list)],
                                      timeout: .seconds(30))
        }
    }

    /// The previews of drag `id`'s items, one per item up to the last that has one.
    /// - Throws: `FerryError`: `.permissionDenied` (neither its source, its initiator, nor an
    ///   app whose scene it entered), `.notFound` (the drag ended), `.bus` for a preview that
    ///   breaks the limits (the broker checks them: this one is not ferryd), `.noBroker`.
    ///
    /// D-Bus: `org.ferry.DragManager1.Previews`.
    func dragPreviews(drag id: String) async throws(FerryError) -> [DragPreview?] {
        let path = try Self.dragSessionPath(id)
        let reply = try await FerryError.bridging {
            try await connection.call(destination: Self.brokerName, path: Self.dragPath, interface: Self.dragInterface,
                                      member: "Previews", body: [.objectPath(path)], timeout: .seconds(30))
        }
        guard let value = reply.first else { throw FerryError(.bus, "DragManager1.Previews answered nothing") }
        do {
            return try DragPreview.list(try WireReader.readers(dbus: value, path: "previews"))
        } catch {
            throw FerryError(.bus, "DragManager1.Previews answered \(error)")
        }
    }

    /// `/org/ferry/Drag/<id>` for a drag's number.
    static func dragSessionPath(_ id: String) throws(FerryError) -> ObjectPath {
        guard !id.isEmpty, id.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              let path = try? ObjectPath("\(dragPath.rawValue)/\(id)") else {
            throw FerryError(.invalidArgument, "drag: \"\(id.printableLine(limit: 20))\" is not a drag's number")
        }
        return path
    }
}

extension DragSession {
    /// Sets the previews of the drag's items (Apple's `UIDragItem.previewProvider`), one per item
    /// from the first, replacing those set before: what targets see while the drag is over them,
    /// and what pictures of the desktop draw at its location.
    /// - Parameter previews: one per item (nil: that item has none); at most as many as items.
    /// - Throws: `FerryError`: `.permissionDenied` (this client is neither the initiator nor the
    ///   source app, or the drop has started), `.notFound` (the drag ended), `.invalidArgument`
    ///   (more previews than items), `.noBroker`.
    ///
    /// D-Bus: `org.ferry.DragManager1.SetPreviews`.
    public func setPreviews(_ previews: [DragPreview?]) async throws(FerryError) {
        try await client.setDragPreviews(previews, drag: id)
    }
}

extension DropSession {
    /// The previews of the drag's items (what `UIDropSession.items`' `previewProvider` shows a
    /// target while the drag is over it), one per item up to the last that has one: a title
    /// and/or PNG image bytes, checked against ``DragPreview``'s limits. Of the items' content
    /// the only thing a target sees before it performs the drop. Asked of the broker on each
    /// call: the source may change them while the drag runs.
    /// - Throws: `FerryError`: `.unavailable` for a session the library did not make from a
    ///   broker's call, `.notFound` once the drag has ended, `.permissionDenied`, `.noBroker`.
    ///
    /// D-Bus: `org.ferry.DragManager1.Previews`.
    public func previews() async throws(FerryError) -> [DragPreview?] {
        guard let client = previewSource.client else {
            throw FerryError(.unavailable, "drag \(id)'s previews: this session did not come from a broker")
        }
        return try await client.dragPreviews(drag: id)
    }
}

/// The client a ``DropSession`` asks for its previews. Equal to every other and hashed as
/// nothing, so that a session keeps comparing by its value.
final class DropPreviewSource: Sendable, Hashable {
    /// The client that received the broker's call; weak, as the session may outlive it.
    weak let client: FerryClient?

    /// A source asking `client` (nil: none).
    init(_ client: FerryClient?) {
        self.client = client
    }

    static func == (lhs: DropPreviewSource, rhs: DropPreviewSource) -> Bool { true }
    func hash(into hasher: inout Hasher) {}
}
