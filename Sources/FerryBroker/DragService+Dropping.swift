#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import BrokerCore
import DBus
import FerryBus
import FerryModel
import Logging

extension DragService {
    /// How a drag ended, for `Drop`'s outcome, the source's `DragEnded` and `LastDrag`.
    struct Ending: Sendable {
        var operation: DropOperation
        /// The scene that performed.
        var target: String?
        var message: String?
        var types: [String] = []
        /// An edge drop's new scene and its app.
        var newSession: String?
        var app: String?
        /// Why it ended as cancel or forbidden.
        var reason: String?

        /// Drop's `outcome`.
        var outcome: DBusValue {
            var entries: [String: DBusValue] = ["operation": .string(operation.name)]
            if let target { entries["target"] = .string(target) }
            if let message { entries["message"] = .string(message) }
            if target != nil { entries["types"] = .array(of: .string, types.map(DBusValue.string)) }
            if let newSession { entries["newSession"] = .string(newSession) }
            if let app { entries["app"] = .string(app) }
            if let reason { entries["reason"] = .string(reason) }
            return entries.dbusValue
        }
    }

    /// `Drop`: the target under the drag performs (it proposed copy or move), or an edge drop
    /// opens a scene, or the drag ends as cancel (forbidden when that was the proposal). Then the
    /// drag ends.
    /// - Returns: the outcome (`Drop`'s reply).
    /// - Throws: `FerryModelError` `.notFound` (ended), `.permissionDenied` (not the initiator).
    func drop(_ number: Int, sender: String) async throws -> DBusValue {
        var session = try await acquire(number, sender: sender)
        session.state = .performing
        sessions[number]?.state = .performing
        records[number]?.state = .performing
        pasteboards.updateTransientAccess(session.pasteboard) { $0.acceptsWrites = false }
        let target = session.offersEdge ? "edge:\(session.edgeZone?.rawValue ?? "")" : session.current?.id ?? ""
        records[number]?.append(DragRecord.Step(location: session.location, target: target,
                                                operation: session.proposal.operation))
        let ending: Ending
        if session.offersEdge, let edge = session.edgeZone {
            // The move promised a new scene: the scene beneath (in a split view there always is
            // one, the source's own included) refused the items, so it does not perform.
            ending = await openAtEdge(session, edge: edge)
        } else if let scene = session.current, session.proposal.operation.transfersItems {
            ending = await perform(session, on: scene)
        } else if let edge = session.edgeZone {
            ending = await openAtEdge(session, edge: edge)
        } else if session.proposal.operation == .forbidden, let scene = session.current, !scene.isInteractive {
            ending = Ending(operation: .forbidden, reason: "scene \(scene.id) of \(scene.appID) is on the external display, which takes no drops")
        } else if session.proposal.operation == .forbidden, let scene = session.current {
            ending = Ending(operation: .forbidden, reason: "scene \(scene.id) of \(scene.appID) refuses these items")
        } else {
            ending = Ending(operation: .cancel, reason: session.isAppIcon
                ? "an app's icon opens a scene only at a screen's edge" : "nothing accepts the drop here")
        }
        await finish(number, ending)
        logger.info("""
            drag \(number) dropped: \(ending.operation)\(ending.target.map { " on \($0)" } ?? "")\
            \(ending.newSession.map { " (new scene \($0))" } ?? "")\(ending.reason.map { ": \($0)" } ?? "")
            """)
        return ending.outcome
    }

    /// `PerformDrop` at `scene`, which may read the items during the call only; then
    /// `ConcludeDrop`. A failure ends the drag as cancel with its error as reason.
    private func perform(_ session: DragSession, on scene: SceneService.DragTarget) async -> Ending {
        let operation = session.proposal.operation
        let items = await currentItems(session.number, fresh: true)
        let info = dropInfo(session, scene, items: items, at: session.location, operation: operation)
        let alreadyReader = scene.uniqueName == session.sourceUniqueName
        pasteboards.updateTransientAccess(session.pasteboard) { $0.contentReaders.insert(scene.uniqueName) }
        let reply: [DBusValue]
        do {
            reply = try await scene.callbacks.call("PerformDrop", [.string(session.id), .string(scene.id), info],
                                                   timeout: Self.performTimeout)
        } catch {
            if !alreadyReader {
                pasteboards.updateTransientAccess(session.pasteboard) { $0.contentReaders.remove(scene.uniqueName) }
            }
            let message = (error as? FerryModelError)?.message ?? "\(error)"
            return Ending(operation: .cancel, reason: "the drop failed in \(scene.appID): \(message)")
        }
        if !alreadyReader {
            pasteboards.updateTransientAccess(session.pasteboard) { $0.contentReaders.remove(scene.uniqueName) }
        }
        var ending = Ending(operation: operation, target: scene.id)
        if reply.count == 1, let result = try? VariantDictionary(dbusValue: reply[0].unwrappingVariants) {
            ending.message = try? WireReader(dbus: result, path: "result").string("message")
            if case .array(_, let elements)? = result["types"]?.unwrappingVariants {
                ending.types = elements.compactMap { if case .string(let type) = $0.unwrappingVariants { type } else { nil } }
            }
        }
        _ = try? scene.callbacks.enqueue("ConcludeDrop", [.string(session.id), .string(scene.id)], timeout: Self.noticeTimeout)
        return ending
    }

