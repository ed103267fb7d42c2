import DBus
import FerryBroker
import FerryModel
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// `org.ferry.Continuity1` at `/org/ferry/Continuity` (services/interfaces/org.ferry.Continuity1.xml):
/// where this device stands with continuity, and pairing. Served whether continuity is on or
/// off (``ContinuityOff``), so `ferry continuity status` can say "off". Same-uid callers only;
/// no method waits on the network.
package enum ContinuityInterface {
    /// The interface's name.
    package static let name: InterfaceName = "org.ferry.Continuity1"
    /// Where ferryd serves it.
    package static let path: ObjectPath = "/org/ferry/Continuity"
    /// Its `Version`.
    package static let version: UInt32 = 1

    /// The interface over `continuity` (nil: off).
    static func make(_ continuity: Continuity?) -> Interface {
        Interface(name) {
            Property("Version", "u", get: { _ in .uint32(version) })
            Property("State", "s", get: { _ in .string((continuity?.standing ?? .off).rawValue) })
            Property("Device", "s", get: { _ in .string(continuity?.device ?? "") })
            Property("PublicKey", "s", get: { _ in .string(continuity?.publicKey ?? "") })
            Property("Engine", "s", get: { _ in .string(continuity?.configuration.address.url ?? "") })
            Property("Pairing", "a{sv}", get: { _ in pairingValue(continuity?.pairing) })
            Property("Devices", "aa{sv}", get: { _ in
                .array(of: "a{sv}", (continuity?.devices ?? []).map { record in
                    var value = VariantDictionary()
                    value.set("device", to: record.device)
                    value.set("publicKey", to: record.publicKey)
                    value.set("pairedAt", to: Int64(record.pairedAt) * 1000)
                    value.set("pairedBy", to: record.pairedBy)
                    return value.dbusValue
                })
            })
            Method("Init") { call in
                try await checkCaller(call)
                try on(continuity).initializeKey()
                return []
            }
            Method("Join", out: ["code": "s", "pairing": "u"]) { call in
                try await checkCaller(call)
                let (code, id) = try on(continuity).join()
                return [.string(code), .uint32(id)]
            }
            Method("Approve", in: ["code": "s"], out: ["pairing": "u"]) { call in
                try await checkCaller(call)
                let code = try call.argument(0, as: String.self)
                return [.uint32(try on(continuity).approve(code: code))]
            }
            Method("Confirm", in: ["pairing": "u", "accept": "b"]) { call in
                try await checkCaller(call)
                let (id, accept) = try call.arguments(UInt32.self, Bool.self)
                try on(continuity).confirm(id, accept: accept)
                return []
            }
            Method("Revoke", in: ["device": "s"], out: ["rekeyed": "as"]) { call in
                try await checkCaller(call)
                let name = try call.argument(0, as: String.self)
                return [.array(of: "s", try await on(continuity).revoke(name).map { .string($0) })]
            }
        }
    }

    static func on(_ continuity: Continuity?) throws -> Continuity {
        guard let continuity else {
            throw FerryModelError(.unavailable, "continuity is off on this device (ferryd --continuity URL, or continuity.conf)")
        }
        return continuity
    }

    /// Refuses a caller of another uid, as every ferryd interface does.
    static func checkCaller(_ call: MethodCall) async throws {
        let credentials = try await call.connection.credentials(of: call.sender)
        guard credentials.uid == getuid() else {
            throw FerryModelError(.permissionDenied, "continuity belongs to uid \(getuid()); uid \(credentials.uid) may not use it")
        }
    }

    /// The `Pairing` property: empty when no pairing ran during this ferryd's life.
    static func pairingValue(_ session: PairingSession?) -> DBusValue {
        var value = VariantDictionary()
        if let session {
            value.set("id", to: session.id)
            value.set("role", to: session.role.rawValue)
            value.set("stage", to: session.stage.rawValue)
            if session.role == .join { value.set("code", to: session.code) }
            value.set("peer", to: session.peer)
            value.set("number", to: session.stage == .failed ? nil : session.number)
            value.set("error", to: session.failure.map { $0.code.dbusErrorName })
            value.set("message", to: session.failure?.message)
        }
        return value.dbusValue
    }
}

extension Continuity {
    /// Serves `org.ferry.Continuity1` on the broker's connection.
    func exportInterface() {
        do {
            try pasteboards.connection.export(ContinuityInterface.make(self), at: ContinuityInterface.path)
        } catch {
            logger.error("cannot serve \(ContinuityInterface.name.rawValue): \(error)")
        }
    }
}

/// ferryd's `org.ferry.Continuity1` while continuity is off: `State` is "off" and the methods
/// answer `Unavailable`.
package final class ContinuityOff: BrokerCompanion {
    let connection: Connection
    let logger: Logger

    /// The interface on `connection`, served from ``start()``; a failure to serve it goes to `logger`.
    package init(connection: Connection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    /// Serves the interface.
    package func start() {
        do {
            try connection.export(ContinuityInterface.make(nil), at: ContinuityInterface.path)
        } catch {
            logger.error("cannot serve \(ContinuityInterface.name.rawValue): \(error)")
        }
    }

    /// Nothing runs.
    package func stop() {}
}
