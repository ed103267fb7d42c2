@testable import DesktopPicture
import FerryTestSupport
import Foundation
import Testing

@Suite("DesktopPicture zlib stream")
struct ZlibTests {
    /// Random bytes, repeats at every distance of the window, long runs: Python's zlib (another
    /// reader than the one that wrote it) must inflate the stream back exactly, and its CRC-32
    /// must be ours.
    @Test("Python's zlib inflates the stream back to the same bytes; CRC-32 matches Python's")
    func roundTrip() async throws {
        var generator = SplitMix64(seed: 42)
        var data: [UInt8] = []
        for _ in 0..<40_000 { data.append(UInt8(truncatingIfNeeded: generator.next())) }
        for length in 3...258 {
            let distance = 1 + Int(generator.next() % UInt64(min(data.count, 32768)))
            for _ in 0..<length { data.append(data[data.count - distance]) }
            data.append(UInt8(truncatingIfNeeded: generator.next()))
        }
        data += [UInt8](repeating: 7, count: 100_000)
        let compressed = try Zlib.compress(data)
        #expect(compressed.count < data.count / 2)
        #expect(try Zlib.compress(data) == compressed, "the same bytes give the same stream")
        let result = try await ChildProcess.run("/usr/bin/python3", ["-c", """
            import sys, zlib
            data = zlib.decompress(sys.stdin.buffer.read())
            sys.stdout.buffer.write(data)
            sys.stderr.write('%08x' % (zlib.crc32(data) & 0xffffffff))
            """], standardInput: Data(compressed))
        #expect(result.succeeded, "python3: \(result.stderr)")
        #expect(firstDifference(Array(result.standardOutput), data) == nil)
        #expect(result.stderr == String(Zlib.crc32(data), radix: 16).leftPadded(to: 8))
        #expect(Zlib.crc32(Array("123456789".utf8)) == 0xCBF4_3926, "the CRC-32 check value")
        #expect(try Zlib.compress([]).count == 8, "an empty stream: header, one empty block, Adler-32")
    }
}


private extension String {
    func leftPadded(to length: Int) -> String {
        String(repeating: "0", count: max(0, length - count)) + self
    }
}
