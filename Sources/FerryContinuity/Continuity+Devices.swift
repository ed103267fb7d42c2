@preconcurrency import Crypto
import Dispatch
import FerryModel
import Logging
import FerrySystem
import Foundation
import Synchronization

/// A paired device as it records itself in the user's `ferry_devices` bucket (sealed with the
/// user's key, under its own name; kept until replaced).
struct DeviceRecord: Codable, Sendable, Equatable {
    var device: String
    /// Its nkey public key (`U…`).
    var publicKey: String
    /// Its long-term X25519 public key (a new sealing key is sealed to it on revoke).
    var agreementKey: Data
    /// When it was paired (milliseconds since 1970), and by which device (itself for `init`;
    /// empty when its key was set up by hand).
    var pairedAt: UInt64
    var pairedBy: String
}

/// A new sealing key for one device after a revoke, in the `ferry_keys` bucket under that
/// device's name: sealed with the old key (only a device of the user's can issue it), and
/// inside that to the recipient's long-term X25519 key.
struct Rekey: Codable, Sendable {
    var from: String
    var revoked: String
    var to: String
    var ephemeral: Data
    var sealed: Data
}

/// Devices' part of ``Continuity/State``.
struct DevicesState {
    var records: [String: DeviceRecord] = [:]
    var bucket: EngineLink.Bucket?
    var keys: EngineLink.Bucket?
    var watch: EngineLink.Watch?
    var keysWatch: EngineLink.Watch?
    /// Who paired this device during this run (for its record).
    var pairedBy: String?
}

/// Devices and revoke (issue #22 item 5): paired devices record themselves; revoking one
/// rotates the user's key, sealed to each remaining device's long-term X25519 key.
extension Continuity {
    static let devicesBucket = "ferry_devices"
    static let keysBucket = "ferry_keys"

    /// The paired devices this device knows (its own record included), by name.
    var devices: [DeviceRecord] {
        state.withLock { $0.devices.records.values.sorted { $0.device < $1.device } }
    }

    /// Opens the buckets, watches the records and this device's rekeys, and records this device
    /// (on ``queue``, from ``setUpPaired()``).
    func setUpDevices(_ link: EngineLink) throws {
        let records = try link.bucket(Self.devicesBucket, ttl: .zero)
        let keys = try link.bucket(Self.keysBucket, ttl: .zero)
        state.withLock { state in
            state.devices.bucket = records
            state.devices.keys = keys
        }
        watchDevices()
        let keysWatch = try keys.watchAll(keys: device) { [weak self] key, value in
            guard let self else { return }
            self.queue.async { self.receivedRekey(key: key, value: value) }
        }
        let old = state.withLock { state in defer { state.devices.keysWatch = keysWatch }; return state.devices.keysWatch }
        old?.stop()
        recordSelf()
    }

    /// Watches the records again (after a new key: the records sealed with the old one no
    /// longer open, so a revoked device drops out of the list).
    func watchDevices() {
        guard let bucket = state.withLock({ $0.devices.bucket }) else { return }
        state.withLock { $0.devices.records = [:] }
        do {
            let watch = try bucket.watchAll { [weak self] key, value in self?.receivedRecord(key: key, value: value) }
            let old = state.withLock { state in defer { state.devices.watch = watch }; return state.devices.watch }
            old?.stop()
        } catch {
            logger.error("continuity: cannot watch the devices: \(error)")
        }
    }

    func receivedRecord(key: String, value: [UInt8]) {
        guard let seal, Subjects.isValidDevice(key),
              let plain = try? seal.open(value, context: "kv:\(Self.devicesBucket).\(key)"),
              let record = try? JSONDecoder().decode(DeviceRecord.self, from: Data(plain)), record.device == key
        else { return }
        state.withLock { $0.devices.records[key] = record }
    }

    /// Puts this device's record, keeping when and by whom it was paired when the bucket has it.
    func recordSelf() {
        guard let seal, let bucket = state.withLock({ $0.devices.bucket }) else { return }
        let context = "kv:\(Self.devicesBucket).\(device)"
        var record: DeviceRecord
        do {
            let agreement = try NKey.agreementKey(ofSeedFile: configuration.address.seedFile).publicKey.rawRepresentation
            if let known = state.withLock({ $0.devices.records[device] }) {
                record = known
            } else if let stored = try bucket.get(device), let plain = try? seal.open(stored, context: context),
                      let decoded = try? JSONDecoder().decode(DeviceRecord.self, from: Data(plain)), decoded.device == device {
                record = decoded
            } else {
                record = DeviceRecord(device: device, publicKey: publicKey, agreementKey: agreement,
                                      pairedAt: UInt64(Date().timeIntervalSince1970 * 1000),
                                      pairedBy: state.withLock { $0.devices.pairedBy } ?? "")
            }
            record.publicKey = publicKey
            record.agreementKey = agreement
            try bucket.put(device, try seal.seal([UInt8](try JSONEncoder().encode(record)), context: context))
            state.withLock { $0.devices.records[device] = record }
        } catch {
            logger.warning("continuity: cannot record this device: \(error)")
        }
    }

    // MARK: - Revoke

