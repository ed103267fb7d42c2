import Dispatch
import Subprocess
import Synchronization
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// Starting, timing and stopping other processes through swift-subprocess (no shell, no
/// Foundation), for every benchmark.
///
/// swift-subprocess starts a child with an empty signal mask and default signal actions
/// (Dispatch's threads block most signals, and a child that inherits that cannot be stopped with
/// SIGTERM), closes every other descriptor in it and reaps it. A child is named by its pid, as
/// the benchmarks have always named it: the pid stays the child's until ``wait(_:)`` (or
/// ``stop(_:grace:)``) has seen it reaped, so `kill(pid, …)` until then signals no one else.
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
        /// An open descriptor (dup'ed onto the stream; it stays the caller's).
        case descriptor(Int32)
    }

    /// Starts `argv` (`argv[0]` looked up in PATH unless it is a path) and returns its pid.
    ///
    /// The child runs under swift-subprocess's `run` on ``SpawnExecutor``, which reaps it when it
    /// ends; ``wait(_:)`` and ``wait(_:seconds:)`` read its status from there.
    public static func start(_ argv: [String], stdin: Stream = .null, stdout: Stream = .null,
                             stderr: Stream = .inherited) throws -> pid_t {
        let configuration = try configuration(argv)
        let input = try inputDescriptor(stdin)
        let (output, error) = try (outputDescriptor(stdout), outputDescriptor(stderr))
        let child = Child()
        Task(executorPreference: SpawnExecutor.shared) {
            do {
                let result = try await Subprocess.run(configuration, input: input, output: output, error: error) { execution in
                    child.started(.success(execution.processIdentifier.value))
                }
                child.ended(status(result.terminationStatus))
            } catch {
                child.started(.failure(Failure(description: "cannot start \(argv[0]): \(error)")))
                child.ended(-1)  // when it failed after it started
            }
        }
        let pid = try child.waitUntilStarted()
        children.withLock { $0[pid] = child }
        return pid
    }

    /// Waits for `pid` and returns its exit status (128+signal when killed); -1 for a pid that is
    /// not a running child of ``start(_:stdin:stdout:stderr:)`` (any more).
    @discardableResult
    public static func wait(_ pid: pid_t) -> Int32 {
        guard let child = children.withLock({ $0[pid] }) else { return -1 }
        let status = child.waitUntilEnded(seconds: nil) ?? -1
        children.withLock { _ = $0.removeValue(forKey: pid) }
        return status
    }

    /// Waits at most `seconds` for `pid`; its exit status, or nil when it is still running.
    public static func wait(_ pid: pid_t, seconds: Double) -> Int32? {
        guard let child = children.withLock({ $0[pid] }) else { return -1 }  // not our child (any more)
        guard let status = child.waitUntilEnded(seconds: seconds) else { return nil }
        children.withLock { _ = $0.removeValue(forKey: pid) }
        return status
    }

    /// Stops `pid`: SIGTERM, then SIGKILL after `grace` seconds; returns its exit status.
    @discardableResult
    public static func stop(_ pid: pid_t, grace: Double) -> Int32 {
        kill(pid, SIGTERM)
        if let status = wait(pid, seconds: grace) { return status }
        kill(pid, SIGKILL)
        return wait(pid)
    }

    /// Runs `argv` to completion with its output to /dev/null; returns the wall time and the
    /// child's CPU time (user + system), both in ms.
    ///
    /// The CPU time is the growth of `getrusage(RUSAGE_CHILDREN)` from before the child starts
    /// to after swift-subprocess has reaped it: a reaped child's user and system time (its own
    /// reaped children's included, as `wait4` counted them) join this process's children's
    /// totals at that moment. That is this child's alone when it is the only child reaped in
    /// between, as here: the long-lived children a benchmark runs beside it (a bus, ferryd, an
    /// anchor's server) are reaped only when the benchmark stops them. A child measured while
    /// others end around it is read from `/proc/PID/stat` instead, just before it is stopped
    /// (``ProcessStats``, as scripts/bridge-x11-pairs.sh does for the owners).
    public static func timedRun(_ argv: [String]) throws -> (wall: Double, cpu: Double) {
        let configuration = try configuration(argv)
        let before = childrenCPU()
        let began = now()
        let status = try blocking {
            Spawn.status(try await Subprocess.run(configuration, output: .discarded, error: .discarded).terminationStatus)
        }
        let elapsed = now() - began
        let cpu = childrenCPU() - before
        guard status == 0 else {
            throw Failure(description: "\(argv.joined(separator: " ")) exited with \(status)")
        }
        return (elapsed / 1000, cpu)
    }

    /// Runs `argv` and returns its status and what it wrote on standard output.
    public static func output(_ argv: [String], stderr: Stream = .inherited) throws -> (status: Int32, bytes: [UInt8]) {
        let configuration = try configuration(argv)
        let error = try outputDescriptor(stderr)
        return try blocking {
            let result = try await Subprocess.run(configuration, input: .none, output: .bytes(limit: .max), error: error)
            return (Spawn.status(result.terminationStatus), result.standardOutput)
        }
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

extension Spawn {
    /// The children started and not yet waited for, by pid.
    private static let children = Mutex<[pid_t: Child]>([:])

    /// One started child: its pid once it runs, its status once it is reaped.
    private final class Child: Sendable {
        private let outcome = Mutex<Result<pid_t, Failure>?>(nil)
        private let status = Mutex<Int32?>(nil)
        private let startedSignal = DispatchSemaphore(value: 0)
        private let endedSignal = DispatchSemaphore(value: 0)

        func started(_ result: Result<pid_t, Failure>) {
            outcome.withLock { $0 = $0 ?? result }
            startedSignal.signal()
        }

        func waitUntilStarted() throws -> pid_t {
            startedSignal.wait()
            return try outcome.withLock { $0! }.get()
        }

        func ended(_ code: Int32) {
            status.withLock { $0 = code }
            endedSignal.signal()
        }

        /// The status once reaped, waiting at most `seconds` (nil: as long as it takes).
        func waitUntilEnded(seconds: Double?) -> Int32? {
            if let code = status.withLock({ $0 }) { return code }
            let deadline = seconds.map { DispatchTime.now() + .microseconds(Int($0 * 1e6)) } ?? .distantFuture
            guard endedSignal.wait(timeout: deadline) == .success else { return nil }
            endedSignal.signal()  // for the next waiter
            return status.withLock { $0 }
        }
    }

    /// What swift-subprocess runs for `argv`: `argv[0]` a path, or a name looked up in PATH; this
    /// process's environment.
    private static func configuration(_ argv: [String]) throws -> Subprocess.Configuration {
        guard let program = argv.first, !program.isEmpty else { throw Failure(description: "nothing to run") }
        let executable: Executable = program.contains("/") ? .path(FilePath(program)) : .name(program)
        return Subprocess.Configuration(executable: executable, arguments: Arguments(Array(argv.dropFirst())))
    }

    private static func inputDescriptor(_ stream: Stream) throws -> FileDescriptorInput {
        switch stream {
        case .inherited: .currentStandardInput
        case .null: .fileDescriptor(try openDescriptor("/dev/null", O_RDONLY), closeAfterSpawningProcess: true)
        case .file(let path): .fileDescriptor(try openDescriptor(path, O_RDONLY), closeAfterSpawningProcess: true)
        case .descriptor(let fd): .fileDescriptor(FileDescriptor(rawValue: fd), closeAfterSpawningProcess: false)
        }
    }

    private static func outputDescriptor(_ stream: Stream) throws -> FileDescriptorOutput {
        switch stream {
        case .inherited: .currentStandardOutput
        case .null: .fileDescriptor(try openDescriptor("/dev/null", O_WRONLY), closeAfterSpawningProcess: true)
        case .file(let path): .fileDescriptor(try openDescriptor(path, O_WRONLY | O_CREAT | O_TRUNC), closeAfterSpawningProcess: true)
        case .descriptor(let fd): .fileDescriptor(FileDescriptor(rawValue: fd), closeAfterSpawningProcess: false)
        }
    }

    /// Opens `path` close-on-exec (swift-subprocess dups it onto the child's stream).
    private static func openDescriptor(_ path: String, _ flags: Int32) throws -> FileDescriptor {
        let fd = Glibc.open(path, flags | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure(description: "cannot open \(path): \(String(cString: strerror(errno)))") }
        return FileDescriptor(rawValue: fd)
    }

    /// A status as the shell reports it: the exit code, or 128 + the signal's number.
    private static func status(_ termination: TerminationStatus) -> Int32 {
        switch termination {
        case .exited(let code): code
        case .signaled(let signal): 128 + signal
        }
    }

    /// The user + system time of this process's reaped children so far, in ms.
    private static func childrenCPU() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &usage)
        func ms(_ t: timeval) -> Double { Double(t.tv_sec) * 1000 + Double(t.tv_usec) / 1000 }
        return ms(usage.ru_utime) + ms(usage.ru_stime)
    }

    /// Runs `body` on ``SpawnExecutor`` and blocks the calling thread until it is done: the
    /// benchmarks call `Spawn` from synchronous code as well as from tasks.
    private static func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Result<T, any Error>?>(nil)
        Task(executorPreference: SpawnExecutor.shared) {
            do {
                let value = try await body()
                result.withLock { $0 = .success(value) }
            } catch {
                result.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        return try result.withLock { $0! }.get()
    }
}

/// One thread that runs the jobs of every task spawning or reaping a child.
///
/// `Spawn`'s calls are synchronous: they block their thread until swift-subprocess has started
/// (or reaped) the child. Were that work on Swift's cooperative pool (two threads on a 2-core
/// machine), a benchmark task blocked in `Spawn` could hold the very thread the spawn needs.
/// Here it never waits on the pool; the jobs are short (a spawn, a resume after the child ends).
final class SpawnExecutor: TaskExecutor {
    /// The one instance.
    static let shared = SpawnExecutor()

    private let jobs = Mutex<[UnownedJob]>([])
    private let pending = DispatchSemaphore(value: 0)

    private init() {
        var thread = pthread_t()
        let me = Unmanaged.passRetained(self).toOpaque()
        pthread_create(&thread, nil, { argument in
            Unmanaged<SpawnExecutor>.fromOpaque(argument!).takeRetainedValue().runJobs()
            return nil
        }, me)
        pthread_detach(thread)
    }

    /// Queues `job` for the thread.
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
        pending.signal()
    }

    private func runJobs() -> Never {
        while true {
            pending.wait()
            let job = jobs.withLock { $0.removeFirst() }
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
