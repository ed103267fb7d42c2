import DBus
import FerryModel
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the broker's `org.ferry.Client1` drag and drop calls do to the app, as scene delegate
/// calls (UIDragInteraction / UIDropInteraction delegates). The broker calls one app in order,
/// one call at a time, so these do not overlap — unless a call outlives the broker's timeout
/// (250 ms for DropEntered/DropUpdated), after which the next one comes in while it still runs.
/// `Moved` signals of drags from this app reach
/// ``SceneDelegate/scene(_:dragSessionDidMove:to:operation:)`` from a watch of their own.
extension Application {
    static let dragSessionInterface: InterfaceName = "org.ferry.DragSession1"

    // MARK: Source

    /// `ProvideDragItems`: the delegate's `itemsForBeginning`, written on the drag pasteboard
    /// (large representations promised), and their previews set (`DragManager1.SetPreviews`);
    /// then the drag's `Moved` signal from `broker` (the unique name of the broker running the
    /// drag) is watched.
    /// - Returns: `count`, `allowsMove`, `restrictedToApp`.
    /// - Throws: `FerryError` from the write (`.tooLarge`, `.invalidArgument` for an empty item or
    ///   more previews than items …).
    func provideDragItems(_ drag: String, scene: Scene, pasteboard path: ObjectPath, request: DragRequest,
                          broker: BusName?) async throws(FerryError) -> [String: DBusValue] {
        guard let name = PasteboardName.name(fromObjectPath: path.rawValue) else {
            throw FerryError(.invalidArgument, "pasteboard: \(path.rawValue) is not a pasteboard's object path")
        }
        let items = await scene.delegate.scene(scene, itemsForBeginning: request)
        var result: [String: DBusValue] = [
            "count": .uint32(UInt32(clamping: items.providers.count)),
            "allowsMove": .boolean(items.allowsMoveOperation),
            "restrictedToApp": .boolean(items.restrictedToApp),
        ]
        guard !items.providers.isEmpty else {
            result["count"] = .uint32(0)
            return result
        }
        let pasteboard = Pasteboard(source: .client(client), name: name, path: path)
        try await pasteboard.writeDragItems(items.providers, append: false)
        if items.previews.contains(where: { $0 != nil }) {
            guard items.previews.count <= items.providers.count else {
                throw FerryError(.invalidArgument, "previews: \(items.previews.count) for \(items.providers.count) items (one per item)")
            }
            try await client.setDragPreviews(items.previews, drag: drag)
        }
        await watchDrag(drag, from: scene, broker: broker)
        return result
    }

