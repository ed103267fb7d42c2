#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import FerryModel

/// Reads a representation's bytes from a file descriptor a writer handed over: from its current
/// offset or from a given offset (with `pread`, leaving the shared offset alone), to end of file
/// or for a given length, and giving up with `Timeout` when it delivers nothing for `timeout`
/// (a pipe whose writer never writes). A regular file that changes while it is read (a rewrite in
/// progress) is refused with `Unavailable` at its end, so no copy mixes two versions of it.
package struct DescriptorReader {
    /// The descriptor (not owned).
    let descriptor: Int32
    /// Where the next positional read starts; nil reads from the descriptor's current offset.
    private(set) var offset: Int64?
    /// How many bytes are still expected; nil reads to end of file.
    private(set) var remaining: Int64?
    /// How long one read may wait for data.
    let timeout: Duration
    /// How many bytes were read so far.
    private(set) var delivered: Int64 = 0
    /// The file's identity when the reader was made; nil when it is not a regular file.
    private let identity: FileIdentity?

    /// Makes a reader of `descriptor`.
    /// - Parameters:
    ///   - offset: read from this offset (positional reads); nil: from the current offset.
    ///   - length: read exactly this many bytes; nil: to end of file.
    ///   - timeout: the longest wait for data before `Timeout`.
    package init(_ descriptor: Int32, offset: Int64? = nil, length: Int64? = nil, timeout: Duration) {
        self.descriptor = descriptor
        self.offset = offset
        self.remaining = length
        self.timeout = timeout
        self.identity = descriptor >= 0 ? FileIdentity(descriptor: descriptor) : nil
    }

    /// Reads up to `buffer.count` bytes. Returns 0 at the end (end of file, or `length` read).
    /// - Throws: `FerryModelError` `.invalidArgument` when the descriptor cannot be read (or not
    ///   at an offset, or ends before `length`), `.timeout` when it delivers nothing for `timeout`.
    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard descriptor >= 0 else { throw FerryModelError(.invalidArgument, "the file descriptor is not open") }
        if offset != nil, delivered == 0, lseek(descriptor, 0, SEEK_CUR) < 0, errno == ESPIPE {
            throw FerryModelError(.invalidArgument, "the file descriptor cannot be read at an offset (a pipe or socket)")
        }
        var wanted = buffer.count
        if let remaining {
            if remaining == 0 { try checkUnchanged(); return 0 }
            wanted = Int(min(Int64(wanted), remaining))
        }
        while true {
            try waitUntilReadable()
            let count = if let offset {
                pread(descriptor, buffer.baseAddress, wanted, off_t(offset))
            } else {
                Glibc.read(descriptor, buffer.baseAddress, wanted)
            }
            if count > 0 {
                delivered += Int64(count)
                if let offset { self.offset = offset + Int64(count) }
                if let remaining { self.remaining = remaining - Int64(count) }
                return count
            }
            if count == 0 {
                if let remaining, remaining > 0 {
                    throw FerryModelError(.invalidArgument,
                                          "the file descriptor ended after \(delivered) of \(delivered + remaining) bytes (length)")
                }
                try checkUnchanged()
                return 0
            }
            switch errno {
            case EINTR, EAGAIN: continue
            case ESPIPE:
                throw FerryModelError(.invalidArgument, "the file descriptor cannot be read at an offset (a pipe or socket)")
            case EISDIR:
                throw FerryModelError(.invalidArgument, "the file descriptor is a directory")
            default:
                throw FerryModelError(.invalidArgument, "the file descriptor cannot be read: errno \(errno)")
            }
        }
    }

    /// Reads until `limit` bytes or the end. Returns the bytes and whether it hit the end.
    package mutating func read(upTo limit: Int) throws -> (Data, atEnd: Bool) {
        var data = Data(count: limit)
        var filled = 0
        var atEnd = false
        try data.withUnsafeMutableBytes { raw in
            while filled < limit {
                let count = try read(into: UnsafeMutableRawBufferPointer(rebasing: raw[filled...]))
                if count == 0 { atEnd = true; break }
                filled += count
            }
        }
        data.count = filled
        if !atEnd, remaining == 0 {
            try checkUnchanged()
            atEnd = true
        }
        return (data, atEnd)
    }

    /// At the end of a regular file: refuses what was read when the file changed meanwhile.
    /// - Throws: `FerryModelError` `.unavailable` naming the change.
    func checkUnchanged() throws {
        guard let identity, let now = FileIdentity(descriptor: descriptor), let change = now.change(since: identity) else { return }
        throw FerryModelError(.unavailable, "the file changed while it was read (\(change)); nothing was stored: "
                              + "copy it again once it is written")
    }

    /// Waits until the descriptor has data (or end of file), at most `timeout`.
    private func waitUntilReadable() throws {
        let milliseconds = timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while true {
            let ready = poll(&poller, 1, Int32(clamping: max(0, milliseconds)))
            if ready > 0 { return }
            if ready == 0 {
                throw FerryModelError(.timeout, "the file descriptor delivered no data for \(timeout)")
            }
            if errno == EINTR { continue }
            throw FerryModelError(.invalidArgument, "the file descriptor cannot be polled: errno \(errno)")
        }
    }
}
