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
            return try await BlockingIO.run(cancellable: { wake in try drain(fd, wake: wake, limit: limit, progress: progress) })
        } catch {
            throw FerryError.converting(error)
        }
    }

    private static func drain(_ fd: FileDescriptor, wake: Wake, limit: Int,
                              progress: ItemProvider.Progress?) throws -> [UInt8] {
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        while true {
            if progress?.isCancelled == true { throw FerryError(.cancelled, "the read was cancelled") }
            let n = try fd.withRawValue { raw -> Int in
                do {
                    guard try wake.poll(raw) == .ready else { return -2 }
                } catch {
                    throw FerryError(.io, "cannot wait for the pipe: \(error)")
                }
                let n = chunk.withUnsafeMutableBytes { Glibc.read(raw, $0.baseAddress, $0.count) }
                if n < 0 && errno != EINTR && errno != EAGAIN {
                    throw FerryError(.io, "cannot read: \(String(cString: strerror(errno)))")
                }
                return n
            }
            if n == -2 { throw FerryError(.cancelled, "the read was cancelled") }
            if n < 0 { continue }
            if n == 0 { return result }
            guard result.count + n <= limit else { throw FerryError(.tooLarge, "more than \(limit) bytes") }
            result.append(contentsOf: chunk[0..<n])
            progress?.completedUnitCount = Int64(result.count)
        }
    }
}
