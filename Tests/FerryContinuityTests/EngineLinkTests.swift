import CNATS
@preconcurrency import Crypto
@testable import FerryContinuity
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// How a link signs in to a real nats-server. libnats 3.4.1 drops a signature whose first byte
/// is zero (one nonce in 256) and the engine then refuses the device, so ferryd signs the nonce
/// itself, refuses such a nonce, and connects again with a new one: every connection must get
/// in, and a key the engine does not list must not.
@Suite("Continuity: a link signs in with the device's key", .serialized)
struct EngineLinkTests {
    @Test("100 links in a row all sign in; a seed the engine does not list is refused by name")
    func signsIn() async throws {
        try await ContinuityEngine.withDevices([]) { engine, _ in
            for _ in 0..<100 {
                let link = try engine.link(as: "laptop")
                #expect(link.isConnected)
                link.close()
            }
            let stranger = engine.directory.appendingPathComponent("stranger.nk").path
            try engine.writeSecret(NKey.makeUserSeed().seed + "\n", to: stranger)
            let refused = #expect(throws: EngineError.self) {
                try EngineLink(address: EngineAddress(url: engine.url, seedFile: stranger, caFile: engine.caFile), name: "stranger")
            }
            #expect(refused?.description.contains("Authorization Violation") == true, "\(String(describing: refused))")
        }
    }

    /// What the signer answers libnats for `nonce`.
    func sign(_ signer: NonceSigner, _ nonce: String) -> (status: natsStatus, signature: [UInt8]?, error: String?) {
        var signature: UnsafeMutablePointer<UInt8>?
        var length: Int32 = 0
        var error: UnsafeMutablePointer<CChar>?
        let status = nonce.withCString { signer.sign($0, into: &signature, &length, &error) }
        defer { free(signature); free(error) }
        return (status, signature.map { Array(UnsafeBufferPointer(start: $0, count: Int(length))) }, error.map { String(cString: $0) })
    }

    @Test("a nonce's signature is the device key's Ed25519 signature of its bytes; one that begins with a zero byte is refused")
    func signature() throws {
        let pair = NKey.makeUserSeed()
        let key = try NKey.signingKey(ofSeed: pair.seed)
        #expect(NKey.publicKey(of: key) == pair.publicKey)
        let signer = NonceSigner(key: key)
        // The key is new each run: take a nonce whose signature does not begin with zero (255 in 256 do).
        let nonce = try #require((0..<1000).lazy.map { "d2hhdCB0aGUgZW5naW5lIHNlbnQ\($0)" }.first {
            (try? key.signature(for: Data($0.utf8)))?.first != 0
        })
        let signed = sign(signer, nonce)
        let bytes = try #require(signed.signature)
        #expect(signed.status == NATS_OK && signed.error == nil && bytes.count == 64)
        #expect(key.publicKey.isValidSignature(bytes, for: Data(nonce.utf8)))

        // Ed25519 is deterministic: find a nonce whose signature begins with zero (1 in 256).
        let zeroLed = try #require((0..<100_000).lazy.map { "nonce-\($0)" }.first {
            (try? key.signature(for: Data($0.utf8)))?.first == 0
        })
        let refused = sign(signer, zeroLed)
        #expect(refused.status != NATS_OK && refused.signature == nil)
        #expect(refused.error?.contains("zero byte") == true, "\(String(describing: refused.error))")
        #expect(signer.refusals.load(ordering: .relaxed) == 1)
    }
}
