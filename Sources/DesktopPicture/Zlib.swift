import CZlib
import FerryModel

/// The system zlib, as the PNG encoder uses it: a zlib stream (RFC 1950) of the best compression,
/// and CRC-32; and inflating a preview image's data to draw it.
enum Zlib {
    /// `data` as one zlib stream at level 9 (deterministic for a given zlib: the same bytes
    /// always give the same stream).
    /// - Throws: `FerryModelError` `.io` when zlib fails (it can only run out of memory).
    static func compress(_ data: [UInt8]) throws(FerryModelError) -> [UInt8] {
        var capacity = compressBound(uLong(data.count))
        var output = [UInt8](repeating: 0, count: Int(capacity))
        let status = output.withUnsafeMutableBufferPointer { out in
            data.withUnsafeBufferPointer { input in
                compress2(out.baseAddress, &capacity, input.baseAddress, uLong(input.count), 9)
            }
        }
        // compressBound is room enough for any input: only running out of memory is left.
        guard status == Z_OK else { throw FerryModelError(.io, "zlib could not compress the picture (error \(status))") }
        output.removeSubrange(Int(capacity)...)
        return output
    }

    /// The `size` bytes a zlib stream holds, nil when it is malformed or holds another amount
    /// (what a PNG's image data must inflate to is known before it is inflated).
    static func uncompress(_ stream: [UInt8], size: Int) -> [UInt8]? {
        guard size > 0 else { return nil }
        var output = [UInt8](repeating: 0, count: size)
        var length = uLong(size)
        let status = output.withUnsafeMutableBufferPointer { out in
            stream.withUnsafeBufferPointer { input in
                CZlib.uncompress(out.baseAddress, &length, input.baseAddress, uLong(input.count))
            }
        }
        guard status == Z_OK, length == uLong(size) else { return nil }
        return output
    }

    /// The CRC-32 of `bytes` (ISO 3309, as PNG chunks and zip entries use it).
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBufferPointer { UInt32(CZlib.crc32(0, $0.baseAddress, uInt($0.count))) }
    }
}
