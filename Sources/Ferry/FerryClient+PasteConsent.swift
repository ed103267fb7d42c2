#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import DBus
import FerryBus
import FerryModel

extension FerryClient {
    /// The reads waiting for the user's consent, oldest first.
    ///
    /// D-Bus: `org.ferry.Broker1.PendingPasteConsents`.
    public func pendingPasteConsents() async throws(FerryError) -> [PasteConsentRequest] {
        let reply = try await callBroker("PendingPasteConsents")
        guard let value = reply.first else { return [] }
        return try FerryError.bridgingSync {
            try WireReader.readers(dbus: value, path: "requests").map { try $0.decodeHere(PasteConsentRequest.self) }
        }
    }

    /// Answers a read waiting for consent: it goes on (allow) or fails with `.permissionDenied`.
    ///
    /// D-Bus: `org.ferry.Broker1.AnswerPasteConsent`.
    /// - Parameters:
    ///   - id: the request's id.
    ///   - allow: allow the read (true) or deny it.
    ///   - remember: also write `allow APP` or `deny APP` into the paste policy file.
    /// - Throws: `FerryError` `.notFound` when no such request is pending, `.permissionDenied`
    ///   when this client is a registered app (only the user answers).
    public func answerPasteConsent(_ id: UInt64, allow: Bool, remember: Bool = false) async throws(FerryError) {
        _ = try await callBroker("AnswerPasteConsent", [
            .uint64(id), .string(allow ? "allow" : "deny"), .variantDictionary(["remember": .boolean(remember)]),
        ])
    }
}
