@testable import BrokerCore
import Testing

@Suite struct BlobChecksumTests {
    static func checksum(_ text: String) -> UInt64 {
        Array(text.utf8).withUnsafeBytes { BlobChecksum.of($0) }
    }

    @Test("XXH64 (seed 0) of known inputs")
    func knownValues() {
        #expect(Self.checksum("") == 0xEF46_DB37_51D8_E999)
        #expect(Self.checksum("a") == 0xD24E_C4F1_A98C_6E5B)
        #expect(Self.checksum("abc") == 0x44BC_2CF5_AD77_0999)
        #expect(Self.checksum("Nobody inspects the spammish repetition") == 0xFBCE_A83C_8A37_8BF1)
    }

    @Test("fed in pieces of any size, the checksum is the one of the whole")
    func piecesMatchTheWhole() {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<100_003).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ $0 >> 5) }
        let whole = bytes.withUnsafeBytes { BlobChecksum.of($0) }
        for pieceLimit in [1, 3, 31, 32, 33, 64, 1000, 65_537] {
            var checksum = BlobChecksum()
            var offset = 0
            bytes.withUnsafeBytes { all in
                while offset < all.count {
                    let count = min(Int.random(in: 0...pieceLimit, using: &generator), all.count - offset)
                    checksum.update(UnsafeRawBufferPointer(rebasing: all[offset..<offset + count]))
                    offset += count
                }
            }
            #expect(checksum.value == whole, "pieces of at most \(pieceLimit) bytes")
        }
        var changed = bytes
        changed[50_000] ^= 1
        #expect(changed.withUnsafeBytes { BlobChecksum.of($0) } != whole, "one bit changes it")
    }
}
