@testable import DesktopPicture
import FerryTestSupport
import Foundation
import Testing

@Suite("DesktopPicture zlib stream")
struct ZlibCompressorTests {
    /// Literals, every match length 3–258, distances from 1 to the whole 32 KiB window, and a
    /// stretch of incompressible bytes: Python's zlib must inflate it back exactly.
    @Test("Python's zlib inflates the stream back to the same bytes; Adler-32 matches zlib's")
    func roundTrip() async throws {
        var generator = SplitMix64(seed: 42)
        var data: [UInt8] = []
        for _ in 0..<40_000 { data.append(UInt8(truncatingIfNeeded: generator.next())) }   // literals
        for length in 3...258 {                                                          // every length code
            let distance = 1 + Int(generator.next() % UInt64(min(data.count, 32768)))
            for _ in 0..<length { data.append(data[data.count - distance]) }
            data.append(UInt8(truncatingIfNeeded: generator.next()))
        }
        data += [UInt8](repeating: 7, count: 100_000)                                      // long runs
        data += data[(data.count - 32768)..<(data.count - 32000)]                          // far back
        let compressed = ZlibCompressor.compress(data, rowLength: 1000)
        #expect(compressed.count < data.count)
        let result = try await ChildProcess.run("/usr/bin/python3", ["-c", """
            import sys, zlib
            data = zlib.decompress(sys.stdin.buffer.read())
            sys.stdout.buffer.write(data)
            sys.stderr.write('%08x' % zlib.adler32(data))
            """], standardInput: Data(compressed))
        #expect(result.succeeded, "python3: \(result.stderr)")
        #expect(firstDifference(Array(result.standardOutput), data) == nil)
        #expect(result.stderr == String(ZlibCompressor.adler32(data), radix: 16).leftPadded(to: 8))
        #expect(ZlibCompressor.compress([]).count == 8, "an empty stream: header, one empty block, Adler-32")
    }
}


private extension String {
    func leftPadded(to length: Int) -> String {
        String(repeating: "0", count: max(0, length - count)) + self
    }
}
