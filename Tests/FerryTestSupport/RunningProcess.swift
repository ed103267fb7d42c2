import Foundation
import Subprocess
import Synchronization
import SystemPackage

/// A long-lived child process for tests, started through swift-subprocess and stopped by its pid.
///
/// swift-subprocess starts the child with an empty signal mask and default signal dispositions
/// (libdispatch's worker threads block most signals; a child that inherited that would never
/// see SIGTERM), closes every other descriptor in it, watches it through a pidfd and reaps it.
/// Its `run` lives as long as the child; this object keeps that call going on a thread of its
/// own (`SpawnThread`), so it can be made from synchronous code (`PrivateBus()`, `XvfbDisplay()`)
/// without waiting on Swift's cooperative pool. The child is killed when the object is released.
public final class RunningProcess: Sendable {
    /// The child's process id.
    public let pid: pid_t
    /// Read end of the child's standard output (owned here), or -1 when it writes elsewhere.
    public let standardOutput: Int32
    /// Read end of the child's standard error (owned here), or -1 when it writes elsewhere.
    public let standardError: Int32
    /// A pidfd of the child (a copy of swift-subprocess's), readable once the child has ended:
    /// `hasEnded` and the synchronous waits poll it, so they never depend on the reaper.
    private let watch: Int32
    /// The handover from the spawning task, and the exit status once the child is reaped.
    private let state = ChildState()

    /// Starts `executable` (a path, or a name looked up in `PATH`).
    ///
    /// - Parameters:
    ///   - environment: the child's whole environment.
    ///   - standardInput: a descriptor for the child's standard input (stays the caller's), or nil
    ///     for `/dev/null`.
    ///   - output: a descriptor for the child's standard output (stays the caller's, say a log
    ///     file), or nil for a pipe read through `standardOutput`.
    ///   - error: the same for standard error and `standardError`.
    /// - Throws: `ChildProcessError` when it cannot be started.
    public init(_ executable: String, _ arguments: [String], environment: [String: String],
                standardInput: Int32? = nil, output: Int32? = nil, error: Int32? = nil) throws {
        let path = try ChildProcess.resolve(executable)
        var outEnds: [Int32] = [-1, -1], errEnds: [Int32] = [-1, -1]
        // pipe2 is not visible from Swift's Glibc; set close-on-exec right after creating.
        guard output != nil || pipe(&outEnds) == 0, error != nil || pipe(&errEnds) == 0 else {
            throw ChildProcessError(description: "pipe failed: errno \(errno)")
        }
        (outEnds + errEnds).filter { $0 >= 0 }.forEach(setCloseOnExec)
        let state = self.state
        let configuration = Configuration(
            executable: .path(FilePath(path)), arguments: Arguments(arguments),
            environment: .exactly(environment))
        // swift-subprocess closes what it is told to once the child runs; the caller's stay open.
        let input: FileDescriptorInput = if let standardInput {
            .fileDescriptor(FileDescriptor(rawValue: standardInput), closeAfterSpawningProcess: false)
        } else {
            .fileDescriptor(try FileDescriptor.open("/dev/null", .readOnly, options: .closeOnExec),
                            closeAfterSpawningProcess: true)
        }
        let out = FileDescriptorOutput.fileDescriptor(FileDescriptor(rawValue: output ?? outEnds[1]),
                                                      closeAfterSpawningProcess: output == nil)
        let err = FileDescriptorOutput.fileDescriptor(FileDescriptor(rawValue: error ?? errEnds[1]),
                                                      closeAfterSpawningProcess: error == nil)
        Task(executorPreference: SpawnThread.shared) {
            do {
                let result = try await Subprocess.run(configuration, input: input, output: out, error: err) { execution in
                    let id = execution.processIdentifier
                    // The pidfd is swift-subprocess's and closes when `run` returns: keep a copy.
                    let copy = id.processDescriptor >= 0 ? fcntl(id.processDescriptor, F_DUPFD_CLOEXEC, 0) : -1
                    state.started(.success((id.value, copy)))
                }
                state.reaped(Self.status(result.terminationStatus))
            } catch {
                state.started(.failure(error))
                state.reaped(-1)
            }
        }
        switch state.waitUntilStarted() {
        case .success(let (pid, watch)):
            self.pid = pid
            self.watch = watch
        case .failure(let failure):
            [outEnds[0], errEnds[0]].filter { $0 >= 0 }.forEach { _ = Foundation.close($0) }
            throw ChildProcessError(description: "cannot start \(path): \(failure)")
        }
        standardOutput = outEnds[0]
        standardError = errEnds[0]
    }

    deinit {
        kill()
        [standardOutput, standardError, watch].filter { $0 >= 0 }.forEach { _ = Foundation.close($0) }
    }

    /// True once the child has ended (it may not be reaped yet).
    public var hasEnded: Bool { Self.ended(watch, waitingMilliseconds: 0) || state.status != nil }

    /// Whether the child is still running.
    public var isRunning: Bool { !hasEnded }

    /// The exit status (or 128 + signal number), or nil until the child has ended and been reaped.
    public var exitStatus: Int32? { state.status }

    /// Sends `signal` to the child if it still runs (never to a pid that may have been reused: the
    /// pid stays the child's until it is reaped, and a reaped child has ended).
    public func send(_ signal: Int32) {
        if !hasEnded { Foundation.kill(pid, signal) }
    }

