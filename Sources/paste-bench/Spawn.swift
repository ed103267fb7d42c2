import BenchReport
#if canImport(Glibc)
import Glibc
#endif

/// Starting and timing other processes with posix_spawn (no shell, no Foundation).
enum Spawn {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Starts `argv` (looked up in PATH) with the given fds dup'ed onto its 0/1/2 (nil: inherited;
    /// -1: /dev/null) and returns its pid.
    static func start(_ argv: [String], stdin: Int32? = nil, stdout: Int32? = nil, stderr: Int32? = nil) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (target, source) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            guard let source else { continue }
            if source < 0 {
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            } else {
                posix_spawn_file_actions_adddup2(&actions, source, target)
            }
        }
        // The child must not inherit the calling thread's signal mask (Dispatch's worker threads
        // block most signals, and a child that blocks SIGTERM cannot be stopped) nor its ignored
        // signals.
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
    static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        if status & 0x7f == 0 { return (status >> 8) & 0xff }
        return 128 + (status & 0x7f)
    }

    /// Runs `argv` to completion with stdout to /dev/null; returns the wall time in µs.
    static func timedRun(_ argv: [String]) throws -> Double {
        let began = now()
        let pid = try start(argv, stdin: -1, stdout: -1)
        let status = wait(pid)
        let elapsed = now() - began
        guard status == 0 else { throw Failure(description: "\(argv.joined(separator: " ")) exited with \(status)") }
        return elapsed
    }

    /// Runs `argv` and returns what it wrote on stdout (small outputs only) and its status.
    static func output(_ argv: [String]) throws -> (status: Int32, text: String) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw Failure(description: "pipe: \(errno)") }
        let pid: pid_t
        do { pid = try start(argv, stdin: -1, stdout: fds[1], stderr: -1) } catch {
            close(fds[0]); close(fds[1]); throw error
        }
        close(fds[1])
        let bytes = Sink.drain(fds[0], keep: true)
        close(fds[0])
        return (wait(pid), String(decoding: bytes.kept, as: UTF8.self))
    }

    /// The absolute path of this executable.
    static var selfPath: String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        return n > 0 ? String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : CommandLine.arguments[0]
    }
}

/// Reading an fd to its end into a reused buffer: the /dev/null-like sink every throughput
/// benchmark uses, so all of them pay the same copy into user memory.
enum Sink {
    static let chunk = 1 << 20

    /// Reads `fd` to end of file; returns the byte count (and the bytes when `keep`).
    static func drain(_ fd: Int32, keep: Bool = false) -> (count: Int, kept: [UInt8]) {
        var buffer = [UInt8](repeating: 0, count: keep ? 65536 : chunk)
        var total = 0
        var kept: [UInt8] = []
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 { if errno == EINTR { continue }; break }
            if n == 0 { break }
            total += n
            if keep { kept += buffer[0..<n] }
        }
        return (total, kept)
    }
}
