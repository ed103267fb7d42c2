@preconcurrency import Crypto
import Foundation

/// Seals everything that crosses the engine with the user's 256-bit key (AES-GCM), so the engine
/// sees subjects, sizes and timing, never content. The associated data binds each sealed value
/// to where it goes (the subject and, for replies, the request), so a value cannot be replayed
/// under another device's key or for another chunk.
public struct Seal: Sendable {
    let key: SymmetricKey

    /// A seal with `key` (32 bytes).
    public init(key: [UInt8]) throws {
        guard key.count == 32 else { throw EngineError(.failed, "the continuity key must be 32 bytes, not \(key.count)") }
        self.key = SymmetricKey(data: key)
    }

    /// Reads the key file: 64 hexadecimal digits (a trailing newline allowed), mode 0600.
    public init(keyFile path: String) throws {
        try SecretFile.check(path, what: "the continuity key file")
        guard let data = FileManager.default.contents(atPath: path),
              let text = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines),
              let bytes = Self.hex(text) else {
            throw EngineError(.failed, "the continuity key file \(path) must hold 64 hexadecimal digits")
        }
        try self.init(key: bytes)
    }

    /// Makes a new random key and writes it to `path` (mode 0600; an existing file is never
    /// replaced).
    /// - Throws: ``EngineError`` naming the file.
    public static func create(keyFile path: String) throws -> Seal {
        let made = random()
        try made.write(to: path, replacing: false)
        return made
    }

    /// A seal with a new random key.
    static func random() -> Seal {
        Seal(symmetricKey: SymmetricKey(size: .bits256))
    }

    private init(symmetricKey: SymmetricKey) {
        key = symmetricKey
    }

    /// Writes this seal's key to `path` (mode 0600): a new file, or replacing the file there
    /// when `replacing`.
    /// - Throws: ``EngineError`` naming the file.
    func write(to path: String, replacing: Bool) throws {
        let text = keyBytes.map { String(format: "%02x", $0) }.joined() + "\n"
        if replacing {
            try SecretFile.replace(path, contents: text, what: "the continuity key file")
        } else {
            try SecretFile.create(path, contents: text, what: "the continuity key file")
        }
    }

    /// The key's 32 bytes (sent, sealed, to a device that joins).
    var keyBytes: [UInt8] { key.withUnsafeBytes { Array($0) } }

    /// A new random key as the key file holds it (64 hexadecimal digits).
    public static func makeKeyText() -> String {
        SymmetricKey(size: .bits256).withUnsafeBytes { $0.map { String(format: "%02x", $0) }.joined() }
    }

    static func hex(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count == 64 else { return nil }
        var out: [UInt8] = []
        for index in stride(from: 0, to: 64, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16) else { return nil }
            out.append(byte)
        }
        return out
    }

    /// `plain` sealed for `context`: nonce, ciphertext and tag.
    public func seal(_ plain: [UInt8], context: String) throws -> [UInt8] {
        let box = try AES.GCM.seal(plain, using: key, authenticating: Array(context.utf8))
        guard let combined = box.combined else { throw EngineError(.failed, "cannot seal") }
        return [UInt8](combined)
    }

    /// The plain bytes of `sealed`, when it was sealed with this key for `context`.
    /// - Throws: ``EngineError`` `.failed` for anything else (another key, another context, tampering).
    public func open(_ sealed: [UInt8], context: String) throws -> [UInt8] {
        [UInt8](try sealed.withUnsafeBytes { try open(contentsOf: $0, context: context) })
    }

    /// The plain bytes of `sealed` as swift-crypto gives them (no copy into an array: a chunk is
    /// written on from here), when it was sealed with this key for `context`.
    /// - Throws: ``EngineError`` `.failed` for anything else (another key, another context, tampering).
    public func open(contentsOf sealed: UnsafeRawBufferPointer, context: String) throws -> Data {
        do {
            let box = try AES.GCM.SealedBox(combined: sealed)
            return try AES.GCM.open(box, using: key, authenticating: Array(context.utf8))
        } catch {
            throw EngineError(.failed, "a value for \(context) does not open with this user's key")
        }
    }
}
