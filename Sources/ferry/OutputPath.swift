import FerryTerminal
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file the CLI writes for the user (`ferry paste -o PATH`, `ferry desktop --svg/--png PATH`),
/// opened the way the shell's `>` treats PATH, except that a file is never left half written:
///
/// - `-` is standard output.
/// - A new path, or an existing regular file: bytes go to a temporary file beside it, which
///   replaces it only once everything arrived (`commit()`); on an error, or SIGINT/SIGTERM
///   meanwhile, the temporary file is removed and PATH is untouched. An existing file keeps its
///   mode and owner (a pasted secret in a mode-600 file stays mode 600).
/// - A symbolic link is followed: what it names is written as above and the link stays a link.
/// - A FIFO, a device (`/dev/null`, a terminal) or a socket is opened and written through: it is
///   never replaced by a regular file.
/// - A regular file with other hard links, or one whose owner this process cannot give the
///   replacement, is written in place (truncated first, as `>` does), so the links and the owner
///   stay.
/// - A folder is an error.
final class OutputPath {
    /// The path as the user gave it.
    let path: PathArgument
    /// Where bytes go until `commit()`.
    private(set) var output: OutputFile
    /// The temporary file and the path it replaces on `commit()`; nil when written through.
    private var replacement: (temporary: [CChar], target: [CChar])?
    private var finished = false

    /// Opens `path` for writing (see the type's notes).
    /// - Throws: `CLIFailure` (status 64) for an empty path or one naming a folder, (status 1) when
    ///   it cannot be written.
    init(path: PathArgument) throws {
        self.path = path
        let name = "'\(path.display)'"
        if path.isStandardOutput {
            output = .standardOutput
            finished = true
            return
        }
        guard !path.bytes.isEmpty, !path.bytes.contains(0) else { throw CLIFailure(.usage, "invalid output path \(name)") }
        guard path.bytes.last != UInt8(ascii: "/") else { throw CLIFailure(.usage, "\(name) names a folder, not a file") }
        // What PATH finally names: a symbolic link (or a chain of them) resolved to its end.
        var target = path.cString
        var info = stat()
        var exists = lstat(target, &info) == 0
        guard exists || errno == ENOENT else { throw CLIFailure(.failure, "cannot write \(name): \(LinuxCalls.reason(errno))") }
        if exists, (info.st_mode & S_IFMT) == S_IFLNK {
            guard let resolved = realpath(target, nil) else {
                // A dangling link: `>` creates the file it names, through the link.
                output = try Self.openThrough(target, name: name)
                return
            }
            target = Array(UnsafeBufferPointer(start: resolved, count: strlen(resolved) + 1))
            free(resolved)
            exists = lstat(target, &info) == 0
        }
        if !exists { info.st_mode = 0 }
        switch info.st_mode & S_IFMT {
        case 0:
            // A new file: mode 0666 less the umask, like a shell redirection.
            let (fd, temporary) = try Self.createTemporary(beside: target, mode: 0o666, name: name)
            output = OutputFile(fd: fd, name: name)
            replacement = (temporary, target)
        case S_IFDIR:
            throw CLIFailure(.usage, "\(name) is a folder, not a file")
        case S_IFREG:
            let (fd, temporary) = try Self.createTemporary(beside: target, mode: 0o600, name: name)
            // The replacement takes the file's owner first (chown clears set-id bits), then its mode.
            let keepsOwner = (info.st_uid == geteuid() && info.st_gid == getegid()) || fchown(fd, info.st_uid, info.st_gid) == 0
            if info.st_nlink > 1 || !keepsOwner || fchmod(fd, info.st_mode & 0o7777) != 0 {
                close(fd)
                unlink(temporary)
                output = try Self.openThrough(target, name: name)
            } else {
                output = OutputFile(fd: fd, name: name)
                replacement = (temporary, target)
            }
        default:
            output = try Self.openThrough(target, name: name)
        }
        if let replacement { SignalCleanup.removeOnSignal(replacement.temporary) }
    }

