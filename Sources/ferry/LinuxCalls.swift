#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The Linux call the CLI needs that neither Swift's Glibc module (it sits behind `_GNU_SOURCE`)
/// nor the DBus module's `FileDescriptor` (pipes, memfds) provides: looked up once with `dlsym`,
/// nil where the C library lacks it, so callers fall back to plain `read`/`write`.
enum LinuxCalls {
    typealias SpliceFunction = @convention(c) (Int32, UnsafeMutablePointer<Int64>?, Int32, UnsafeMutablePointer<Int64>?, Int,
                                               UInt32) -> Int

    /// `splice(2)`: moves bytes between a pipe and another descriptor without a user-space copy.
    static let splice: SpliceFunction? = symbol("splice")

    static let spliceMove: UInt32 = 1        // SPLICE_F_MOVE

    /// `O_PATH` (behind `_GNU_SOURCE` too): a descriptor that only names a file, opened without
    /// reading it (a FIFO is not waited on).
    static let openPathOnly: Int32 = 0o10000000

    private static func symbol<F>(_ name: String) -> F? {
        #if os(Linux)
        guard let pointer = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
        return unsafeBitCast(pointer, to: F.self)
        #else
        return nil
        #endif
    }

    /// The system's explanation of `code`.
    static func reason(_ code: Int32) -> String { String(cString: strerror(code)) }

    /// Whether `fd` is a terminal.
    static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }

    /// `fstat` of `fd`, nil on failure.
    static func status(of fd: Int32) -> stat? {
        var info = stat()
        return fstat(fd, &info) == 0 ? info : nil
    }

    /// Whether `info` describes a regular file.
    static func isRegularFile(_ info: stat) -> Bool { (info.st_mode & S_IFMT) == S_IFREG }
    /// Whether `info` describes a directory.
    static func isDirectory(_ info: stat) -> Bool { (info.st_mode & S_IFMT) == S_IFDIR }
}