    /// Waits for the child to end and be reaped, at most `timeout`; returns its status or nil.
    public func waitForExit(timeout: Duration) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let status = exitStatus { return status }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return exitStatus
    }

    /// Blocks the calling thread until the child has ended and been reaped; returns its status.
    /// For synchronous tests of short commands; async code uses `waitForExit(timeout:)`.
    public func waitUntilExit() -> Int32 {
        while !Self.ended(watch, waitingMilliseconds: 1_000) && watch >= 0 {}
        // swift-subprocess reaps it on `SpawnThread`, never on the thread blocked here.
        while true {
            if let status = exitStatus { return status }
            usleep(500)
        }
    }

    /// Reads the child's standard output and standard error (both pipes, at once, so that neither
    /// fills up and blocks the child) until each reaches end of file. Blocks the calling thread.
    public func readToEnd() -> (standardOutput: Data, standardError: Data) {
        let errors = Mutex(Data())
        let done = DispatchSemaphore(value: 0)
        let errorEnd = standardError
        Thread.detachNewThread {
            errors.withLock { $0 = Self.readAll(errorEnd) }
            done.signal()
        }
        let output = Self.readAll(standardOutput)
        done.wait()
        return (output, errors.withLock { $0 })
    }

    private static func readAll(_ fd: Int32) -> Data {
        guard fd >= 0 else { return Data() }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return data }
            data.append(contentsOf: buffer[0..<n])
        }
    }

    /// Stops the child: SIGTERM, then SIGKILL if it still runs after `grace`. Blocks the calling
    /// thread until it has ended (at most `grace` plus the time the kernel takes to kill it).
    public func terminate(grace: Duration = .seconds(2)) {
        guard !hasEnded else { return }
        Foundation.kill(pid, SIGTERM)
        if !Self.ended(watch, waitingMilliseconds: grace.milliseconds) { kill() }
    }

    /// Kills the child with SIGKILL and waits until it has ended (swift-subprocess reaps it).
    public func kill() {
        guard !hasEnded else { return }
        Foundation.kill(pid, SIGKILL)
        // SIGKILL cannot be caught: this returns as soon as the kernel has torn the child down.
        _ = Self.ended(watch, waitingMilliseconds: 10_000)
    }

    /// Whether the process behind pidfd `fd` has ended, waiting at most `milliseconds` for it.
    private static func ended(_ fd: Int32, waitingMilliseconds milliseconds: Int32) -> Bool {
        guard fd >= 0 else { return false }
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let deadline = ContinuousClock.now + .milliseconds(milliseconds)
        while true {
            let ready = poll(&entry, 1, max(0, (deadline - ContinuousClock.now).milliseconds))
            if ready > 0 { return true }
            if ready == 0 || errno != EINTR { return false }
        }
    }

    /// A status as the shell reports it: the exit code, or 128 + the signal's number.
    static func status(_ termination: TerminationStatus) -> Int32 {
        switch termination {
        case .exited(let code): code
        case .signaled(let signal): 128 + signal
        }
    }
}

/// What the spawning task tells the synchronous side: the child's pid and pidfd (or why it could
/// not start), later its exit status.
private final class ChildState: Sendable {
    private let outcome = Mutex<Result<(pid_t, Int32), any Error>?>(nil)
    private let exit = Mutex<Int32?>(nil)
    private let signal = DispatchSemaphore(value: 0)

    /// Hands the start's outcome over (only the first one counts).
    func started(_ result: Result<(pid_t, Int32), any Error>) {
        let first = outcome.withLock { value in
            guard value == nil else { return false }
            value = result
            return true
        }
        if first { signal.signal() }
    }

    /// Blocks until `started(_:)`.
    func waitUntilStarted() -> Result<(pid_t, Int32), any Error> {
        signal.wait()
        return outcome.withLock { $0! }
    }

    /// Notes the exit status (the first one noted counts).
    func reaped(_ status: Int32) { exit.withLock { $0 = $0 ?? status } }

    /// The exit status, once reaped.
    var status: Int32? { exit.withLock { $0 } }
}

/// One thread running the jobs of every task that spawns or watches a `RunningProcess`.
///
/// The synchronous `RunningProcess.init` blocks its thread until swift-subprocess has started
/// the child; if that work ran on the cooperative pool (two threads on a 2-core machine), two
/// tests starting children at once could each block a pool thread and wait forever for the
/// other. This executor keeps that work off the pool; its jobs are short (a fork, a resume).
final class SpawnThread: TaskExecutor {
    /// The one instance.
    static let shared = SpawnThread()

    private let jobs = Mutex<[UnownedJob]>([])
    private let pending = DispatchSemaphore(value: 0)

    private init() {
        let thread = Thread { [unowned self] in self.runJobs() }
        thread.name = "ferry-test-spawn"
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
        pending.signal()
    }

    private func runJobs() {
        while true {
            pending.wait()
            let job = jobs.withLock { $0.removeFirst() }
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

extension Duration {
    /// The duration in whole milliseconds, as `poll` takes it.
    var milliseconds: Int32 {
        Int32(clamping: components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000)
    }
}

extension Subprocess.Environment {
    /// Exactly `variables`, nothing inherited. Each entry is handed to the child as a C string:
    /// swift-subprocess copies the raw bytes with `strdup`, so each carries its terminating NUL.
    static func exactly(_ variables: [String: String]) -> Self {
        .custom(variables.map { Array("\($0.key)=\($0.value)\0".utf8) })
    }
}
