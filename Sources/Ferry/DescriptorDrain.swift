import DBus
import Dispatch
import FerryModel
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Reads a descriptor to end of file on a thread of its own (as ``BlockingIO`` runs work),
/// reporting the bytes to a progress as they arrive, and stops at once when the reading task is
/// cancelled: the thread waits in `poll` on the descriptor and on a wake-up pipe that the task's
/// cancellation handler writes to, so a cancelled read neither waits for the next byte nor for
/// the end of the transfer.
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
        let wake = try WakePipe()
        defer { wake.close() }
        do {
            return try await withTaskCancellationHandler {
                try await BlockingIO.run { try drain(fd, wake: wake, limit: limit, progress: progress) }
            } onCancel: {
                wake.signal()
            }
        } catch {
            throw FerryError.converting(error)
        }
    }

    private static func drain(_ fd: FileDescriptor, wake: WakePipe, limit: Int,
                              progress: ItemProvider.Progress?) throws -> [UInt8] {
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        while true {
            if progress?.isCancelled == true { throw FerryError(.cancelled, "the read was cancelled") }
            let n = try fd.withRawValue { raw -> Int in
                guard try wake.waitUntilReadable(raw) else { return -2 }
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

/// A pipe that wakes a thread waiting in `poll`: ``signal()`` may come from any thread, before,
/// during or after the wait, and after ``close()`` (then it does nothing).
final class WakePipe: Sendable {
    private let ends: Mutex<(read: Int32, write: Int32)?>

    /// Makes the pipe.
    /// - Throws: `FerryError` `.io` when no pipe can be made (out of descriptors).
    init() throws(FerryError) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            throw FerryError(.io, "cannot make a pipe: \(String(cString: strerror(errno)))")
        }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
        }
        ends = Mutex((read: fds[0], write: fds[1]))
    }

    /// Wakes the waiter, now or at its next wait.
    func signal() {
        ends.withLock { ends in
            guard let open = ends else { return }
            var byte: UInt8 = 1
            _ = Glibc.write(open.write, &byte, 1)
        }
    }

    /// Waits until `fd` is readable (or at end of file, or failed): true; or until ``signal()``:
    /// false. `events` 0 waits only for an error or hang-up of `fd` (a pipe's write end whose
    /// reader left).
    func waitUntilReadable(_ fd: Int32, events: Int16 = Int16(POLLIN)) throws(FerryError) -> Bool {
        guard let wakeEnd = ends.withLock({ $0?.read }) else { return false }
        var fds = [pollfd(fd: fd, events: events, revents: 0), pollfd(fd: wakeEnd, events: Int16(POLLIN), revents: 0)]
        while true {
            let ready = poll(&fds, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                throw FerryError(.io, "poll failed: \(String(cString: strerror(errno)))")
            }
            if fds[1].revents != 0 { return false }
            return true
        }
    }

    /// Closes both ends; later signals do nothing.
    func close() {
        ends.withLock { ends in
            guard let open = ends else { return }
            Glibc.close(open.read)
            Glibc.close(open.write)
            ends = nil
        }
    }
}
