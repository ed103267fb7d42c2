import FerryTerminal
import CFerryFront
#if canImport(Glibc)
import Glibc
#endif

/// Standard output, written the way the full CLI's `OutputFile` and `ByteCopier` write it, with
/// the same messages: every byte, retrying short writes; a descriptor copied to its end with
/// `splice(2)` when one side is a pipe, else through a 1 MiB buffer; promised data that stalls
/// for the inactivity timeout is status 5. (`PlainCopy` writes standard input into a memory file
/// with it, named as the full CLI names that file.)
struct StandardOutput {
    var fd: Int32 = 1
    var name = "standard output"

    private static let chunk = 1 << 20

    /// Writes every byte.
    func write(_ bytes: [UInt8]) -> FrontFailure? {
        bytes.withUnsafeBytes { write($0) }
    }

    func write(_ buffer: UnsafeRawBufferPointer) -> FrontFailure? {
        var offset = 0
        while offset < buffer.count {
            let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                return FrontFailure(status: 1, message: "cannot write to \(name): " + Self.reason(errno))
            }
            offset += n
        }
        return nil
    }

    /// Copies `source` from its offset to its end; the number of bytes copied.
    func copy(from source: Int32, sourceName: String, inactivityTimeout: Int?,
              progress: ProgressBar?) -> Result<UInt64, FrontFailure> {
        var total: UInt64 = 0
        var useSplice = true
        var buffer: UnsafeMutableRawPointer?
        defer { buffer?.deallocate() }
        while true {
            if let inactivityTimeout, let failure = waitForData(source, sourceName: sourceName, seconds: inactivityTimeout) {
                return .failure(failure)
            }
            if useSplice {
                let n = cferryfront_splice(source, fd, Self.chunk)
                if n > 0 {
                    total += UInt64(n)
                    progress?.advance(by: n)
                    continue
                }
                if n == 0 { return .success(total) }
                let code = errno
                if code == EINTR || code == EAGAIN { continue }
                // Neither side a pipe, or a file system without splice: copy through memory.
                if code == EINVAL || code == ENOSYS || code == EBADF || code == EXDEV {
                    useSplice = false
                    continue
                }
                return .failure(FrontFailure(status: 1, message: "cannot copy \(sourceName) to \(name): " + Self.reason(code)))
            }
            if buffer == nil { buffer = UnsafeMutableRawPointer.allocate(byteCount: Self.chunk, alignment: 16) }
            let n = read(source, buffer!, Self.chunk)
            if n == 0 { return .success(total) }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return .failure(FrontFailure(status: 1, message: "cannot read \(sourceName): " + Self.reason(errno)))
            }
            if let failure = write(UnsafeRawBufferPointer(start: buffer!, count: n)) { return .failure(failure) }
            total += UInt64(n)
            progress?.advance(by: n)
        }
    }

    /// Waits until `source` is readable (or at its end), at most `seconds`.
    private func waitForData(_ source: Int32, sourceName: String, seconds: Int) -> FrontFailure? {
        var entry = pollfd(fd: source, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(clamping: min(seconds, Int(Int32.max / 1000)) * 1000)
        while true {
            let ready = poll(&entry, 1, milliseconds)
            if ready > 0 { return nil }
            if ready == 0 { return FrontFailure(status: 5, message: "\(sourceName) delivered nothing for \(seconds) s") }
            if errno != EINTR { return nil }  // let the read report it
        }
    }

    static func reason(_ code: Int32) -> String { String(cString: strerror(code)) }
}