    /// Revokes `name`: a new key for this device and every other recorded one but `name`,
    /// sealed to each one's long-term key, which they adopt; `name` keeps only the old key, so
    /// what the others announce or serve from now on does not open for it, and what it sends
    /// no longer opens for them. Waits for the engine's acknowledgements (a worker thread).
    /// - Returns: the devices that were sent the new key.
    /// - Throws: `FerryModelError` `.notFound` (no such device recorded), `.invalidArgument`
    ///   (this device itself), `.permissionDenied` (unpaired), `.unavailable` (no engine).
    package func revoke(_ name: String) async throws -> [String] {
        guard let seal else { throw FerryModelError(.permissionDenied, "this device is not paired") }
        guard name != device else {
            throw FerryModelError(.invalidArgument, "a device cannot revoke itself; revoke \(device) from another of your devices")
        }
        guard let keys = state.withLock({ $0.devices.keys }), state.withLock({ $0.link?.isConnected ?? false }) else {
            throw FerryModelError(.unavailable, "the continuity engine \(configuration.address.url) is not reachable")
        }
        let records = devices
        guard records.contains(where: { $0.device == name }) else {
            throw FerryModelError(.notFound, "no paired device \(name) is recorded (ferry continuity devices lists them)")
        }
        let recipients = records.filter { $0.device != name && $0.device != device }
        let next = Seal.random()
        let me = device
        try await BlockingIO.run {
            for recipient in recipients {
                let ephemeral = Curve25519.KeyAgreement.PrivateKey()
                let kek = try Self.rekeyKey(ephemeral, peer: recipient.agreementKey, to: recipient.device)
                let inner = try AES.GCM.seal(next.keyBytes, using: kek, authenticating: Data("rekey:\(recipient.device):\(name)".utf8))
                guard let combined = inner.combined else { throw FerryModelError(.unavailable, "cannot seal the new key") }
                let rekey = Rekey(from: me, revoked: name, to: recipient.device,
                                  ephemeral: ephemeral.publicKey.rawRepresentation, sealed: combined)
                let outer = try seal.seal([UInt8](try JSONEncoder().encode(rekey)), context: "kv:\(Self.keysBucket).\(recipient.device)")
                do {
                    try keys.put(recipient.device, outer)
                } catch {
                    throw FerryModelError(.unavailable, "cannot give the new key to \(recipient.device): \(error)")
                }
            }
        }
        do {
            try next.write(to: configuration.keyFile, replacing: true)
        } catch {
            throw FerryModelError(.io, "\(error)")
        }
        logger.notice("continuity: revoked \(name); a new key went to \(recipients.map(\.device).joined(separator: ", "))")
        rekeyed(next)
        return recipients.map(\.device)
    }

    /// The key a new sealing key travels under to `to`.
    static func rekeyKey(_ secret: Curve25519.KeyAgreement.PrivateKey, peer: Data, to device: String) throws -> SymmetricKey {
        let shared = try secret.sharedSecretFromKeyAgreement(with: Curve25519.KeyAgreement.PublicKey(rawRepresentation: peer))
        return shared.hkdfDerivedSymmetricKey(using: SHA256.self, salt: Data("ferry-rekey".utf8), sharedInfo: Data(device.utf8),
                                              outputByteCount: 32)
    }

    /// A new key for this device (on ``queue``): adopted when it opens with the current key and
    /// this device's long-term key; a rekey sealed with an older key is ignored.
    func receivedRekey(key: String, value: [UInt8]) {
        guard key == device, let seal,
              let plain = try? seal.open(value, context: "kv:\(Self.keysBucket).\(device)"),
              let rekey = try? JSONDecoder().decode(Rekey.self, from: Data(plain)), rekey.to == device
        else { return }
        do {
            let mine = try NKey.agreementKey(ofSeedFile: configuration.address.seedFile)
            let ephemeral = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: rekey.ephemeral)
            let shared = try mine.sharedSecretFromKeyAgreement(with: ephemeral)
            let kek = shared.hkdfDerivedSymmetricKey(using: SHA256.self, salt: Data("ferry-rekey".utf8),
                                                     sharedInfo: Data(device.utf8), outputByteCount: 32)
            let bytes = try AES.GCM.open(try AES.GCM.SealedBox(combined: rekey.sealed), using: kek,
                                         authenticating: Data("rekey:\(device):\(rekey.revoked)".utf8))
            let next = try Seal(key: [UInt8](bytes))
            try next.write(to: configuration.keyFile, replacing: true)
            logger.notice("continuity: \(rekey.from) revoked \(rekey.revoked); adopted the new key")
            rekeyed(next)
        } catch {
            logger.error("continuity: cannot adopt the new key from \(rekey.from): \(error)")
        }
    }

    /// Switches to `next` at once: the watches start again (what the old key sealed stops
    /// opening), this device's record and its newest copy go out under the new key.
    func rekeyed(_ next: Seal) {
        state.withLock { state in
            state.seal = next
            state.handoff.advertised = nil
        }
        queue.async {
            self.startWatch()
            self.watchDevices()
            self.recordSelf()
            self.announceCurrent()
            self.advertising.yield(())
        }
    }

    /// Stops the devices' watches (ferryd stopping).
    func stopDevices() {
        let (watch, keysWatch) = state.withLock { state in
            defer { state.devices.watch = nil; state.devices.keysWatch = nil }
            return (state.devices.watch, state.devices.keysWatch)
        }
        watch?.stop()
        keysWatch?.stop()
    }
}
