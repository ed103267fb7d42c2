/// Converts UTF-16 text to UTF-8 piece by piece, so text of any size streams through a small
/// buffer (`ferry paste -t text/plain;charset=utf-8` of a `public.utf16-plain-text` item).
///
/// The byte order comes from a byte-order mark, which is dropped; without one, from the first
/// 4 KiB: text mostly below U+0100 has its zero bytes first in big-endian and second in
/// little-endian, and when that does not tell (no zero bytes) little-endian is taken — what
/// Linux apps and Apple's `public.utf16-plain-text` write on the machines Ferry runs on.
/// Unpaired surrogates and an odd number of bytes are errors, never replaced.
public struct UTF16ToUTF8: Sendable {
    /// The order of the two bytes of a code unit.
    public enum ByteOrder: Sendable, Hashable {
        /// Low byte first (`FF FE` mark).
        case littleEndian
        /// High byte first (`FE FF` mark).
        case bigEndian
    }

    /// The byte order, once known (nil before).
    public private(set) var byteOrder: ByteOrder?
    /// How many input bytes were converted so far (a byte-order mark and a high surrogate
    /// waiting for its low one included; a byte waiting for its partner not).
    public private(set) var consumed: Int = 0
    /// A byte waiting for its partner.
    private var pendingByte: UInt8?
    /// A high surrogate waiting for its low one.
    private var pendingHigh: UInt16?

    /// Makes a converter; `byteOrder` nil detects it from the text (a given order takes the
    /// text as it is: a mark in it is U+FEFF).
    public init(byteOrder: ByteOrder? = nil) {
        self.byteOrder = byteOrder
    }

    /// Converts the next piece of the text. Until the byte order is known (a mark, or the
    /// first 4 KiB of text), bytes are held back, so the order found does not depend on how
    /// the text was cut into pieces.
    /// - Returns: the UTF-8 bytes of the code points completed so far.
    /// - Throws: `FerryModelError` `.invalidArgument` at an unpaired surrogate, naming its byte offset.
    public mutating func convert(_ bytes: UnsafeRawBufferPointer) throws(FerryModelError) -> [UInt8] {
        guard byteOrder == nil else { return try process(bytes) }
        head += bytes
        let marked = head.count >= 2 && Self.mark(head[0], head[1]) != nil
        guard marked || head.count >= Self.detectionLength else { return [] }
        return try decide()
    }

    /// Converts the next piece of the text (see ``convert(_:)-(UnsafeRawBufferPointer)``).
    public mutating func convert(_ bytes: [UInt8]) throws(FerryModelError) -> [UInt8] {
        var result: Result<[UInt8], FerryModelError> = .success([])
        bytes.withUnsafeBytes { buffer in
            do throws(FerryModelError) { result = .success(try convert(buffer)) } catch { result = .failure(error) }
        }
        return try result.get()
    }

    /// Ends the text.
    /// - Returns: the UTF-8 bytes of what was still held back.
    /// - Throws: `FerryModelError` `.invalidArgument` when a byte or a high surrogate is left
    ///   over, or at an unpaired surrogate in what was held back.
    public mutating func finish() throws(FerryModelError) -> [UInt8] {
        let output = byteOrder == nil ? try decide() : []
        if pendingByte != nil {
            throw FerryModelError(.invalidArgument, "not valid UTF-16: an odd number of bytes (\(consumed + 1))")
        }
        if pendingHigh != nil {
            throw FerryModelError(.invalidArgument, "not valid UTF-16: the text ends in half a surrogate pair (byte \(consumed - 2))")
        }
        return output
    }

    /// How many bytes of text without a mark are looked at to tell the byte order.
    private static let detectionLength = 4096
    /// The bytes held back until the byte order is known.
    private var head: [UInt8] = []

    /// The order a byte-order mark says, nil when the two bytes are not one.
    private static func mark(_ first: UInt8, _ second: UInt8) -> ByteOrder? {
        switch (first, second) {
        case (0xFE, 0xFF): .bigEndian
        case (0xFF, 0xFE): .littleEndian
        default: nil
        }
    }

    /// Settles the byte order from the held-back bytes (a mark, dropped; else where their zero
    /// bytes fall) and converts them.
    private mutating func decide() throws(FerryModelError) -> [UInt8] {
        var held = head
        head = []
        if held.count >= 2, let order = Self.mark(held[0], held[1]) {
            byteOrder = order
            held.removeFirst(2)
            consumed = 2
        } else {
            var zerosFirst = 0, zerosSecond = 0
            var index = 0
            while index + 1 < held.count {
                if held[index] == 0 { zerosFirst += 1 }
                if held[index + 1] == 0 { zerosSecond += 1 }
                index += 2
            }
            byteOrder = zerosFirst > zerosSecond ? .bigEndian : .littleEndian
        }
        var result: Result<[UInt8], FerryModelError> = .success([])
        held.withUnsafeBytes { buffer in
            do throws(FerryModelError) { result = .success(try process(buffer)) } catch { result = .failure(error) }
        }
        return try result.get()
    }

    /// Converts bytes once the byte order is known.
    private mutating func process(_ bytes: UnsafeRawBufferPointer) throws(FerryModelError) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + bytes.count / 2)
        let bigEndian = byteOrder == .bigEndian
        var index = 0
        if let first = pendingByte, let second = bytes.first {
            pendingByte = nil
            index = 1
            try append(bigEndian ? UInt16(first) << 8 | UInt16(second) : UInt16(second) << 8 | UInt16(first), to: &output)
            consumed += 2
        }
        while index + 1 < bytes.count {
            let first = bytes[index], second = bytes[index + 1]
            index += 2
            try append(bigEndian ? UInt16(first) << 8 | UInt16(second) : UInt16(second) << 8 | UInt16(first), to: &output)
            consumed += 2
        }
        if index < bytes.count { pendingByte = bytes[index] }
        return output
    }

    private mutating func append(_ unit: UInt16, to output: inout [UInt8]) throws(FerryModelError) {
        let scalar: UInt32
        if let high = pendingHigh {
            guard (0xDC00...0xDFFF).contains(unit) else {
                throw FerryModelError(.invalidArgument,
                                      "not valid UTF-16: a high surrogate without its low one (byte \(consumed - 2))")
            }
            pendingHigh = nil
            scalar = 0x10000 + ((UInt32(high) - 0xD800) << 10) + (UInt32(unit) - 0xDC00)
        } else if (0xD800...0xDBFF).contains(unit) {
            pendingHigh = unit
            return
        } else if (0xDC00...0xDFFF).contains(unit) {
            throw FerryModelError(.invalidArgument, "not valid UTF-16: a low surrogate without its high one (byte \(consumed))")
        } else {
            scalar = UInt32(unit)
        }
        switch scalar {
        case ..<0x80:
            output.append(UInt8(scalar))
        case ..<0x800:
            output.append(UInt8(0xC0 | scalar >> 6))
            output.append(UInt8(0x80 | scalar & 0x3F))
        case ..<0x10000:
            output.append(UInt8(0xE0 | scalar >> 12))
            output.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            output.append(UInt8(0x80 | scalar & 0x3F))
        default:
            output.append(UInt8(0xF0 | scalar >> 18))
            output.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            output.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            output.append(UInt8(0x80 | scalar & 0x3F))
        }
    }
}
