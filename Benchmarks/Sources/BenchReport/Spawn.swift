#if canImport(Glibc)
import Glibc
#endif

/// Starting, timing and stopping other processes with posix_spawn (no shell, no Foundation), for
/// every benchmark.
public enum Spawn {
    /// Why the benchmark cannot go on.
    public struct Failure: Error, CustomStringConvertible {
        /// What went wrong.
        public var description: String
        /// Makes a failure.
        public init(description: String) { self.description = description }
    }

    /// What a child's standard stream is connected to.
    public enum Stream {
        /// This process's own.
        case inherited
        /// `/dev/null`.
        case null
        /// A file, created or truncated.
        case file(String)
        /// An open descriptor (dup'ed onto the stream).
        case descriptor(Int32)
    }

    /// Starts `argv` (looked up in PATH) and returns its pid.
    ///
    /// The child gets an empty signal mask and default signal actions (Dispatch's threads block
    /// most signals, and a child that inherits that cannot be stopped with SIGTERM).
    public static func start(_ argv: [String], stdin: Stream = .null, stdout: Stream = .null,
                      stderr: Stream = .inherited) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (target, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            switch stream {
            case .inherited: break
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .file(let path):
                posix_spawn_file_actions_addopen(&actions, target, path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            case .descriptor(let fd):
                posix_spawn_file_actions_adddup2(&actions, fd, target)
            }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t(), all = sigset_t()
        sigemptyset(&empty)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, argv[0], &actions, &attributes, cArgs, environ)
        guard rc == 0 else { throw Failure(description: "cannot start \(argv[0]): \(String(cString: strerror(rc)))") }
        return pid
    }

    /// Waits for `pid` and returns its exit status (128+signal when killed).
    @discardableResult
    public static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return decode(status)
    }

    /// Waits at most `seconds` for `pid`; its exit status, or nil when it is still running.
    public static func wait(_ pid: pid_t, seconds: Double) -> Int32? {
        let deadline = now() + seconds * 1e6
        var status: Int32 = 0
        while true {
            let rc = waitpid(pid, &status, WNOHANG)
            if rc == pid { return decode(status) }
            if rc < 0 && errno != EINTR { return -1 }  // not our child (any more)
            if now() > deadline { return nil }
            usleep(5_000)
        }
    }

    /// Stops `pid`: SIGTERM, then SIGKILL after `grace` seconds; returns its exit status.
    @discardableResult
    public static func stop(_ pid: pid_t, grace: Double) -> Int32 {
        kill(pid, SIGTERM)
        if let status = wait(pid, seconds: grace) { return status }
        kill(pid, SIGKILL)
        return wait(pid)
    }

    private static func decode(_ status: Int32) -> Int32 {
        status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    /// Runs `argv` to completion with its output to /dev/null; returns the wall time and the
    /// child's CPU time (user + system), both in ms.
    public static func timedRun(_ argv: [String]) throws -> (wall: Double, cpu: Double) {
        let began = now()
        let pid = try start(argv, stdout: .null, stderr: .null)
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        let elapsed = now() - began
        guard decode(status) == 0 else {
            throw Failure(description: "\(argv.joined(separator: " ")) exited with \(decode(status))")
        }
        func ms(_ t: timeval) -> Double { Double(t.tv_sec) * 1000 + Double(t.tv_usec) / 1000 }
        return (elapsed / 1000, ms(usage.ru_utime) + ms(usage.ru_stime))
    }

    /// Runs `argv` and returns its status and what it wrote on standard output.
    public static func output(_ argv: [String], stderr: Stream = .inherited) throws -> (status: Int32, bytes: [UInt8]) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw Failure(description: "pipe: errno \(errno)") }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        let pid: pid_t
        do { pid = try start(argv, stdout: .descriptor(fds[1]), stderr: stderr) } catch {
            close(fds[0]); close(fds[1]); throw error
        }
        close(fds[1])
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) }
            if n < 0 { if errno == EINTR { continue }; break }
            if n == 0 { break }
            bytes += buffer[0..<n]
        }
        close(fds[0])
        return (wait(pid), bytes)
    }

    /// The absolute path of this executable.
    public static var ownPath: String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        return n > 0 ? String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : CommandLine.arguments[0]
    }

    /// The folder this executable lies in.
    public static var ownFolder: String {
        ownPath.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
    }

    /// The folder holding Ferry's own executables (`ferryd`, `ferry`, `ferry-cli`), which the root
    /// package builds and this one does not: `FERRY_BENCH_BIN` when set (scripts/bench.sh sets it to
    /// the root's release folder); else, for a benchmark in `Benchmarks/.build/…`, the same folder
    /// under the root's `.build/…`; else the folder of this executable.
    public static var ferryFolder: String {
        if let bin = getenv("FERRY_BENCH_BIN"), bin.pointee != 0 { return String(cString: bin) }
        var parts = ownFolder.split(separator: "/", omittingEmptySubsequences: false)
        guard let build = parts.lastIndex(of: ".build"), build > parts.startIndex, parts[build - 1] == "Benchmarks" else {
            return ownFolder
        }
        parts.remove(at: build - 1)
        return parts.joined(separator: "/")
    }

    /// The text of a small file, or nil.
    public static func readFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 { if errno == EINTR { continue }; return nil }
            if n == 0 { break }
            bytes += buffer[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Writes `text` to a new file at `path`.
    public static func writeFile(_ path: String, _ text: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure(description: "cannot create \(path): errno \(errno)") }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        guard bytes.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == bytes.count else {
            throw Failure(description: "cannot write \(path): errno \(errno)")
        }
    }
}
