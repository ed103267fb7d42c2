import FerryModel
import FerryTerminal
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Moves bytes from one descriptor to another until end of file: with `splice(2)` when one side
/// is a pipe, otherwise through a 1 MiB buffer; reports progress; gives up when the source
/// delivers nothing for `inactivityTimeout` (promised data whose app stalls).
struct ByteCopier {
    /// Where the bytes come from (read from its current offset).
    var source: Int32
    /// What to call the source in messages.
    var sourceName: String
    /// Where they go.
    var destination: OutputFile
    /// No byte for this long is a timeout (status 5); nil waits forever.
    var inactivityTimeout: Duration?
    /// Told how many bytes went through after every chunk.
    var progress: ProgressBar?
    /// The source is UTF-16 text to be written as UTF-8 (chunk by chunk, through memory).
    var convertingUTF16 = false

    private static let chunk = 1 << 20

    /// Copies to end of file and returns how many bytes were read from the source.
    /// - Throws: `CLIFailure`: status 5 on inactivity, 1 when reading or writing fails or the
    ///   UTF-16 text to convert is not valid.
    func run() throws -> UInt64 {
        var total: UInt64 = 0
        var converter = convertingUTF16 ? UTF16ToUTF8() : nil
        var useSplice = LinuxCalls.splice != nil && converter == nil
        var buffer: UnsafeMutableRawPointer?
        defer { buffer?.deallocate() }
        while true {
            try waitForData()
            if useSplice, let splice = LinuxCalls.splice {
                let n = splice(source, nil, destination.fd, nil, Self.chunk, LinuxCalls.spliceMove)
                if n > 0 {
                    total += UInt64(n)
                    progress?.advance(by: n)
                    continue
                }
                if n == 0 { return total }
                let code = errno
                if code == EINTR || code == EAGAIN { continue }
                // Neither side a pipe, or a file system without splice: copy through memory.
                if code == EINVAL || code == ENOSYS || code == EBADF || code == EXDEV {
                    useSplice = false
                    continue
                }
                throw CLIFailure(.failure, "cannot copy \(sourceName) to \(destination.name): \(LinuxCalls.reason(code))")
            }
            if buffer == nil { buffer = UnsafeMutableRawPointer.allocate(byteCount: Self.chunk, alignment: 16) }
            let n = read(source, buffer!, Self.chunk)
            if n == 0 {
                if converter != nil {
                    do { try destination.write(try converter!.finish()) } catch let error as FerryModelError {
                        throw Self.conversionFailure(error)
                    }
                }
                return total
            }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw CLIFailure(.failure, "cannot read \(sourceName): \(LinuxCalls.reason(errno))")
            }
            let chunk = UnsafeRawBufferPointer(start: buffer!, count: n)
            if converter != nil {
                do { try destination.write(try converter!.convert(chunk)) } catch let error as FerryModelError {
                    throw Self.conversionFailure(error)
                }
            } else {
                try destination.write(chunk)
            }
            total += UInt64(n)
            progress?.advance(by: n)
        }
    }

    /// The failure for UTF-16 text that cannot be converted (what came before it was written).
    static func conversionFailure(_ error: FerryModelError) -> CLIFailure {
        CLIFailure(.failure, "cannot convert the text to UTF-8: \(error.message)")
    }

    /// Waits until the source is readable (or at end of file), at most `inactivityTimeout`.
    private func waitForData() throws {
        guard let inactivityTimeout else { return }
        // poll(2) waits at most Int32.max ms (≈ 24 days); a longer --timeout waits that long at a time.
        let seconds = min(inactivityTimeout.components.seconds, Int64(Int32.max / 1000))
        let milliseconds = seconds * 1000 + inactivityTimeout.components.attoseconds / 1_000_000_000_000_000
        var entry = pollfd(fd: source, events: Int16(POLLIN), revents: 0)
        while true {
            let ready = poll(&entry, 1, Int32(clamping: milliseconds))
            if ready > 0 { return }
            if ready == 0 {
                throw CLIFailure(.timeout, "\(sourceName) delivered nothing for \(inactivityTimeout.components.seconds) s")
            }
            if errno != EINTR { return }  // let the read report it
        }
    }
}
