import FerryModel
import Foundation
import Testing

/// The streaming UTF-16 → UTF-8 converter behind `ferry paste -t text/plain;charset=utf-8`.
@Suite("UTF16ToUTF8: streaming conversion")
struct UTF16ToUTF8Tests {
    static let text = "aé€😀\u{0}Z 世界"

    static func encode(_ text: String, bigEndian: Bool, mark: Bool) -> [UInt8] {
        ((mark ? [0xFEFF] : []) + Array(text.utf16)).flatMap { unit in
            bigEndian ? [UInt8(unit >> 8), UInt8(unit & 0xFF)] : [UInt8(unit & 0xFF), UInt8(unit >> 8)]
        }
    }

    /// Converts `bytes` fed in pieces of `size`.
    static func convert(_ bytes: [UInt8], pieces size: Int) throws -> [UInt8] {
        var converter = UTF16ToUTF8()
        var output: [UInt8] = []
        var start = 0
        while start < bytes.count {
            output += try converter.convert(Array(bytes[start..<min(start + size, bytes.count)]))
            start += size
        }
        output += try converter.finish()
        return output
    }

    @Test("both byte orders, with and without a mark, fed in pieces of every size from 1 to 7 bytes",
          arguments: [(false, true), (true, true), (false, false), (true, false)])
    func roundTrip(bigEndian: Bool, mark: Bool) throws {
        let bytes = Self.encode(Self.text, bigEndian: bigEndian, mark: mark)
        for size in 1...7 {
            #expect(try Self.convert(bytes, pieces: size) == Array(Self.text.utf8), "pieces of \(size)")
        }
    }

    @Test("4 KiB of Latin text without a mark: the order is found from its zero bytes, however it is cut",
          arguments: [false, true])
    func detection(bigEndian: Bool) throws {
        let text = String(repeating: "plain text ", count: 400)
        let bytes = Self.encode(text, bigEndian: bigEndian, mark: false)
        for size in [1, 3, 4095, bytes.count] {
            #expect(try Self.convert(bytes, pieces: size) == Array(text.utf8), "pieces of \(size)")
        }
        var converter = UTF16ToUTF8()
        #expect(try converter.convert(bytes) == Array(text.utf8), "past 4 KiB it converts at once")
        #expect(converter.byteOrder == (bigEndian ? .bigEndian : .littleEndian))
    }

    @Test("a mark decides the order even when the text would suggest the other")
    func markWins() throws {
        var converter = UTF16ToUTF8()
        // FE FF, then "A" big-endian: 00 41.
        #expect(try converter.convert([0xFE, 0xFF, 0x00, 0x41]) == [0x41])
        #expect(converter.byteOrder == .bigEndian)
        var little = UTF16ToUTF8()
        #expect(try little.convert([0xFF, 0xFE, 0x41, 0x00]) == [0x41])
        #expect(little.byteOrder == .littleEndian)
    }

    @Test("without a mark and without zero bytes (CJK text), little-endian is taken")
    func defaultOrder() throws {
        var converter = UTF16ToUTF8()
        #expect(try converter.convert(Self.encode("世界", bigEndian: false, mark: false)).isEmpty, "held back: no mark, under 4 KiB")
        #expect(converter.byteOrder == nil)
        #expect(try converter.finish() == Array("世界".utf8))
        #expect(converter.byteOrder == .littleEndian)
    }

    @Test("unpaired surrogates and an odd length are invalidArgument naming the byte", arguments: [
        ([0x00, 0xDC, 0x41, 0x00], "a low surrogate without its high one (byte 0)"),
        ([0x41, 0x00, 0x3D, 0xD8, 0x41, 0x00], "a high surrogate without its low one (byte 2)"),
        ([0x41, 0x00, 0x3D, 0xD8], "the text ends in half a surrogate pair (byte 2)"),
        ([0x41, 0x00, 0x42], "an odd number of bytes (3)"),
    ] as [([UInt8], String)])
    func invalid(bytes: [UInt8], message: String) {
        for size in [1, bytes.count] {
            let error = #expect(throws: FerryModelError.self) { _ = try Self.convert(bytes, pieces: size) }
            #expect(error?.code == .invalidArgument)
            #expect(error?.message == "not valid UTF-16: \(message)", "pieces of \(size)")
        }
    }
}
