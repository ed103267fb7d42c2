import FerryTerminal
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The Linux calls the CLI needs that Swift's Glibc module does not provide (they sit behind
/// `_GNU_SOURCE`): looked up once with `dlsym`, nil where the C library lacks them, so callers
/// fall back to plain `read`/`write` or say what is missing.
enum LinuxCalls {
    typealias SpliceFunction = @convention(c) (Int32, UnsafeMutablePointer<Int64>?, Int32, UnsafeMutablePointer<Int64>?, Int,
                                               UInt32) -> Int

    /// `splice(2)`: moves bytes between a pipe and another descriptor without a user-space copy.
    static let splice: SpliceFunction? = symbol("splice")

    static let spliceMove: UInt32 = 1        // SPLICE_F_MOVE

    typealias MemfdCreateFunction = @convention(c) (UnsafePointer<CChar>?, UInt32) -> Int32

    /// `memfd_create(2)`: an anonymous file in memory.
    static let memfdCreate: MemfdCreateFunction? = symbol("memfd_create")

    /// A memory file holding `contents`, positioned at offset 0, closed on exec (a child gets it
    /// only as a descriptor it is handed). When `sealed`, it is sealed against writing, shrinking,
    /// growing and further seals, so whoever reads it sees exactly `contents`. The caller owns it.
    /// - Throws: `CLIFailure` (status 1) naming `name` and the system's reason.
    static func memoryFile(name: String, contents: [UInt8], sealed: Bool) throws -> Int32 {
        let closeOnExec: UInt32 = 0x1, allowSealing: UInt32 = 0x2               // MFD_CLOEXEC, MFD_ALLOW_SEALING
        let addSeals: Int32 = 1033                                              // F_ADD_SEALS
        let allSeals: Int32 = 0x1 | 0x2 | 0x4 | 0x8                             // F_SEAL_SEAL, _SHRINK, _GROW, _WRITE
        guard let memfdCreate else { throw CLIFailure(.failure, "cannot make \(name): the C library has no memfd_create") }
        let fd = name.withCString { memfdCreate($0, closeOnExec | allowSealing) }
        guard fd >= 0 else { throw CLIFailure(.failure, "cannot make \(name): \(reason(errno))") }
        do {
            try OutputFile(fd: fd, name: name).write(contents)
            guard lseek(fd, 0, SEEK_SET) == 0 else { throw CLIFailure(.failure, "cannot rewind \(name): \(reason(errno))") }
            if sealed, fcntl(fd, addSeals, allSeals) != 0 {
                throw CLIFailure(.failure, "cannot seal \(name): \(reason(errno))")
            }
        } catch {
            close(fd)
            throw error
        }
        return fd
    }

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
