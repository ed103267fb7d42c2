#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The few Linux calls the CLI needs that Swift's Glibc module does not declare (they sit behind
/// `_GNU_SOURCE`): looked up once with `dlsym`, each nil where the C library lacks it, so callers
/// fall back to plain `read`/`write`.
enum LinuxCalls {
    typealias SpliceFunction = @convention(c) (Int32, UnsafeMutablePointer<Int64>?, Int32, UnsafeMutablePointer<Int64>?, Int,
                                               UInt32) -> Int
    typealias MemfdCreateFunction = @convention(c) (UnsafePointer<CChar>, UInt32) -> Int32

    /// `splice(2)`: moves bytes between a pipe and another descriptor without a user-space copy.
    static let splice: SpliceFunction? = symbol("splice")
    /// `memfd_create(2)`: an anonymous file in memory.
    static let memfdCreate: MemfdCreateFunction? = symbol("memfd_create")

    static let spliceMove: UInt32 = 1        // SPLICE_F_MOVE
    static let memfdCloseOnExec: UInt32 = 1  // MFD_CLOEXEC
    static let setPipeSize: Int32 = 1031     // F_SETPIPE_SZ

    private static func symbol<F>(_ name: String) -> F? {
        #if os(Linux)
        guard let pointer = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
        return unsafeBitCast(pointer, to: F.self)
        #else
        return nil
        #endif
    }

    /// An anonymous in-memory file (a memfd, close-on-exec), or nil when the system has none.
    static func anonymousFile(name: String) -> Int32? {
        guard let memfdCreate else { return nil }
        let fd = name.withCString { memfdCreate($0, memfdCloseOnExec) }
        return fd >= 0 ? fd : nil
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
