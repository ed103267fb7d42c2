import DBus
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where this device stands with continuity (Universal Clipboard and Handoff between the user's
/// machines), as ferryd tells it: `org.ferry.Continuity1`'s properties.
public struct ContinuityStatus: Sendable, Hashable {
    /// Where a device stands.
    public enum State: String, Sendable, Hashable {
        /// Continuity is not configured.
        case off
        /// Configured; the engine has not answered yet.
        case waiting
        /// Connected, without the user's key (`ferry continuity init` or `join` next).
        case unpaired
        /// Connected with the user's key: sharing.
        case paired
    }

    /// Where the device stands.
    public var state: State
    /// This device's name on the engine (empty when off).
    public var device: String
    /// This device's nkey public key (`U…`), what the engine's configuration lists (empty when off).
    public var publicKey: String
    /// The engine's URL (empty when off).
    public var engine: String
    /// The pairing under way or last ended during ferryd's life.
    public var pairing: ContinuityPairing?
    /// The paired devices this device knows (empty when unpaired or off).
    public var devices: [ContinuityDevice]
}

/// A paired device of the user's, as it recorded itself.
public struct ContinuityDevice: Sendable, Hashable {
    /// Its name on the engine.
    public var name: String
    /// Its nkey public key (`U…`).
    public var publicKey: String
    /// When it was paired.
    public var pairedAt: Date
    /// The device that approved it (itself after `init`; empty for a key set up by hand).
    public var pairedBy: String
}

/// A pairing of this device with another (`ferry continuity join` / `approve`).
public struct ContinuityPairing: Sendable, Hashable {
    /// Which side this device is on.
    public enum Role: String, Sendable, Hashable {
        /// This device joins (it gets the key).
        case join
        /// This device approves (it gives the key).
        case approve
    }

    /// How far it got.
    public enum Stage: String, Sendable, Hashable {
        /// The joiner waits for an approver; the approver reaches the joiner.
        case waiting
        /// Both show ``ContinuityPairing/number``: the user here answers with
        /// ``FerryClient/confirmContinuityPairing(_:accept:)``.
        case confirm
        /// The user here confirmed; the other device's user has not yet.
        case confirmed
        /// Done: both devices have the key.
        case paired
        /// Ended without pairing (``ContinuityPairing/error``); nothing was written.
        case failed
    }

    /// The pairing's number on this ferryd.
    public var id: UInt32
    /// This device's side.
    public var role: Role
    /// How far it got.
    public var stage: Stage
    /// The code (on the joining side).
    public var code: String?
    /// The other device's name, once known.
    public var peer: String?
    /// The 6 digits both users compare, once both sides exchanged their nonces.
    public var number: String?
    /// Why it failed.
    public var error: FerryError?
}

extension FerryClient {
    static let continuityPath: ObjectPath = "/org/ferry/Continuity"
    static let continuityInterface: InterfaceName = "org.ferry.Continuity1"

    /// Where this device stands with continuity.
    /// - Throws: `FerryError` (`.noBroker`, `.bus`; `.invalidArgument` for a malformed answer).
    ///
    /// D-Bus: `org.freedesktop.DBus.Properties.GetAll` of `org.ferry.Continuity1`.
    public func continuityStatus() async throws(FerryError) -> ContinuityStatus {
        let reply = try await FerryError.bridging {
            try await connection.call(destination: Self.brokerName, path: Self.continuityPath,
                                      interface: "org.freedesktop.DBus.Properties", member: "GetAll",
                                      body: [.string(Self.continuityInterface.rawValue)], timeout: .seconds(30))
        }
        return try FerryError.bridgingSync {
            guard let first = reply.first else { throw FerryError(.invalidArgument, "GetAll answered nothing") }
            let values = try VariantDictionary(dbusValue: first)
            let stateName = try values.value(forKey: "State", as: String.self)
            guard let state = ContinuityStatus.State(rawValue: stateName) else {
                throw FerryError(.invalidArgument, "ferryd says continuity is '\(stateName)', which this client does not know")
            }
            let pairing = try values.valueIfPresent(forKey: "Pairing", as: VariantDictionary.self)
            let devices = try (values.valueIfPresent(forKey: "Devices", as: [VariantDictionary].self) ?? []).map { entry in
                ContinuityDevice(name: try entry.value(forKey: "device"), publicKey: try entry.value(forKey: "publicKey"),
                                 pairedAt: Date(timeIntervalSince1970: Double(try entry.value(forKey: "pairedAt", as: Int64.self)) / 1_000_000),
                                 pairedBy: try entry.value(forKey: "pairedBy"))
            }
            return ContinuityStatus(state: state, device: try values.value(forKey: "Device"),
                                    publicKey: try values.value(forKey: "PublicKey"), engine: try values.value(forKey: "Engine"),
                                    pairing: try pairing.flatMap(Self.pairing(from:)), devices: devices)
        }
    }

    static func pairing(from values: VariantDictionary) throws -> ContinuityPairing? {
        guard let id = try values.valueIfPresent(forKey: "id", as: UInt32.self) else { return nil }
        let roleName = try values.value(forKey: "role", as: String.self)
        let stageName = try values.value(forKey: "stage", as: String.self)
        guard let role = ContinuityPairing.Role(rawValue: roleName), let stage = ContinuityPairing.Stage(rawValue: stageName) else {
            throw FerryError(.invalidArgument, "ferryd describes a pairing as '\(roleName)' at '\(stageName)', which this client does not know")
        }
        var error: FerryError?
        if let name = try values.valueIfPresent(forKey: "error", as: String.self) {
            let message = try values.valueIfPresent(forKey: "message", as: String.self) ?? name
            error = FerryError(DBusError((try? ErrorName(name)) ?? .failed, message))
        }
        return ContinuityPairing(id: id, role: role, stage: stage, code: try values.valueIfPresent(forKey: "code"),
                                 peer: try values.valueIfPresent(forKey: "peer"), number: try values.valueIfPresent(forKey: "number"),
                                 error: error)
    }

    /// Makes the user's sealing key on this device, the user's first (it refuses when the
    /// device has a key); sharing starts at once.
    /// - Throws: `FerryError` `.permissionDenied` (a key exists), `.unavailable` (continuity off).
    ///
    /// D-Bus: `org.ferry.Continuity1.Init`.
    public func initializeContinuity() async throws(FerryError) {
        _ = try await continuityCall("Init", [])
    }

    /// Starts joining: this device waits for a paired one to approve the returned code.
    /// - Returns: the code to type there, and the pairing's number (follow it with
    ///   ``continuityStatus()``).
    /// - Throws: `FerryError` `.permissionDenied` (paired already), `.unavailable` (off, or no engine).
    ///
    /// D-Bus: `org.ferry.Continuity1.Join`.
    public func joinContinuity() async throws(FerryError) -> (code: String, pairing: UInt32) {
        let reply = try await continuityCall("Join", [])
        guard reply.count == 2, case .string(let code) = reply[0], case .uint32(let id) = reply[1] else {
            throw FerryError(.invalidArgument, "Continuity1.Join answered '\(reply.map(\.signature.rawValue).joined())', not 'su'")
        }
        return (code, id)
    }

    /// Starts approving the device that waits with `code`.
    /// - Returns: the pairing's number (follow it with ``continuityStatus()``).
    /// - Throws: `FerryError` `.invalidArgument` (not a code), `.permissionDenied` (this device is
    ///   unpaired), `.unavailable` (off, or no engine). A code nobody waits with fails the
    ///   pairing at once with `.notFound`.
    ///
    /// D-Bus: `org.ferry.Continuity1.Approve`.
    public func approveContinuity(code: String) async throws(FerryError) -> UInt32 {
        let reply = try await continuityCall("Approve", [.string(code)])
        guard reply.count == 1, case .uint32(let id) = reply[0] else {
            throw FerryError(.invalidArgument, "Continuity1.Approve answered '\(reply.map(\.signature.rawValue).joined())', not 'u'")
        }
        return id
    }

    /// The user's answer to the number of pairing `id`: `accept` when both devices show the
    /// same, else it fails on both and nothing is written.
    /// - Throws: `FerryError` `.notFound` (no such pairing, or not showing a number).
    ///
    /// D-Bus: `org.ferry.Continuity1.Confirm`.
    public func confirmContinuityPairing(_ id: UInt32, accept: Bool) async throws(FerryError) {
        _ = try await continuityCall("Confirm", [.uint32(id), .boolean(accept)])
    }

    /// Revokes the paired device `name`: the user's key is rotated and sent to every other
    /// recorded device, which adopts it; `name` keeps the old one.
    /// - Returns: the devices that were sent the new key.
    /// - Throws: `FerryError` `.notFound` (no such device), `.invalidArgument` (this device),
    ///   `.permissionDenied` (unpaired), `.unavailable` (off, or no engine).
    ///
    /// D-Bus: `org.ferry.Continuity1.Revoke`.
    public func revokeContinuityDevice(_ name: String) async throws(FerryError) -> [String] {
        let reply = try await continuityCall("Revoke", [.string(name)])
        guard reply.count == 1, let names = try? [String](dbusValue: reply[0]) else {
            throw FerryError(.invalidArgument, "Continuity1.Revoke answered '\(reply.map(\.signature.rawValue).joined())', not 'as'")
        }
        return names
    }

    func continuityCall(_ member: MemberName, _ body: [DBusValue]) async throws(FerryError) -> [DBusValue] {
        try await FerryError.bridging {
            try await connection.call(destination: Self.brokerName, path: Self.continuityPath, interface: Self.continuityInterface,
                                      member: member, body: body, timeout: .seconds(30))
        }
    }
}
