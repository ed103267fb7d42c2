/// The checksum of a blob's bytes: XXH64 with seed 0, computed while the bytes are copied into
/// the blob, so a write costs no second pass over them.
///
/// XXH64 is not cryptographic: it detects a blob overwritten by accident or by someone who does
/// not also rewrite `ferry.sqlite` (which anyone able to do that can do anyway). It runs at
/// memory speed, several times faster than SHA-256 or a table-driven CRC written in Swift.
struct BlobChecksum {
    private static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let prime3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let prime4: UInt64 = 0x85EB_CA77_C2B2_AE63
    private static let prime5: UInt64 = 0x27D4_EB2F_1656_67C5

    private var v1: UInt64 = prime1 &+ prime2
    private var v2: UInt64 = prime2
    private var v3: UInt64 = 0
    private var v4: UInt64 = 0 &- prime1
    private var length: UInt64 = 0
    /// Bytes of an incomplete 32-byte stripe, waiting for more.
    private var pending: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    private var pendingCount = 0

    init() {}

    /// The checksum of `bytes` in one go.
    static func of(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var checksum = BlobChecksum()
        checksum.update(bytes)
        return checksum.value
    }

    /// Adds the next bytes.
    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        length &+= UInt64(bytes.count)
        var offset = 0
        if pendingCount > 0 {
            let take = min(32 - pendingCount, bytes.count)
            withUnsafeMutableBytes(of: &pending) { buffer in
                buffer.baseAddress!.advanced(by: pendingCount).copyMemory(from: base, byteCount: take)
            }
            pendingCount += take
            offset = take
            guard pendingCount == 32 else { return }
            withUnsafeBytes(of: pending) { consumeStripe($0.baseAddress!) }
            pendingCount = 0
        }
        var a = v1, b = v2, c = v3, d = v4
        while bytes.count - offset >= 32 {
            let stripe = base + offset
            a = Self.round(a, Self.load(stripe, 0))
            b = Self.round(b, Self.load(stripe, 8))
            c = Self.round(c, Self.load(stripe, 16))
            d = Self.round(d, Self.load(stripe, 24))
            offset += 32
        }
        v1 = a; v2 = b; v3 = c; v4 = d
        let rest = bytes.count - offset
        if rest > 0 {
            withUnsafeMutableBytes(of: &pending) { $0.baseAddress!.copyMemory(from: base + offset, byteCount: rest) }
            pendingCount = rest
        }
    }

    /// The checksum of every byte added so far.
    var value: UInt64 {
        var hash: UInt64
        if length >= 32 {
            hash = Self.rotate(v1, 1) &+ Self.rotate(v2, 7) &+ Self.rotate(v3, 12) &+ Self.rotate(v4, 18)
            hash = Self.merge(hash, v1)
            hash = Self.merge(hash, v2)
            hash = Self.merge(hash, v3)
            hash = Self.merge(hash, v4)
        } else {
            hash = v3 &+ Self.prime5
        }
        hash &+= length
        withUnsafeBytes(of: pending) { buffer in
            let tail = buffer.baseAddress!
            var offset = 0
            while pendingCount - offset >= 8 {
                hash ^= Self.round(0, Self.load(tail, offset))
                hash = Self.rotate(hash, 27) &* Self.prime1 &+ Self.prime4
                offset += 8
            }
            if pendingCount - offset >= 4 {
                let word = UInt32(littleEndian: tail.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
                hash ^= UInt64(word) &* Self.prime1
                hash = Self.rotate(hash, 23) &* Self.prime2 &+ Self.prime3
                offset += 4
            }
            while offset < pendingCount {
                hash ^= UInt64(tail.load(fromByteOffset: offset, as: UInt8.self)) &* Self.prime5
                hash = Self.rotate(hash, 11) &* Self.prime1
                offset += 1
            }
        }
        hash ^= hash >> 33
        hash &*= Self.prime2
        hash ^= hash >> 29
        hash &*= Self.prime3
        hash ^= hash >> 32
        return hash
    }

    private mutating func consumeStripe(_ stripe: UnsafeRawPointer) {
        v1 = Self.round(v1, Self.load(stripe, 0))
        v2 = Self.round(v2, Self.load(stripe, 8))
        v3 = Self.round(v3, Self.load(stripe, 16))
        v4 = Self.round(v4, Self.load(stripe, 24))
    }

    @inline(__always)
    private static func load(_ pointer: UnsafeRawPointer, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: pointer.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    @inline(__always)
    private static func rotate(_ value: UInt64, _ count: UInt64) -> UInt64 {
        (value << count) | (value >> (64 - count))
    }

    @inline(__always)
    private static func round(_ accumulator: UInt64, _ input: UInt64) -> UInt64 {
        rotate(accumulator &+ input &* prime2, 31) &* prime1
    }

    @inline(__always)
    private static func merge(_ hash: UInt64, _ accumulator: UInt64) -> UInt64 {
        (hash ^ round(0, accumulator)) &* prime1 &+ prime4
    }
}
