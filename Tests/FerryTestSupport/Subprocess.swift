import Foundation
import Synchronization

/// A child process spawned with an empty signal mask and default signal dispositions.
///
/// Foundation's `Process` passes on the spawning thread's signal mask, and libdispatch worker
/// threads (where Swift concurrency runs) block most signals: a child started from a test would
/// never receive SIGTERM, so "stop" would wait forever. This spawns with `posix_spawn`,
/// `POSIX_SPAWN_SETSIGMASK` (nothing blocked) and `POSIX_SPAWN_SETSIGDEF` (every catchable
/// signal at its default), and reaps with `waitpid` without ever blocking a cooperative thread.
public final class Subprocess: Sendable {
    /// The child's process id.
    public let pid: pid_t
    /// Read end of the child's standard output (owned here).
    public let standardOutput: Int32
    /// Read end of the child's standard error (owned here).
    public let standardError: Int32
    private let exit = Mutex<Int32?>(nil)

    /// Starts `executable` (a path, or a name looked up in `PATH`).
    ///
    /// - Parameters:
    ///   - environment: the child's whole environment.
    ///   - standardInput: a file descriptor for the child's standard input (default `/dev/null`).
    public init(_ executable: String, _ arguments: [String], environment: [String: String],
                standardInput: Int32? = nil) throws {
        let path = try ChildProcess.resolve(executable)
        var out: [Int32] = [-1, -1], err: [Int32] = [-1, -1]
        // pipe2 is not visible from Swift's Glibc; set close-on-exec right after creating.
        guard pipe(&out) == 0, pipe(&err) == 0 else {
            throw ChildProcessError(description: "pipe failed: errno \(errno)")
        }
        for fd in out + err { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        let devNull = standardInput == nil ? open("/dev/null", O_RDONLY | O_CLOEXEC) : -1
        defer {
            Foundation.close(out[1]); Foundation.close(err[1])
            if devNull >= 0 { Foundation.close(devNull) }
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, standardInput ?? devNull, 0)
        posix_spawn_file_actions_adddup2(&actions, out[1], 1)
        posix_spawn_file_actions_adddup2(&actions, err[1], 2)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var nothing = sigset_t(), everything = sigset_t()
        sigemptyset(&nothing)
        sigfillset(&everything)
        posix_spawnattr_setsigmask(&attributes, &nothing)
        posix_spawnattr_setsigdefault(&attributes, &everything)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard rc == 0 else {
            [out[0], err[0]].forEach { _ = Foundation.close($0) }
            throw ChildProcessError(description: "cannot start \(path): errno \(rc)")
        }
        self.pid = pid
        self.standardOutput = out[0]
        self.standardError = err[0]
    }

    deinit {
        kill()
        Foundation.close(standardOutput)
        Foundation.close(standardError)
    }

    /// The exit status (or 128 + signal number), or nil while the child runs. Reaps it.
    public var exitStatus: Int32? {
        exit.withLock { status in
            if status == nil {
                var raw: Int32 = 0
                if waitpid(pid, &raw, WNOHANG) == pid { status = Self.decode(raw) }
            }
            return status
        }
    }

    /// Whether the child is still running.
    public var isRunning: Bool { exitStatus == nil }

    /// Sends `signal` to the child if it still runs.
    public func send(_ signal: Int32) {
        if isRunning { Foundation.kill(pid, signal) }
    }

    /// Waits for the child to exit, at most `timeout`; returns its status or nil.
    public func waitForExit(timeout: Duration) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let status = exitStatus { return status }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return exitStatus
    }

    /// Stops the child: SIGTERM, then SIGKILL if it still runs after `grace`. Blocks the calling
    /// thread at most `grace` plus the time the kernel takes to reap it.
    public func terminate(grace: Duration = .seconds(2)) {
        guard isRunning else { return }
        Foundation.kill(pid, SIGTERM)
        let deadline = ContinuousClock.now + grace
        while isRunning && ContinuousClock.now < deadline { usleep(2_000) }
        kill()
    }

    /// Kills the child with SIGKILL and reaps it.
    public func kill() {
        exit.withLock { status in
            guard status == nil else { return }
            Foundation.kill(pid, SIGKILL)
            var raw: Int32 = 0
            while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
            status = Self.decode(raw)
        }
    }

    private static func decode(_ raw: Int32) -> Int32 {
        let signal = raw & 0x7F
        return signal == 0 ? (raw >> 8) & 0xFF : 128 + signal
    }
}
