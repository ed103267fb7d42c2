import FerryTerminal
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `-o FILE` of `ferry paste`: bytes go to a temporary file beside FILE, which replaces FILE
/// only once everything arrived (`commit()`); on an error, or SIGINT/SIGTERM meanwhile, the
/// temporary file is removed and FILE is untouched.
final class AtomicFile {
    let path: String
    private let temporaryPath: String
    private(set) var output: OutputFile
    private var committed = false

    /// Creates the temporary file (mode 0666 less the umask, like a shell redirection).
    /// - Throws: `CLIFailure` (status 1) when the folder is not writable.
    init(path: String) throws {
        guard !path.isEmpty, !path.utf8.contains(0) else { throw CLIFailure(.usage, "invalid output path '\(path)'") }
        self.path = path
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { String(path[...$0]) } ?? ""
        let base = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard !base.isEmpty else { throw CLIFailure(.usage, "'\(path)' names a folder, not a file") }
        var fd: Int32 = -1
        var candidate = ""
        for attempt in 0..<100 {
            candidate = "\(folder).\(base).ferry-\(getpid())-\(attempt)"
            fd = open(candidate, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
            if fd >= 0 || errno != EEXIST { break }
        }
        guard fd >= 0 else { throw CLIFailure(.failure, "cannot write '\(path)': \(LinuxCalls.reason(errno))") }
        temporaryPath = candidate
        output = OutputFile(fd: fd, name: "'\(path)'")
        SignalCleanup.removeOnSignal(candidate)
    }

    /// Flushes the bytes to disk and renames the temporary file to `path`.
    /// - Throws: `CLIFailure` (status 1); the temporary file is removed then.
    func commit() throws {
        guard !committed else { return }
        if fsync(output.fd) != 0 && errno != EINVAL {
            throw CLIFailure(.failure, "cannot write '\(path)': \(LinuxCalls.reason(errno))")
        }
        if close(output.fd) != 0 { throw CLIFailure(.failure, "cannot write '\(path)': \(LinuxCalls.reason(errno))") }
        output = OutputFile(fd: -1, name: output.name)
        guard rename(temporaryPath, path) == 0 else {
            throw CLIFailure(.failure, "cannot write '\(path)': \(LinuxCalls.reason(errno))")
        }
        committed = true
        SignalCleanup.removeOnSignal(nil)
    }

    /// Removes the temporary file unless committed.
    func discard() {
        guard !committed else { return }
        if output.fd >= 0 { close(output.fd) }
        output = OutputFile(fd: -1, name: output.name)
        unlink(temporaryPath)
        committed = true
        SignalCleanup.removeOnSignal(nil)
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
    static func removeOnSignal(_ path: String?) {
        let old = pending
        pending = path.map { strdup($0) }
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
