@preconcurrency import Crypto
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// NATS nkeys for users (a device's identity on the engine): an Ed25519 key pair written as
/// base32 text with a type prefix and a CRC-16 (`SU…` for the seed, `U…` for the public key), as
/// the nkeys format defines it. ferryd reads the seed file once per link and signs the engine's
/// nonce itself (``EngineLink``); tests and the benchmarks make a pair with ``makeUserSeed()``
/// (public for the Benchmarks package).
public enum NKey {
    static let seedPrefix: UInt8 = 18 << 3
    static let userPrefix: UInt8 = 20 << 3

    /// A bad seed file or seed, by name.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// What is wrong.
        public let description: String
    }

    /// A new user key pair: the seed (secret: the device's creds file) and the public key (for
    /// the engine's configuration).
    public static func makeUserSeed() -> (seed: String, publicKey: String) {
        let key = Curve25519.Signing.PrivateKey()
        let raw = [UInt8](key.rawRepresentation)
        let seed = encode([seedPrefix | (userPrefix >> 5), (userPrefix & 31) << 3] + raw)
        return (seed, publicKey(of: key))
    }

    /// The public key (`U…`) of a user seed (`SU…`).
    public static func publicKey(ofSeed seed: String) throws -> String {
        publicKey(of: try signingKey(ofSeed: seed))
    }

    /// The public key (`U…`) of a signing key.
    static func publicKey(of key: Curve25519.Signing.PrivateKey) -> String {
        encode([userPrefix] + [UInt8](key.publicKey.rawRepresentation))
    }

    /// The Ed25519 key of a user seed (`SU…`): what signs the engine's nonce when a link connects.
    static func signingKey(ofSeed seed: String) throws -> Curve25519.Signing.PrivateKey {
        let bytes = try decode(seed.trimmingCharacters(in: .whitespacesAndNewlines))
        guard bytes.count == 34, bytes[0] & 0xF8 == seedPrefix,
              ((bytes[0] & 7) << 5) | ((bytes[1] & 0xF8) >> 3) == userPrefix else {
            throw Failure(description: "not an nkey user seed (SU…)")
        }
        return try Curve25519.Signing.PrivateKey(rawRepresentation: bytes[2...])
    }

    /// The public key of the seed in `path`, which must be the user's own and readable by
    /// nobody else (mode 0600 or narrower).
    public static func publicKey(ofSeedFile path: String) throws -> String {
        publicKey(of: try signingKey(ofSeedFile: path))
    }

    /// The signing key of the seed in `path`, checked like ``publicKey(ofSeedFile:)``.
    static func signingKey(ofSeedFile path: String) throws -> Curve25519.Signing.PrivateKey {
        try SecretFile.check(path, what: "the creds file")
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw EngineError(.failed, "cannot read the creds file \(path)")
        }
        do {
            return try signingKey(ofSeed: text)
        } catch {
            throw EngineError(.failed, "the creds file \(path): \(error)")
        }
    }

    /// The device's long-term X25519 key (what a new sealing key is sealed to when another
    /// device is revoked), derived from the seed in `path` (HKDF-SHA256), so it needs no file of
    /// its own and changes when the creds do.
    static func agreementKey(ofSeedFile path: String) throws -> Curve25519.KeyAgreement.PrivateKey {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw EngineError(.failed, "cannot read the creds file \(path)")
        }
        let bytes = try decode(text.trimmingCharacters(in: .whitespacesAndNewlines))
        guard bytes.count == 34 else { throw EngineError(.failed, "the creds file \(path): not an nkey user seed") }
        let derived = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: bytes[2...]),
                                             info: Data("ferry-device-x25519".utf8), outputByteCount: 32)
        return try derived.withUnsafeBytes { try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: $0) }
    }

    /// The public key of the seed in `path`, making a new seed there first when no file exists
    /// (mode 0600, in a folder made mode 0700 when it is missing): a device's identity needs no
    /// hand-made secret.
    /// - Returns: the public key, and whether the seed was made now.
    /// - Throws: ``EngineError`` naming the file (cannot be made, or the one there is wrong).
    public static func publicKey(makingSeedFile path: String) throws -> (publicKey: String, made: Bool) {
        var info = stat()
        if lstat(path, &info) == 0 || errno != ENOENT { return (try publicKey(ofSeedFile: path), false) }
        let pair = makeUserSeed()
        try SecretFile.create(path, contents: pair.seed + "\n", what: "the creds file")
        return (pair.publicKey, true)
    }

    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    static func encode(_ payload: [UInt8]) -> String {
        let crc = crc16(payload)
        let bytes = payload + [UInt8(crc & 0xFF), UInt8(crc >> 8)]
        var out: [UInt8] = []
        var buffer = 0, bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | Int(byte)
            bits += 8
            while bits >= 5 {
                out.append(alphabet[(buffer >> (bits - 5)) & 31])
                bits -= 5
            }
        }
        if bits > 0 { out.append(alphabet[(buffer << (5 - bits)) & 31]) }
        return String(decoding: out, as: UTF8.self)
    }

    static func decode(_ text: String) throws -> [UInt8] {
        var out: [UInt8] = []
        var buffer = 0, bits = 0
        for character in text.utf8 {
            guard let value = alphabet.firstIndex(of: character) else { throw Failure(description: "not base32") }
            buffer = ((buffer << 5) | value) & 0xFFFF
            bits += 5
            if bits >= 8 {
                out.append(UInt8((buffer >> (bits - 8)) & 0xFF))
                bits -= 8
            }
        }
        guard out.count >= 3 else { throw Failure(description: "too short") }
        let payload = Array(out.dropLast(2))
        let crc = UInt16(out[out.count - 2]) | UInt16(out[out.count - 1]) << 8
        guard crc16(payload) == crc else { throw Failure(description: "bad checksum") }
        return payload
    }

    static func crc16(_ bytes: [UInt8]) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc ^= UInt16(byte) << 8
            for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
        }
        return crc
    }
}

