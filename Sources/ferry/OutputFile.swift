import FerryTerminal
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A descriptor bytes are written to: standard output, or the temporary file of `-o`.
struct OutputFile: Sendable {
    /// The raw descriptor (not owned).
    let fd: Int32
    /// What to call it in messages.
    let name: String

    static let standardOutput = OutputFile(fd: 1, name: "standard output")

    /// Writes every byte, retrying short writes and EINTR.
    /// - Throws: `CLIFailure` (status 1) naming the output and the system's reason.
    func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    /// Writes every byte of `buffer`.
    func write(_ buffer: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < buffer.count {
            let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw CLIFailure(.failure, "cannot write to \(name): \(LinuxCalls.reason(errno))")
            }
            offset += n
        }
    }
}