    /// Starts delivering the drag's `Moved` signals to the source scene's delegate (subscribed
    /// before this returns). Without a subscription (a bad id, a closed connection) the drag
    /// still runs; its moves are just not heard.
    ///
    /// `broker` is the unique name of the broker running the drag: a broker started later
    /// numbers its drags from 1 again, and its drag with this number is someone else's.
    func watchDrag(_ drag: String, from scene: Scene, broker: BusName?) async {
        guard drag.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), !drag.isEmpty,
              let path = try? ObjectPath("\(FerryClient.dragPath.rawValue)/\(drag)") else { return }
        let rule = MatchRule(sender: broker ?? FerryClient.brokerName, interface: Self.dragSessionInterface,
                             member: "Moved", path: path)
        guard let subscription = try? await client.connection.subscribe(to: rule) else {
            drags.addSource(drag, scene: scene.persistentIdentifier, watch: nil, subscription: nil)
            return
        }
        let watch = Task { [weak scene] in
            do {
                for try await message in subscription {
                    guard let scene else { break }
                    guard let (location, operation) = Self.moved((try? message.body) ?? []) else { continue }
                    await scene.delegate.scene(scene, dragSessionDidMove: drag, to: location, operation: operation)
                }
            } catch {}
        }
        drags.addSource(drag, scene: scene.persistentIdentifier, watch: watch, subscription: subscription)
    }

    /// The location and operation of a `Moved` signal's body `((dd), s, s)`.
    static func moved(_ body: [DBusValue]) -> (Point, DropOperation)? {
        guard body.count == 3, case .structure(let fields) = body[0], fields.count == 2,
              case .double(let x) = fields[0], case .double(let y) = fields[1],
              case .string(let name) = body[2], let operation = DropOperation(name: name) else { return nil }
        return (Point(x: x, y: y), operation)
    }

    /// `DragEnded`: the watch of the drag's moves stops (after its last delegate call), then
    /// the source scene's delegate hears the end. A scene that is gone hears nothing.
    func dragEnded(_ end: DragEnd, scene identifier: String) async {
        await drags.endSource(end.id)
        if let scene = scene(for: identifier) {
            await scene.delegate.scene(scene, dragSessionDidEnd: end)
        }
        await releasePromises(ofDrag: end.id)
    }

    /// The broker that ran this app's drags is gone: they are forgotten (their `Moved` watches
    /// stop) and the promised providers of those from its scenes go.
    func forgetDrags() async {
        for drag in drags.reset() { await releasePromises(ofDrag: drag) }
    }

    /// The drag's pasteboard is gone: its promised providers may go (after reads in flight).
    private func releasePromises(ofDrag drag: String) async {
        if let path = try? ObjectPath(PasteboardName.objectPath("org.ferry.drag.\(drag)")) {
            client.promises.reconcile(path: path, live: [])
        }
    }

    // MARK: Target

    /// `DropEntered` (`entering`) / `DropUpdated`: canHandle, then (on the first handled call)
    /// `dropSessionDidEnter`, then `dropSessionDidUpdate`'s proposal, a move turned into copy when
    /// the drag may not move here. Not handled: cancel when the scene accepts nothing at all,
    /// forbidden otherwise.
    func dropProposal(for session: DropSession, in scene: Scene, entering: Bool) async -> DropProposal {
        let drag = session.id, identifier = scene.persistentIdentifier
        var wasHandled = false
        if !entering, let known = drags.drop(drag, scene: identifier) { wasHandled = known.handled }
        guard scene.delegate.scene(scene, canHandle: session) else {
            drags.setDrop(.init(session: session, handled: wasHandled), drag: drag, scene: identifier)
            let accepting = scene.delegate.pasteConfiguration(for: scene)?.acceptableTypeIdentifiers ?? []
            return accepting.isEmpty ? .cancel : .forbidden
        }
        drags.setDrop(.init(session: session, handled: true), drag: drag, scene: identifier)
        if !wasHandled { await scene.delegate.scene(scene, dropSessionDidEnter: session) }
        let proposal = await scene.delegate.scene(scene, dropSessionDidUpdate: session)
        return proposal.delivered(allowsMove: session.allowsMoveOperation)
    }

    /// `DropExited`: the delegate's `dropSessionDidExit` when it handled the drag. The session is
    /// kept for the end.
    func dropExited(_ drag: String, scene: Scene) async {
        guard let known = drags.drop(drag, scene: scene.persistentIdentifier), known.handled else { return }
        await scene.delegate.scene(scene, dropSessionDidExit: known.session)
    }

    /// `PerformDrop`: the delegate's `performDrop` with providers that read the drag pasteboard
    /// as a user action (allowed during this call only).
    /// - Returns: `message` and `types` (what was read).
    /// - Throws: what the delegate threw (the drag then ends as cancel), `FerryError` from the
    ///   pasteboard's metadata.
    func performDrop(_ session: DropSession, operation: DropOperation, in scene: Scene)
        async throws(FerryError) -> [String: DBusValue] {
        let identifier = scene.persistentIdentifier
        let handled = drags.drop(session.id, scene: identifier)?.handled ?? false
        drags.setDrop(.init(session: session, handled: true), drag: session.id, scene: identifier)
        if !handled { await scene.delegate.scene(scene, dropSessionDidEnter: session) }
        let path = try FerryError.bridgingSync { try ObjectPath(PasteboardName.objectPath(session.pasteboardName)) }
        let pasteboard = Pasteboard(source: .client(client), name: session.pasteboardName, path: path)
        let items = try await pasteboard.items
        let reads = PasteReads()
        let providers = items.enumerated().map { index, item in
            reads.provider(for: item, index: index, on: pasteboard, changeCount: nil, aggregate: session.aggregate)
        }
        let message: String
        do {
            message = try await scene.delegate.scene(scene, performDrop: session, operation: operation,
                                                     itemProviders: providers)
        } catch {
            throw FerryError.converting(error)
        }
        return [
            "message": .string(message),
            "types": .array(of: .string, reads.types.map(DBusValue.string)),
        ]
    }

    /// `ConcludeDrop`: the delegate's `concludeDrop`.
    func concludeDrop(_ drag: String, scene: Scene) async {
        guard let known = drags.drop(drag, scene: scene.persistentIdentifier), known.handled else { return }
        await scene.delegate.scene(scene, concludeDrop: known.session)
    }

    /// `DropEnded`: the session is forgotten; the delegate's `dropSessionDidEnd` when it handled
    /// the drag.
    func dropEnded(_ drag: String, scene identifier: String, operation: DropOperation) async {
        guard let known = drags.removeDrop(drag, scene: identifier), known.handled,
              let scene = scene(for: identifier) else { return }
        await scene.delegate.scene(scene, dropSessionDidEnd: known.session, operation: operation)
    }
}
