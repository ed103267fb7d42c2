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
enum DescriptorDrain {
    /// The most bytes taken from the descriptor at once.
    static let chunkSize = 1 << 20

    /// Every byte of `fd` up to end of file. Leaves `fd` open (the caller closes it, which a
    /// source still writing then sees as a broken pipe).
    /// - Parameters:
    ///   - limit: fail with `.tooLarge` past this many bytes.
    ///   - progress: gets ``ItemProvider/Progress/completedUnitCount`` after every chunk (and
    ///     `expectedSize` as its total when it has none).
    ///   - expectedSize: the size the sender announced, nil when unknown.
    /// - Throws: `FerryError`: `.cancelled` when the task or `progress` is cancelled, `.io` when
    ///   reading fails, `.tooLarge`.
    static func readAll(_ fd: FileDescriptor, limit: Int = Int.max, progress: ItemProvider.Progress? = nil,
                        expectedSize: Int64? = nil) async throws(FerryError) -> [UInt8] {
        if let progress, let expectedSize, expectedSize > 0, progress.totalUnitCount <= 0 {
            progress.totalUnitCount = expectedSize
        }
        do {
            return try await BlockingIO.run(cancellable: { wake in
                try drain(fd, wake: wake, limit: limit, progress: progress, expectedSize: expectedSize)
            })
        } catch {
            throw FerryError.converting(error)
        }
    }

    /// The read buffer for a transfer of `expectedSize` bytes: room for all of them and the end
    /// of file in one read when they are few, ``chunkSize`` when they are many or unknown.
    static func bufferSize(expectedSize: Int64?) -> Int {
        guard let expectedSize, expectedSize >= 0, expectedSize < chunkSize else { return chunkSize }
        return max(Int(expectedSize) + 1, 16 << 10)
    }

    private static func drain(_ fd: FileDescriptor, wake: Wake, limit: Int,
                              progress: ItemProvider.Progress?, expectedSize: Int64?) throws -> [UInt8] {
        var result: [UInt8] = []
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
