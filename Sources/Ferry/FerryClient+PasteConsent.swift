#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import DBus
import FerryBus
import FerryModel

/// A read waiting for the user's consent: an app reads another app's content without a user
/// action, and the paste policy says to ask (as iOS 16's "Allow Paste" prompt does).
public struct PasteConsentRequest: Sendable, Hashable {
    /// The request's id, for ``FerryClient/answerPasteConsent(_:allow:remember:)``.
    public var id: UInt64
    /// The reading app's id.
    public var readerApp: String
    /// The reader's unique bus name.
    public var readerUniqueName: String
    /// The reader's process id.
    public var readerPID: Int32
    /// The reader's process name, nil when the broker could not learn it.
    public var readerProcess: String?
    /// The app that wrote the content, nil when it was not a registered app (the CLI).
    public var sourceApp: String?
    /// The pasteboard read.
    public var pasteboard: String
    /// The types the read would hand over.
    public var types: [String]
    /// When the read asked.
    public var asked: Date
    /// When the read is denied unless answered.
    public var expires: Date

    /// Reads a `PendingPasteConsents` entry.
    init(dbus dictionary: [String: DBusValue]) throws(FerryError) {
        let wire = (try? [String: WireValue](dbusValue: dictionary.dbusValue)) ?? [:]
        guard let idValue = wire["id"], case .uint64(let id) = idValue, let readerApp = wire["reader-app"]?.stringValue,
              let pasteboard = wire["pasteboard"]?.stringValue, let asked = wire["asked"]?.integerValue,
              let expires = wire["expires"]?.integerValue else {
            throw FerryError(.invalidArgument, "the broker sent a malformed paste consent request")
        }
        var types: [String] = []
        switch wire["types"] {
        case .strings(let names)?: types = names
        case .array(let values)?: types = values.compactMap(\.stringValue)
        default: break
        }
        self.id = id
        self.readerApp = readerApp
        self.readerUniqueName = wire["reader-unique-name"]?.stringValue ?? ""
        self.readerPID = Int32(clamping: wire["reader-pid"]?.integerValue ?? 0)
        self.readerProcess = wire["reader-process"]?.stringValue
        self.sourceApp = wire["source-app"]?.stringValue
        self.pasteboard = pasteboard
        self.types = types
        self.asked = WireBridge.date(microseconds: asked)
        self.expires = WireBridge.date(microseconds: expires)
    }
}

extension FerryClient {
    /// The reads waiting for the user's consent, oldest first.
    ///
    /// D-Bus: `org.ferry.Broker1.PendingPasteConsents`.
    public func pendingPasteConsents() async throws(FerryError) -> [PasteConsentRequest] {
        let reply = try await callBroker("PendingPasteConsents")
        guard let value = reply.first else { return [] }
        let entries = try FerryError.bridgingSync { try WireBridge.dictionaries(value) }
        var result: [PasteConsentRequest] = []
        for entry in entries { result.append(try PasteConsentRequest(dbus: entry)) }
        return result
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