    /// Opens `target` for writing as `>` does: created if missing, truncated if a regular file.
    private static func openThrough(_ target: [CChar], name: String) throws -> OutputFile {
        let fd = open(target, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0o666)
        guard fd >= 0 else { throw CLIFailure(.failure, "cannot write \(name): \(LinuxCalls.reason(errno))") }
        return OutputFile(fd: fd, name: name)
    }

    /// Creates `.<base>.ferry-<pid>-<n>` in the folder of `target`.
    private static func createTemporary(beside target: [CChar], mode: mode_t, name: String) throws -> (Int32, [CChar]) {
        let bytes = target.prefix { $0 != 0 }
        let slash = bytes.lastIndex(of: CChar(UInt8(ascii: "/")))
        let folder = slash.map { Array(bytes[...$0]) } ?? []
        let base = slash.map { Array(bytes[(bytes.index(after: $0))...]) } ?? Array(bytes)
        for attempt in 0..<100 {
            let candidate = folder + Array(".".utf8CString.dropLast()) + base
                + Array(".ferry-\(getpid())-\(attempt)".utf8CString)
            let fd = open(candidate, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
            if fd >= 0 { return (fd, candidate) }
            if errno != EEXIST { break }
        }
        throw CLIFailure(.failure, "cannot write \(name): \(LinuxCalls.reason(errno))")
    }

    /// Flushes the bytes to disk and renames the temporary file over the target; closes a file
    /// written through.
    /// - Throws: `CLIFailure` (status 1); the temporary file is removed then.
    func commit() throws {
        guard !finished else { return }
        let name = output.name
        guard let replacement else {
            finished = true
            let fd = output.fd
            output = OutputFile(fd: -1, name: name)
            if close(fd) != 0 && errno != EINTR { throw CLIFailure(.failure, "cannot write \(name): \(LinuxCalls.reason(errno))") }
            return
        }
        if fsync(output.fd) != 0 && errno != EINVAL {
            throw CLIFailure(.failure, "cannot write \(name): \(LinuxCalls.reason(errno))")
        }
        if close(output.fd) != 0 { throw CLIFailure(.failure, "cannot write \(name): \(LinuxCalls.reason(errno))") }
        output = OutputFile(fd: -1, name: name)
        guard rename(replacement.temporary, replacement.target) == 0 else {
            throw CLIFailure(.failure, "cannot write \(name): \(LinuxCalls.reason(errno))")
        }
        finished = true
        SignalCleanup.removeOnSignal(nil)
    }

    /// Removes the temporary file unless committed; closes a file written through.
    func discard() {
        guard !finished else { return }
        if output.fd >= 0 { close(output.fd) }
        output = OutputFile(fd: -1, name: output.name)
        if let replacement {
            unlink(replacement.temporary)
            SignalCleanup.removeOnSignal(nil)
        }
        finished = true
    }

    deinit { discard() }
}

/// Removes one temporary file when SIGINT, SIGTERM or SIGHUP ends the process.
enum SignalCleanup {
    /// The path to unlink, as a C string the handler can use without allocating. Written only by
    /// the main task before and after a transfer, read by the signal handler: a word-sized store
    /// of a pointer that is freed only after it was replaced.
    nonisolated(unsafe) private static var pending: UnsafeMutablePointer<CChar>?

    /// Sets (or clears, with nil) the file to remove on a terminating signal.
    static func removeOnSignal(_ path: [CChar]?) {
        let old = pending
        pending = path.map { $0.withUnsafeBufferPointer { strdup($0.baseAddress!) } }
        if path != nil {
            for sig in [SIGINT, SIGTERM, SIGHUP] {
                signal(sig) { number in
                    if let path = SignalCleanup.pending { unlink(path) }
                    signal(number, SIG_DFL)
                    raise(number)
                }
            }
        }
        free(old)
    }
}