    /// An edge drop: the app that can show the items opens a scene in that half of the screen.
    private func openAtEdge(_ session: DragSession, edge: ScenePlacement) async -> Ending {
        let found = await edgeDropPlan(session)
        guard let plan = found.plan else {
            return Ending(operation: .cancel, reason: found.reason ?? "no app can show these items")
        }
        if let scene = session.current { exit(session.number, scene) }
        do {
            let id = try await scenes.openSceneForDrop(appID: plan.appID, activity: plan.activity, urls: plan.urls,
                                                       placement: edge, screen: session.screen,
                                                       sourceUniqueName: session.sourceUniqueName ?? session.initiator)
            return Ending(operation: .copy, newSession: id, app: plan.appID)
        } catch {
            let message = (error as? FerryModelError)?.message ?? "\(error)"
            return Ending(operation: .cancel, app: plan.appID, reason: "\(plan.appID) could not open a scene: \(message)")
        }
    }

    /// `Cancel`: the drag ends as cancel.
    /// - Throws: `FerryModelError` `.notFound` (ended), `.permissionDenied` (not the initiator).
    func cancel(_ number: Int, sender: String) async throws {
        _ = try await acquire(number, sender: sender)
        logger.info("drag \(number) cancelled by its initiator")
        await finish(number, Ending(operation: .cancel, reason: "cancelled"))
    }

    /// Ends a drag: DropExited at a scene still under it that did not perform, DropEnded at
    /// every scene it entered, DragEnded at the source; its pasteboard and object go,
    /// `DragEnded` is emitted and its record kept for LastDrag. Calls waiting for it fail with
    /// NotFound.
    func finish(_ number: Int, _ ending: Ending) async {
        guard var session = sessions.removeValue(forKey: number) else { return }
        session.state = .ended
        // Recorded before anyone hears of the end, so a LastDrag that follows a DragEnded sees it.
        var record = records.removeValue(forKey: number) ?? DragRecord(number: number, sourceApp: session.sourceApp,
                                                                       sourceSession: session.sourceSession,
                                                                       isAppIcon: session.isAppIcon)
        record.state = .ended
        record.operation = ending.operation
        record.target = ending.target
        record.newSession = ending.newSession
        record.reason = ending.operation.transfersItems ? nil : ending.reason
        if lastNumber == number { lastEnded = record }
        dropPreviews(number)
        if let scene = session.current, scene.id != ending.target, session.entered[scene.id]?.exited == false {
            _ = try? scene.callbacks.enqueue("DropExited", [.string(session.id), .string(scene.id)],
                                             timeout: Self.noticeTimeout)
        }
        for entered in session.entered.values.sorted(by: { $0.target.id < $1.target.id }) {
            _ = try? entered.target.callbacks.enqueue("DropEnded", [
                .string(session.id), .string(entered.target.id), .string(ending.operation.name),
            ], timeout: Self.noticeTimeout)
        }
        if !session.isAppIcon, let callbacks = session.sourceCallbacks {
            var info: [String: DBusValue] = [:]
            if let target = ending.target, session.entered[target]?.target.appID == session.sourceApp {
                info["target"] = .string(target)
            }
            if let newSession = ending.newSession { info["newSession"] = .string(newSession) }
            _ = try? callbacks.enqueue("DragEnded", [
                .string(session.id), .string(session.sourceSession), .string(ending.operation.name), info.dbusValue,
            ], timeout: Self.noticeTimeout)
        }
        connection.unexport(session.path)
        await pasteboards.removeTransientPasteboard(session.pasteboard)
        try? connection.emit(path: Self.path, interface: Self.interfaceName, member: "DragEnded",
                             body: [.objectPath(session.path), .string(ending.operation.name)])
        for waiter in waiters.removeValue(forKey: number) ?? [] { waiter.resume() }
    }
}
