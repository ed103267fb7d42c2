import BrokerCore
import DBus
import FerryBus
import FerryModel
import Logging
import FerrySystem

extension ShareService {
    /// `Perform`: the activity performs with the share's items (a built-in inside ferryd, an
    /// app's through `Client1.PerformActivity`), then the share ends.
    /// - Returns: the completion (a failure inside the activity is a completion, not an error).
    /// - Throws: `FerryModelError` `.notFound` (ended, being performed, or the activity would
    ///   not be listed now), `.permissionDenied` (not the sharer), `.invalidArgument` (a bad option).
    func perform(_ id: String, type: ActivityType, options: VariantDictionary, caller: Caller) async throws -> ShareCompletion {
        let share = try share(id, sender: caller.uniqueName)
        let number = share.number
        guard !share.performing else {
            throw FerryModelError(.notFound, "share \(number) is performing an activity already")
        }
        // From here on Perform owns the share: EndShare, the idle timeout and the sharer leaving wait for it.
        shares[number]?.performing = true
        let candidate: Candidate
        do {
            let found = try await performableCandidates(share, reusing: share.able, only: type)
            guard let first = found.candidates.first else {
                let name = type.rawValue.printableLine(limit: 80)
                throw FerryModelError(.notFound, "\"\(name)\" is not an activity share \(number) can perform now", keyPath: "activity_type")
            }
            candidate = first
            if candidate.registration == nil { try BuiltInActivities.validate(type, options: options) }
            guard shares[number] != nil else { throw Self.ended(number) }
        } catch {
            // Not performed: the share is the sharer's again, unless a party left meanwhile. The
            // idle watch skipped it while Perform ran: let it look again.
            shares[number]?.performing = false
            if let ending = shares[number]?.endAfterPerform {
                await end(number, ending.completion, reason: ending.reason)
            }
            idleWake.signal()
            throw error
        }
        pasteboards.updateTransientAccess(share.pasteboard) { $0.acceptsWrites = false }
        let completion: ShareCompletion
        if let registration = candidate.registration {
            logger.debug("share \(number): \(registration.appID) performs \(type)")
            completion = await performApp(share, activity: type, registration: registration)
        } else {
            logger.debug("share \(number): ferryd performs \(type)")
            completion = await performBuiltIn(type, share: share, options: options, caller: caller)
        }
        await end(number, completion, reason: "performed \(type)")
        return completion
    }

    /// A built-in activity, performed by ferryd with the share pasteboard's items.
    private func performBuiltIn(_ type: ActivityType, share: Share, options: VariantDictionary,
                                caller: Caller) async -> ShareCompletion {
        await BuiltInActivities(pasteboards: pasteboards, scenes: scenes)
            .perform(type, pasteboard: share.pasteboard, options: options, sharer: caller, sourceApp: share.sourceApp)
    }

    /// `Client1.PerformActivity` at the activity's app, which may read the items during the
    /// call only. Its error reply, or its going away, is a failed completion.
    private func performApp(_ share: Share, activity type: ActivityType, registration: ActivityRegistration) async -> ShareCompletion {
        let items = (try? await pasteboards.transientItems(share.pasteboard)) ?? []
        let info = info(share, items: items, visibleTo: registration.appID, timeLimit: performTimeout)
        let reader = registration.uniqueName
        let alreadyReader = (try? pasteboards.transientPasteboard(share.pasteboard).access.contentReaders.contains(reader)) ?? false
        pasteboards.updateTransientAccess(share.pasteboard) { access in
            access.metadataReaders.insert(reader)
            access.contentReaders.insert(reader)
        }
        defer {
            if !alreadyReader { pasteboards.updateTransientAccess(share.pasteboard) { $0.contentReaders.remove(reader) } }
        }
        let callbacks = await callbacks(of: registration)
        let started = ContinuousClock.now
        do {
            let reply = try await callbacks.call("PerformActivity", [.string(share.id), .string(type.rawValue), info],
                                                 timeout: performTimeout, rawErrors: true)
            return Self.completion(reply, activity: type, appID: registration.appID)
        } catch {
            return Self.failure(error, activity: type, appID: registration.appID, elapsed: .now - started, limit: performTimeout)
        }
    }