/// Files that hold secrets (the creds file, the sealing key): refused when anyone but their
/// owner may read or write them.
enum SecretFile {
    static func check(_ path: String, what: String) throws {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw EngineError(.failed, "cannot read \(what) \(path): \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & 0o077 == 0 else {
            throw EngineError(.failed, "\(what) \(path) is mode \(String(info.st_mode & 0o777, radix: 8)): "
                              + "it must be readable by its owner only (chmod 600)")
        }
        guard info.st_uid == getuid() else {
            throw EngineError(.failed, "\(what) \(path) belongs to uid \(info.st_uid), not to this user")
        }
    }

    /// Writes a new secret file at `path`, mode 0600, which must not exist yet (nothing is
    /// replaced); its folder (and any missing folder above it) is made mode 0700. The file
    /// appears whole or not at all (written beside it, then linked into place).
    static func create(_ path: String, contents: String, what: String) throws {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropLast()
        var folder = ""
        for (index, part) in parts.enumerated() {
            folder += (index == 0 ? "" : "/") + part
            guard !part.isEmpty, part != ".", part != ".." else { continue }
            if mkdir(folder, 0o700) != 0, errno != EEXIST {
                throw EngineError(.failed, "cannot make the folder \(folder) for \(what): \(String(cString: strerror(errno)))")
            }
        }
        let temporary = "\(path).\(getpid()).new"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            throw EngineError(.failed, "cannot write \(what) \(path): \(String(cString: strerror(errno)))")
        }
        defer { unlink(temporary) }
        let bytes = Array(contents.utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == bytes.count, synced else {
            throw EngineError(.failed, "cannot write \(what) \(path): \(String(cString: strerror(errno)))")
        }
        // link(2) fails when the name exists: a secret already there is never replaced.
        guard link(temporary, path) == 0 else {
            throw EngineError(.failed, errno == EEXIST ? "\(what) \(path) exists already; it is not replaced"
                              : "cannot write \(what) \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Replaces the secret file at `path` with `contents` (mode 0600, renamed into place).
    static func replace(_ path: String, contents: String, what: String) throws {
        let temporary = "\(path).\(getpid()).next"
        unlink(temporary)
        try create(temporary, contents: contents, what: what)
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            throw EngineError(.failed, "cannot replace \(what) \(path): \(String(cString: strerror(errno)))")
        }
    }
}
