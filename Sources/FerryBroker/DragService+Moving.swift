import BrokerCore
import DBus
import FerryModel
import Logging

extension DragService {
    /// `Move`: hit-tests the desktop at `location`, drives the scene there (DropExited at the
    /// one left, DropEntered or DropUpdated at the one under it) and answers with its proposal,
    /// or with an edge drop's copy. The source hears it through `Moved` (not awaited).
    ///
    /// The hot path of a drag (P5): one hop to the scene service for the hit test, one call to
    /// the target app, nothing stored.
    /// - Returns: operation, precise, target, edge (Move's reply).
    /// - Throws: `FerryModelError` `.notFound` (ended), `.permissionDenied` (not the initiator).
    func move(_ number: Int, to location: Point, sender: String) async throws -> [DBusValue] {
        let session = try await acquire(number, sender: sender)
        defer { release(number) }
        let hit = await scenes.dragHit(at: location)
        let under = hit.scene.flatMap { session.mayEnter($0.appID) ? $0 : nil }
        if let left = session.current, left.id != under?.id { exit(number, left) }
        var proposal = DropProposal.cancel
        if let under, !under.isInteractive {
            // The external display takes no drops: its scene is never asked, nor told.
            sessions[number]?.current = under
            proposal = .forbidden
        } else if let under {
            let entering = session.current?.id != under.id
            if entering {
                pasteboards.updateTransientAccess(session.pasteboard) { $0.metadataReaders.insert(under.uniqueName) }
                sessions[number]?.entered[under.id] = DragSession.Entered(target: under)
            }
            sessions[number]?.current = under
            let items = await currentItems(number, fresh: entering)
            proposal = await propose(entering ? "DropEntered" : "DropUpdated", session, under, items: items, at: location)
        } else {
            sessions[number]?.current = nil
        }
        guard sessions[number] != nil else { throw Self.gone(number) }
        var offersEdge = false
        if hit.edge != nil, !proposal.operation.transfersItems {
            offersEdge = await canOpenAtEdge(number)
            if offersEdge { proposal = DropProposal(operation: .copy) }
        }
        // The target may have gone away while it was asked.
        let target = sessions[number]?.current?.id ?? ""
        let edgeName = offersEdge ? hit.edge?.rawValue ?? "" : ""
        let step = DragRecord.Step(location: location, target: offersEdge ? "edge:\(edgeName)" : target,
                                   operation: proposal.operation)
        sessions[number]?.location = location
        sessions[number]?.proposal = proposal
        sessions[number]?.edgeZone = hit.edge
        sessions[number]?.screen = hit.screen
        sessions[number]?.offersEdge = offersEdge
        records[number]?.append(step)
        sessions[number]?.lastActivity = .now
        try? connection.emit(path: session.path, interface: Self.sessionInterfaceName, member: "Moved", body: [
            .structure([.double(location.x), .double(location.y)]), .string(target), .string(proposal.operation.name),
        ])
        return [.string(proposal.operation.name), .boolean(proposal.isPrecise), .string(target), .string(edgeName)]
    }

    /// Tells a scene the drag left it (`DropExited`, not awaited).
    func exit(_ number: Int, _ scene: SceneService.DragTarget) {
        guard sessions[number]?.entered[scene.id]?.exited == false else { return }
        sessions[number]?.entered[scene.id]?.exited = true
        _ = try? scene.callbacks.enqueue("DropExited", [.string(String(number)), .string(scene.id)],
                                         timeout: Self.noticeTimeout)
    }

    /// Asks the scene under the drag for its proposal (250 ms; no answer, a failure or an
    /// unknown operation count as forbidden), delivered as the drag allows: a move becomes a
    /// copy across apps or when the drag does not allow moving.
    func propose(_ member: MemberName, _ session: DragSession, _ target: SceneService.DragTarget, items: [StoredItem],
                 at location: Point) async -> DropProposal {
        let info = dropInfo(session, target, items: items, at: location)
        let reply: [DBusValue]
        do {
            reply = try await target.callbacks.call(member, [.string(session.id), .string(target.id), info],
                                                    timeout: Self.proposalTimeout, direct: true)
        } catch {
            return .forbidden
        }
        guard reply.count == 2, case .string(let name) = reply[0], case .boolean(let precise) = reply[1],
              let operation = DropOperation(name: name) else {
            logger.warning("answered Client1.\(member.rawValue) with (\(reply.map(\.signature.rawValue).joined())): counted as forbidden",
                           metadata: ["app": "\(target.appID)"])
            return .forbidden
        }
        return DropProposal(operation: operation, isPrecise: precise)
            .delivered(allowsMove: session.allowsMove(into: target.appID))
    }

    /// The drag pasteboard's items: read now when `fresh` or when the last read is older than
    /// ``itemsFreshness`` (items appended meanwhile show at the next read), else as last read.
    func currentItems(_ number: Int, fresh: Bool) async -> [StoredItem] {
        let now = ContinuousClock.now
        if !fresh, let cached = sessions[number]?.items, now - cached.at < Self.itemsFreshness { return cached.items }
        guard let pasteboard = sessions[number]?.pasteboard else { return [] }
        let items = (try? await pasteboards.transientItems(pasteboard)) ?? []
        sessions[number]?.items = (now, items)
        return items
    }

    /// The `info` of DropEntered, DropUpdated and PerformDrop for `target`.
    func dropInfo(_ session: DragSession, _ target: SceneService.DragTarget, items: [StoredItem], at location: Point,
                  operation: DropOperation? = nil) -> DBusValue {
        var types: [DBusValue] = []
        var seen: Set<ContentType> = []
        for item in items {
            let own = item.sourceAppID == target.appID
            for representation in item.representations where representation.visibility == .all || own {
                if seen.insert(representation.contentType).inserted {
                    types.append(.string(representation.contentType.identifier))
                }
            }
        }
        let isLocal = target.appID == session.sourceApp && !session.isAppIcon
        var entries: [String: DBusValue] = [
            "location": .structure([.double(location.x - target.frame.minX), .double(location.y - target.frame.minY)]),
            "types": .array(of: .string, types),
            "items": .uint32(UInt32(clamping: items.count)),
            "pasteboard": .string(session.pasteboard),
            "allowsMove": .boolean(session.allowsMove(into: target.appID)),
            "isLocal": .boolean(isLocal),
        ]
        if isLocal {
            entries["sourceApp"] = .string(session.sourceApp)
            entries["sourceSession"] = .string(session.sourceSession)
        }
        if let operation { entries["operation"] = .string(operation.name) }
        return entries.dbusValue
    }
}