    /// The completion an app's `PerformActivity` reply stands for: completed (default true),
    /// message, returned items (string values; others dropped).
    static func completion(_ reply: [DBusValue], activity type: ActivityType, appID: String) -> ShareCompletion {
        guard reply.count == 1, case .dictionary(let result)? = try? WireValue(dbusValue: reply[0]) else {
            return .failed(type, errorName: FerryModelError.Code.unavailable.dbusErrorName,
                           error: "\(appID) answered PerformActivity with \(reply.map(\.signature.rawValue).joined()) instead of a{sv}")
        }
        var completion = ShareCompletion(completed: true, activityType: type)
        if case .bool(let completed)? = result["completed"] { completion.completed = completed }
        if case .string(let message)? = result["message"] { completion.message = message }
        if case .array(let entries)? = result["returnedItems"] {
            completion.returnedItems = entries.prefix(ShareCompletion.maximumReturnedItems).compactMap { entry in
                guard case .dictionary(let values) = entry else { return nil }
                return values.compactMapValues { if case .string(let text) = $0 { text } else { nil } }
            }
        }
        return completion
    }

    /// The failed completion for a `PerformActivity` that did not answer: the app's own error
    /// (name and text), Timeout after `limit`, Unavailable when the app went away.
    static func failure(_ error: any Error, activity type: ActivityType, appID: String, elapsed: Duration,
                        limit: Duration) -> ShareCompletion {
        let unavailable = FerryModelError.Code.unavailable.dbusErrorName
        let gone = ShareCompletion.failed(type, errorName: unavailable, error: "the activity's app \(appID) went away")
        if let error = error as? DBusError {
            switch error.name {
            case .noReply where elapsed >= limit * 0.99, .timeout:
                return .failed(type, errorName: FerryModelError.Code.timeout.dbusErrorName,
                               error: "\(appID) did not perform \(type) within \(DragService.seconds(limit)) s")
            case .noReply, .disconnected, .serviceUnknown, .nameHasNoOwner:
                return gone
            default:
                return .failed(type, errorName: error.name.rawValue, error: error.message)
            }
        }
        if let error = error as? FerryModelError {
            // The queue was closed: the app unregistered or left.
            return error.code == .unavailable ? gone : .failed(type, errorName: error.code.dbusErrorName, error: error.message)
        }
        return .failed(type, errorName: unavailable, error: "\(appID) failed \(type): \(error)")
    }

    /// A completion as the XML has it: the model's encoding, with `returnedItems` typed
    /// `aa{sv}` (the model's generic array would travel as `av`).
    /// - Throws: what `ShareCompletion.wireDictionary()` throws.
    static func wire(_ completion: ShareCompletion) throws -> DBusValue {
        var entries = try completion.wireDictionary().mapValues(\.dbusValue)
        entries["returnedItems"] = .array(of: "a{sv}", completion.returnedItems.map { item in
            item.mapValues(DBusValue.string).dbusValue
        })
        return entries.dbusValue
    }

    /// `EndShare`: the sharer closes the share without performing.
    /// - Throws: `FerryModelError` `.notFound` (ended or being performed), `.permissionDenied` (not the sharer).
    func endShare(_ id: String, sender: String) async throws {
        let share = try share(id, sender: sender)
        guard !share.performing else {
            throw FerryModelError(.notFound, "share \(share.number) is performing an activity: it ends when that is done")
        }
        await end(share.number, .dismissed("the share was dismissed"), reason: "dismissed by its sharer")
    }

    /// Ends a share: its pasteboard goes, the shared scene's app hears `ShareCompleted` (not
    /// awaited). No-op for an ended share.
    func end(_ number: Int, _ completion: ShareCompletion, reason: String) async {
        guard let share = shares.removeValue(forKey: number) else { return }
        await pasteboards.removeTransientPasteboard(share.pasteboard)
        if let source = share.source {
            do {
                try source.callbacks.enqueue("ShareCompleted", [.string(share.id), .string(source.sceneID), try Self.wire(completion)],
                                             timeout: Self.noticeTimeout)
            } catch {
                logger.warning("share \(number): cannot tell \(source.appID) it completed: \(error)")
            }
        }
        let outcome = completion.completed ? "completed" : (completion.errorName.map { "failed (\($0))" } ?? "not completed")
        logger.info("share \(number) ended: \(reason), \(outcome)")
    }
}
