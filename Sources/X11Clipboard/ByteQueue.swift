import DesktopClipboard
import CXCB
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Bytes waiting between a producer and a consumer on the display thread: appended at the back,
/// taken from the front. One malloc'd region, moved only by memcpy/memmove, and freed whenever
/// the queue runs empty so that an idle transfer holds no memory.
final class ByteQueue {
    private var base: UnsafeMutableRawPointer?
    private var capacity = 0
    private var head = 0
    private var tail = 0

    deinit { free(base) }

    /// How many bytes wait.
    var count: Int { tail - head }
    var isEmpty: Bool { head == tail }

    /// Room for `extra` more bytes after `tail`, moving the waiting bytes to the front first.
    private func reserve(_ extra: Int) -> UnsafeMutableRawPointer {
        if head > 0 {
            if count > 0 { memmove(base!, base! + head, count) }
            tail -= head
            head = 0
        }
        if tail + extra > capacity {
            capacity = max(tail + extra, capacity * 2)
            base = realloc(base, capacity)
            precondition(base != nil, "out of memory for a transfer buffer of \(capacity) bytes")
        }
        return base! + tail
    }

    func append(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        reserve(bytes.count).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        tail += bytes.count
    }

    func append(_ bytes: [UInt8]) { bytes.withUnsafeBytes { append($0) } }

    /// Reads what `fd` has, at most `limit` bytes, without blocking.
    /// - Returns: the number read, 0 at end of file, or -1 with errno set (EAGAIN: nothing yet).
    func read(from fd: Int32, limit: Int) -> Int {
        guard limit > 0 else { return -1 }
        let n = Glibc.read(fd, reserve(limit), limit)
        if n > 0 { tail += n }
        return n
    }

    /// Writes from the front into `fd` without blocking until it would block or all is written.
    /// - Returns: false when the descriptor failed (the reader went away: EPIPE, or another error).
    func write(to fd: Int32) -> Bool {
        while count > 0 {
            let n = Glibc.write(fd, base! + head, count)
            if n > 0 { head += n; continue }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && errno == EAGAIN { break }
            return false
        }
        releaseIfEmpty()
        return true
    }

    /// Calls `body` with the first `maximum` bytes (or fewer) and drops them.
    func take<R>(upTo maximum: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        let n = min(maximum, count)
        let result = body(UnsafeRawBufferPointer(start: n > 0 ? base! + head : nil, count: n))
        head += n
        releaseIfEmpty()
        return result
    }

    /// All the bytes, emptying the queue (for small values read into memory).
    func takeAll() -> [UInt8] {
        take(upTo: count) { Array($0) }
    }

    private func releaseIfEmpty() {
        guard head == tail else { return }
        free(base)
        base = nil
        capacity = 0
        head = 0
        tail = 0
    }
}
