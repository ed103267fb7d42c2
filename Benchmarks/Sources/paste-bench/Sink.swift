#if canImport(Glibc)
import Glibc
#endif

/// Reading an fd to its end into a reused buffer: the /dev/null-like sink every throughput
/// benchmark uses, so all of them pay the same copy into user memory.
enum Sink {
    static let chunk = 1 << 20

    /// Reads `fd` to end of file; returns the byte count (and the bytes when `keep`).
    static func drain(_ fd: Int32, keep: Bool = false) -> (count: Int, kept: [UInt8]) {
        var buffer = [UInt8](repeating: 0, count: keep ? 65536 : chunk)
        var total = 0
        var kept: [UInt8] = []
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 { if errno == EINTR { continue }; break }
            if n == 0 { break }
            total += n
            if keep { kept += buffer[0..<n] }
        }
        return (total, kept)
    }
}
