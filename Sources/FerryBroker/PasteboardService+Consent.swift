#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import BrokerCore
import DBus
import FerryModel
import Logging

extension PasteboardService {
    /// The policy's last word on a paste whose content is known: a read refused without looking
    /// at the content is decided again when every item read was written by the reader itself
    /// (always allowed), and an `ask` holds the read until the user answers (``PasteConsents``).
    ///
    /// - Parameters:
    ///   - decision: the policy's decision before the content was looked at.
    ///   - caller: the reader.
    ///   - userAction: the read says the user asked for it.
    ///   - items: the items read.
    ///   - types: the types the read would hand over (shown to the user).
    ///   - pasteboard: the pasteboard read from.
    ///   - itemIndex: the item logged when the user refuses.
    /// - Returns: how the user answered (`allowed`), nil when nobody was asked.
    /// - Throws: `FerryModelError` `.permissionDenied` (denied by the policy or the user),
    ///   `.timeout` (nobody answered), `.cancelled` (the reader stopped waiting).
    nonisolated func consentToPaste(_ decision: PastePolicy.Decision, caller: PasteboardCaller, userAction: Bool,
                                    items: [StoredItem], types: [ContentType], pasteboard: String,
                                    itemIndex: Int) async throws -> PasteConsents.Outcome? {
        // Nothing to hand over: nothing to ask about.
        if items.isEmpty, case .ask = decision { return nil }
        var decision = decision
        if !decision.isAllowed, let app = caller.appID, !items.isEmpty, items.allSatisfy({ $0.sourceAppID == app }) {
            let foreground = foregroundApps.contains(app)
            decision = policy.current().decide(.app(app), userAction: userAction, hasForegroundScene: foreground,
                                               readsOwnContent: true)
        }
        let reason: String
        switch decision {
        case .allow: return nil
        case .deny(let reason): throw FerryModelError(.permissionDenied, reason)
        case .ask(let why): reason = why
        }
        guard let app = caller.appID else { throw FerryModelError(.permissionDenied, reason) }
        let sources = Set(items.compactMap(\.sourceAppID)).sorted()
        let process = PasteRecord.processName(pid: caller.caller.pid)
        let request = PasteConsentRequest(id: 0, readerApp: app, readerUniqueName: caller.uniqueName,
                                            readerPID: Int32(truncatingIfNeeded: caller.caller.pid ?? 0),
                                            readerProcess: process,
                                            sourceApp: sources.isEmpty ? nil : sources.joined(separator: ", "),
                                            pasteboard: pasteboard, types: types.map(\.identifier),
                                            asked: Date(), expires: Date())
        logger.info("paste consent: asking whether \(app) may read \(pasteboard) (\(reason))")
        let (asked, outcome) = await consents.ask(request)
        guard outcome != .allowed else { return outcome }
        logPaste(PasteRecord(appID: app, uniqueName: caller.uniqueName, uid: caller.caller.uid, pid: asked.readerPID,
                             process: process, pasteboard: pasteboard, itemIndex: itemIndex,
                             contentType: types.first ?? .data, consent: outcome.rawValue))
        let source = asked.sourceApp ?? "another app"
        switch outcome {
        case .allowed: return outcome
        case .denied:
            throw FerryModelError(.permissionDenied, "the user did not allow \(app) to paste from \(source) (paste consent request \(asked.id))")
        case .timedOut:
            throw FerryModelError(.timeout, "nobody answered paste consent request \(asked.id) within "
                                  + "\(Self.seconds(consents.timeout)) s, so \(app) may not paste from \(source)")
        case .withdrawn:
            throw FerryModelError(.cancelled, "\(app) stopped waiting for paste consent request \(asked.id)")
        }
    }

    /// `30` for 30 seconds, `1.5` for 1500 ms: how long a timeout is, for messages.
    static func seconds(_ duration: Duration) -> String {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        let whole = milliseconds / 1000, fraction = milliseconds % 1000
        guard fraction != 0 else { return String(whole) }
        var digits = String(fraction)
        digits = String(repeating: "0", count: 3 - digits.count) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return "\(whole).\(digits)"
    }

    /// Announces a new consent request: `org.ferry.Broker1.PasteConsentRequested`.
    static func announceConsentRequest(_ request: PasteConsentRequest, on connection: Connection) {
        try? connection.emit(path: BrokerService.path, interface: BrokerService.interfaceName, member: "PasteConsentRequested",
                             body: [.uint64(request.id), .string(request.readerApp), .string(request.readerProcess ?? ""),
                                    .string(request.sourceApp ?? ""), .string(request.pasteboard),
                                    .array(element: .string, elements: request.types.map(DBusValue.string))])
    }

    /// Announces a consent request's end: `org.ferry.Broker1.PasteConsentEnded`.
    static func announceConsentEnd(_ request: PasteConsentRequest, _ outcome: PasteConsents.Outcome,
                                   on connection: Connection) {
        try? connection.emit(path: BrokerService.path, interface: BrokerService.interfaceName, member: "PasteConsentEnded",
                             body: [.uint64(request.id), .string(outcome.rawValue)])
    }

    /// Answers a consent request for the user, and with `remember` writes the decision into the
    /// policy file first (so it stands for the next read even when this one has just ended).
    ///
    /// D-Bus: `org.ferry.Broker1.AnswerPasteConsent`.
    /// - Throws: `FerryModelError` `.notFound` for an id that is not pending, `.io` when the
    ///   decision cannot be remembered (then the request stays pending).
    package nonisolated func answerConsent(_ id: UInt64, allow: Bool, remember: Bool) throws {
        guard let request = consents.pending.first(where: { $0.id == id }) else {
            throw FerryModelError(.notFound, "there is no pending paste consent request \(id) (answered, timed out or withdrawn)")
        }
        if remember {
            try policy.remember(allow: allow, app: request.readerApp)
            logger.notice("paste policy: remembered `\(allow ? "allow" : "deny") \(request.readerApp)` in \(policy.displayPath)")
        }
        try consents.answer(id, allow: allow)
        logger.info("paste consent: request \(id) \(allow ? "allowed" : "denied")", metadata: ["app": "\(request.readerApp)"])
    }
}
