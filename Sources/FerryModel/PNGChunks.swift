/// The chunks of a PNG file (PNG specification §5.3): after the 8-byte signature, each chunk is a
/// 4-byte big-endian length, a 4-byte type, the body and a CRC, up to the `IEND` chunk. The
/// walk checks the framing only (the CRCs are not checked: nothing here is trusted for being
/// whole, and a reader of the pixels checks what it decodes).
public struct PNGChunks: Sendable {
    /// One chunk: its type (`IHDR`, `IDAT`, …) and its body.
    public struct Chunk: Sendable {
        /// The 4-character type.
        public let type: String
        /// The body, without length, type and CRC.
        public let body: ArraySlice<UInt8>
    }

    /// Why bytes are not a framed PNG.
    public struct Malformed: Error, Sendable, CustomStringConvertible {
        /// What is wrong, as a phrase ("it has no IEND chunk").
        public let description: String
    }

    /// The PNG signature every file starts with.
    public static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// The chunks in file order, `IEND` last.
    public let chunks: [Chunk]

    /// Walks `bytes`.
    /// - Throws: ``Malformed`` for a missing signature, a chunk cut short or running past the
    ///   end, bytes after `IEND`, or no `IEND`.
    public init(_ bytes: [UInt8]) throws(Malformed) {
        guard bytes.starts(with: Self.signature) else { throw Malformed(description: "it does not start with the PNG signature") }
        var chunks: [Chunk] = []
        var offset = Self.signature.count
        while chunks.last?.type != "IEND" {
            guard offset < bytes.count else { throw Malformed(description: "it has no IEND chunk") }
            guard offset + 12 <= bytes.count else { throw Malformed(description: "a chunk is cut short at byte \(offset)") }
            let length = Self.bigEndian(bytes[offset..<offset + 4])
            let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
            guard length <= bytes.count - offset - 12 else { throw Malformed(description: "chunk \(type) runs past the end") }
            chunks.append(Chunk(type: type, body: bytes[offset + 8..<offset + 8 + length]))
            offset += 12 + length
        }
        guard offset == bytes.count else { throw Malformed(description: "there are bytes after its IEND chunk") }
        self.chunks = chunks
    }

    /// A big-endian unsigned number of up to 8 bytes.
    public static func bigEndian(_ bytes: some Collection<UInt8>) -> Int {
        bytes.reduce(0) { $0 << 8 | Int($1) }
    }
}
