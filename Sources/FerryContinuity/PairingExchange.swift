@preconcurrency import Crypto
import FerryModel
import Foundation

/// A pairing code as `ferry continuity join` prints it: 8 symbols of Crockford's base32 (40
/// random bits) in two groups, `K7QF-29XM`. Typed back, case, dashes and spaces do not matter,
/// and the letters people confuse with digits (O, I, L) read as the digits.
public enum PairingCode {
    static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")

    /// A new random code.
    public static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        let symbols = (0..<8).map { _ in alphabet[Int(generator.next(upperBound: UInt8(alphabet.count)))] }
        return String(symbols[0..<4]) + "-" + String(symbols[4..<8])
    }

    /// The code in its printed form, or nil when `text` is not one.
    public static func normalized(_ text: String) -> String? {
        var symbols: [Character] = []
        for character in text.uppercased() where character != "-" && character != " " {
            let mapped: Character = character == "O" ? "0" : (character == "I" || character == "L") ? "1" : character
            guard alphabet.contains(mapped) else { return nil }
            symbols.append(mapped)
        }
        guard symbols.count == 8 else { return nil }
        return String(symbols[0..<4]) + "-" + String(symbols[4..<8])
    }

    /// The rendezvous subject for `code` (normalized) in the user's account: a hash, so the
    /// subject does not show the code.
    static func subject(_ code: String) -> String {
        let digest = SHA256.hash(data: Array("ferry-pair-v1:\(code)".utf8))
        return "ferry.pair." + digest.prefix(10).map { String(format: "%02x", $0) }.joined()
    }
}

/// One message of the pairing exchange between the joining and the approving ferryd, as JSON on
/// the rendezvous subject (the approver asks, the joiner answers). Not sealed with the user's
/// key (the joiner has none yet): the number both users compare is what authenticates it.
struct PairMessage: Codable, Sendable {
    /// `hello`, `nonce`, `confirm`, `key`, `abort` (the approver's requests); `answer` or
    /// `refused` (the joiner's).
    var step: String
    var device: String?
    var key: Data?
    var commitment: Data?
    var nonce: Data?
    /// The joiner's user's answer: `waiting`, `accepted`, `declined`; `paired` once the key is in.
    var status: String?
    var sealed: Data?
    var error: String?

    init(_ step: String) { self.step = step }

    static func refused(_ why: String) -> PairMessage {
        var message = PairMessage("refused")
        message.error = why
        return message
    }
}

/// The cryptography of pairing: an ephemeral X25519 exchange authenticated by numeric
/// comparison, as Bluetooth's Secure Simple Pairing does it. The joiner commits to its nonce
/// (a hash over both public keys and the nonce) before the approver reveals its own, so someone
/// in between who swapped the public keys cannot choose nonces that make both devices show the
/// same number: they show the same 6 digits only when they saw the same keys and nonces (a
/// one-in-a-million chance otherwise). The sealing key then travels under a key derived from
/// the X25519 secret and the whole transcript.
enum PairingCrypto {
    static let nonceSize = 32

    static func nonce() -> Data {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<nonceSize).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    /// The joiner's commitment to its nonce.
    static func commitment(joinerKey: Data, approverKey: Data, joinerNonce: Data) -> Data {
        Data(SHA256.hash(data: Data("ferry-pair-commit".utf8) + joinerKey + approverKey + joinerNonce))
    }

    /// Everything both sides saw, hashed: the code, both names, both keys, both nonces.
    static func transcript(code: String, approver: String, joiner: String, approverKey: Data, joinerKey: Data,
                           approverNonce: Data, joinerNonce: Data) -> Data {
        var bytes = Data("ferry-pair-v1".utf8)
        for part in [Data(code.utf8), Data(approver.utf8), Data(joiner.utf8)] { bytes += [UInt8(part.count)] + part }
        bytes += approverKey + joinerKey + approverNonce + joinerNonce
        return Data(SHA256.hash(data: bytes))
    }

    /// The 6 digits both users compare.
    static func number(_ transcript: Data) -> String {
        let digest = Array(SHA256.hash(data: Data("ferry-pair-number".utf8) + transcript))
        let value = digest.prefix(4).reduce(UInt32(0)) { ($0 << 8) | UInt32($1) }
        return String(format: "%06u", value % 1_000_000)
    }

    /// The key the sealing key travels under.
    static func transferKey(_ secret: Curve25519.KeyAgreement.PrivateKey, peer: Data, transcript: Data) throws -> SymmetricKey {
        let shared = try secret.sharedSecretFromKeyAgreement(with: Curve25519.KeyAgreement.PublicKey(rawRepresentation: peer))
        return shared.hkdfDerivedSymmetricKey(using: SHA256.self, salt: transcript, sharedInfo: Data("ferry-pair-key".utf8),
                                              outputByteCount: 32)
    }
}

/// One pairing under way (or just ended) on this device, on either side.
struct PairingSession: Sendable {
    enum Role: String, Sendable {
        /// This device joins (`ferry continuity join`): it waits on the code's subject.
        case join
        /// This device approves (`ferry continuity approve CODE`): it has the key to give.
        case approve
    }

    enum Stage: String, Sendable {
        /// The joiner waits for an approver; the approver is reaching the joiner.
        case waiting
        /// Both show the number; this device's user has not answered.
        case confirm
        /// This device's user confirmed; the other's has not yet.
        case confirmed
        /// The key is on both devices.
        case paired
        /// It ended without pairing (``failure`` says why); nothing was written.
        case failed
    }

    let id: UInt32
    let role: Role
    let code: String
    let deadline: ContinuousClock.Instant
    var stage = Stage.waiting
    /// The other device's name.
    var peer: String?
    var number: String?
    var failure: FerryModelError?
    /// This device's user's answer.
    var accepted: Bool?
    let secret = Curve25519.KeyAgreement.PrivateKey()
    let nonce = PairingCrypto.nonce()
    var peerKey: Data?
    var peerNonce: Data?
    /// The approver's copy of the joiner's commitment.
    var commitment: Data?
    var transcript: Data?
    /// The joiner's subscription to the code's subject.
    var subscription: EngineLink.Subscription?

    var publicKey: Data { secret.publicKey.rawRepresentation }

    var isOver: Bool { stage == .paired || stage == .failed }

    mutating func fail(_ error: FerryModelError) {
        guard !isOver else { return }
        stage = .failed
        failure = error
    }
}
