import DBus
import FerryModel
import FerrySystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Reads a descriptor to end of file on a thread of the blocking pool (`BlockingIO`), reporting
/// the bytes to a progress as they arrive, and stops at once when the reading task is cancelled:
/// the thread waits in `poll` on the descriptor and on the `Wake` that the task's cancellation
/// signals, so a cancelled read neither waits for the next byte nor for the end of the transfer.
///
/// Given a connection, the first ``polledLimit`` bytes are read by the calling task as they
/// arrive, the descriptor polled on the connection's thread (`Connection.waitForDescriptor`):
/// a small promised paste read from the connection's executor then costs no thread hop at all.
/// Whatever is left after that goes to the blocking pool, so a large transfer never holds up the
/// connection.
enum DescriptorDrain {
    /// The most bytes taken from the descriptor at once.
    static let chunkSize = 1 << 20
    /// How many bytes are read by polling on a connection before the rest goes to the blocking pool.
    static let polledLimit = 64 << 10

    /// Every byte of `fd` up to end of file. Leaves `fd` open (the caller closes it, which a
    /// source still writing then sees as a broken pipe).
    /// - Parameters:
    ///   - limit: fail with `.tooLarge` past this many bytes.
    ///   - progress: gets ``ItemProvider/Progress/completedUnitCount`` after every chunk (and
    ///     `expectedSize` as its total when it has none).
    ///   - expectedSize: the size the sender announced, nil when unknown.
    ///   - connection: polls the descriptor for the first ``polledLimit`` bytes (nil: the
    ///     blocking pool reads everything). Only for a pipe or socket: a regular file is always ready.
    /// - Throws: `FerryError`: `.cancelled` when the task or `progress` is cancelled, `.io` when
    ///   reading fails, `.tooLarge`.
    static func readAll(_ fd: FileDescriptor, limit: Int = Int.max, progress: ItemProvider.Progress? = nil,
                        expectedSize: Int64? = nil, polledBy connection: Connection? = nil) async throws(FerryError) -> [UInt8] {
        if let progress, let expectedSize, expectedSize > 0, progress.totalUnitCount <= 0 {
            progress.totalUnitCount = expectedSize
        }
        var start: [UInt8] = []
        if let connection, (expectedSize ?? 0) < polledLimit {
            if try await drainPolled(fd, by: connection, limit: limit, progress: progress, expectedSize: expectedSize,
                                     into: &start) {
                return start
            }
        }
        let polled = start
        do {
            return try await BlockingIO.run(cancellable: { wake in
                try drain(fd, wake: wake, limit: limit, progress: progress, expectedSize: expectedSize, after: polled)
            })
        } catch {
            throw FerryError.converting(error)
        }
    }

    /// Reads `fd` into `result` by the calling task while it has delivered fewer than
    /// ``polledLimit`` bytes, waiting for it on `connection`'s thread. Returns true at end of
    /// file, false when the blocking pool should read the rest (more bytes, or the connection closed).
    private static func drainPolled(_ fd: FileDescriptor, by connection: Connection, limit: Int,
                                    progress: ItemProvider.Progress?, expectedSize: Int64?,
                                    into result: inout [UInt8]) async throws(FerryError) -> Bool {
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: min(bufferSize(expectedSize: expectedSize), polledLimit),
                                                           alignment: 16)
        defer { chunk.deallocate() }
        while result.count < polledLimit {
            if Task.isCancelled || progress?.isCancelled == true { throw FerryError(.cancelled, "the read was cancelled") }
            let n: Int, error: Int32
            do {
                (n, error) = try fd.withRawValue { raw -> (Int, Int32) in
                    var entry = pollfd(fd: raw, events: Int16(POLLIN), revents: 0)
                    guard poll(&entry, 1, 0) == 1 else { return (-2, 0) }
                    let n = Glibc.read(raw, chunk.baseAddress, chunk.count)
                    return (n, n < 0 ? errno : 0)
                }
            } catch {
                throw FerryError(.io, "cannot read: the descriptor was closed")
            }
            if n == -2 {
                guard let raw = fd.rawValue else { throw FerryError(.cancelled, "the read was cancelled") }
                do {
                    _ = try await connection.waitForDescriptor(raw, events: Int16(POLLIN))
                } catch is CancellationError {
                    throw FerryError(.cancelled, "the read was cancelled")
                } catch {
                    return false  // the connection closed: the blocking pool reads the rest
                }
                continue
            }
            if n < 0 {
                if error == EINTR || error == EAGAIN { continue }
                throw FerryError(.io, "cannot read: \(String(cString: strerror(error)))")
            }
            if n == 0 { return true }
            guard result.count + n <= limit else { throw FerryError(.tooLarge, "more than \(limit) bytes") }
            result.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[0..<n]))
            progress?.completedUnitCount = Int64(result.count)
        }
        return false
    }

    /// The read buffer for a transfer of `expectedSize` bytes: room for all of them and the end
    /// of file in one read when they are few, ``chunkSize`` when they are many or unknown.
    static func bufferSize(expectedSize: Int64?) -> Int {
        guard let expectedSize, expectedSize >= 0, expectedSize < chunkSize else { return chunkSize }
        return max(Int(expectedSize) + 1, 16 << 10)
    }

    private static func drain(_ fd: FileDescriptor, wake: Wake, limit: Int, progress: ItemProvider.Progress?,
                              expectedSize: Int64?, after polled: [UInt8]) throws -> [UInt8] {
        var result = polled
        if let expectedSize, expectedSize > 0 { result.reserveCapacity(min(Int(clamping: expectedSize), limit, chunkSize * 64)) }
        // Not zeroed: read() fills what is used. A zeroed 1 MiB per paste cost a 1 KiB paste more
        // than its read (the memset and a page fault per page).
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize(expectedSize: expectedSize), alignment: 16)
        defer { chunk.deallocate() }
        while true {
            if progress?.isCancelled == true { throw FerryError(.cancelled, "the read was cancelled") }
            let n = try fd.withRawValue { raw -> Int in
                do {
                    guard try wake.poll(raw) == .ready else { return -2 }
                } catch {
                    throw FerryError(.io, "cannot wait for the pipe: \(error)")
                }
                let n = Glibc.read(raw, chunk.baseAddress, chunk.count)
                if n < 0 && errno != EINTR && errno != EAGAIN {
                    throw FerryError(.io, "cannot read: \(String(cString: strerror(errno)))")
                }
                return n
            }
            if n == -2 { throw FerryError(.cancelled, "the read was cancelled") }
            if n < 0 { continue }
            if n == 0 { return result }
            guard result.count + n <= limit else { throw FerryError(.tooLarge, "more than \(limit) bytes") }
            result.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[0..<n]))
            progress?.completedUnitCount = Int64(result.count)
        }
    }
}
