import Foundation
import Subprocess
import Synchronization
import SystemPackage

/// What a finished child process left behind.
public struct ChildProcessResult: Sendable {
    /// The exit status, or the signal number when `terminatedBySignal` is true.
    public var status: Int32
    /// True when the process ended from a signal rather than by exiting.
    public var terminatedBySignal: Bool
    /// Everything the process wrote to standard output.
    public var standardOutput: Data
    /// Everything the process wrote to standard error.
    public var standardError: Data
    /// True when the process was killed because it ran past its time limit.
    public var timedOut: Bool

    /// Standard output decoded as UTF-8 (lossy).
    public var stdout: String { String(decoding: standardOutput, as: UTF8.self) }
    /// Standard error decoded as UTF-8 (lossy).
    public var stderr: String { String(decoding: standardError, as: UTF8.self) }
    /// True when the process exited normally with status 0.
    public var succeeded: Bool { !terminatedBySignal && status == 0 && !timedOut }
}

/// Failures starting a child process.
public struct ChildProcessError: Error, CustomStringConvertible {
    /// What went wrong.
    public var description: String
}

/// Runs child processes to completion for tests, with a time limit, capturing their output.
///
/// Built on swift-subprocess: the child starts with an empty signal mask and default signal
/// dispositions and inherits no descriptor but its three standard ones. A child that outlives
/// `timeout` gets SIGTERM, then SIGKILL a second later. Output is collected until the child
/// itself ends (what it wrote is drained; a grandchild that keeps the pipes open does not hold
/// the call up). For a long-lived child use `RunningProcess` or `ServiceProcess`.
public enum ChildProcess {
    /// Runs `executable` with `arguments` and waits for it, at most `timeout`.
    ///
    /// - Parameters:
    ///   - executable: an absolute path, or a bare name looked up in `PATH`.
    ///   - arguments: the arguments after the program name.
    ///   - environment: the full environment; `nil` inherits the test process's environment
    ///     minus `DBUS_SESSION_BUS_ADDRESS` (tests never reach the real session bus).
    ///   - standardInput: bytes written to the child's standard input, which is then closed.
    ///   - timeout: after this the child gets SIGTERM, then SIGKILL a second later.
    /// - Returns: the exit status and captured output.
    public static func run(
        _ executable: String,
        _ arguments: [String] = [],
        environment: [String: String]? = nil,
        standardInput: Data? = nil,
        timeout: Duration = .seconds(30)
    ) async throws -> ChildProcessResult {
        var env = environment ?? ProcessInfo.processInfo.environment
        if environment == nil { env["DBUS_SESSION_BUS_ADDRESS"] = nil }
        let configuration = Configuration(
            executable: .path(FilePath(try resolve(executable))), arguments: Arguments(arguments),
            environment: .exactly(env))
        let child = Watched()
        let timer = Task {
            try await Task.sleep(for: timeout)
            guard child.signal(SIGTERM) else { return }
            try await Task.sleep(for: .seconds(1))
            _ = child.signal(SIGKILL)
        }
        defer {
            timer.cancel()
            child.forget()
        }
        let result = try await Self.collect(configuration, input: standardInput, child: child)
        let (status, signalled): (Int32, Bool) = switch result.terminationStatus {
        case .exited(let code): (code, false)
        case .signaled(let signal): (signal, true)
        }
        return ChildProcessResult(status: status, terminatedBySignal: signalled,
                                  standardOutput: result.standardOutput, standardError: result.standardError,
                                  timedOut: child.wasSignalled)
    }

    /// Ignores SIGPIPE in the test process, once: a child that exits without reading its
    /// standard input (a refusal) closes the pipe, and writing the rest must be an error, not
    /// the test process's death (status 141, seen once in a parallel run).
    private static let sigpipeIgnored: Void = { signal(SIGPIPE, SIG_IGN) }()

    /// Runs the child with `input` on its standard input (none when nil), collecting both outputs.
    private static func collect(_ configuration: Configuration, input: Data?, child: Watched)
        async throws -> ExecutionResult<Void, DataOutput, DataOutput> {
        if let input {
            // A pipe of our own, written here: swift-subprocess's own writer, when the child ends
            // without reading (EPIPE), left a descriptor unclosed and stopped the test process
            // ("FileDescriptor … was not closed", seen once in a parallel run).
            _ = sigpipeIgnored
            let pipe = try FileDescriptor.pipe()
            let writer = Thread {
                defer { try? pipe.writeEnd.close() }
                _ = try? pipe.writeEnd.writeAll(input)  // a child that stops reading is no failure here
            }
            writer.start()
            return try await Subprocess.run(configuration, input: .fileDescriptor(pipe.readEnd, closeAfterSpawningProcess: true),
                                            output: .data(limit: .max),
                                            error: .data(limit: .max)) { child.started($0.processIdentifier) }
        } else {
            return try await Subprocess.run(configuration, input: .none, output: .data(limit: .max),
                                            error: .data(limit: .max)) { child.started($0.processIdentifier) }
        }
    }

    /// Finds `name` in `PATH` unless it already contains a slash.
    public static func resolve(_ name: String) throws -> String {
        if name.contains("/") { return name }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for dir in path.split(separator: ":") {
            let candidate = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw ChildProcessError(description: "\(name) not found in PATH")
    }
}

/// Marks `fd` close-on-exec so that no child process inherits it (dup2 onto a child's 0/1/2
/// clears the flag there, so a pipe handed to `Process` as standard I/O still works).
public func setCloseOnExec(_ fd: Int32) {
    let flags = fcntl(fd, F_GETFD)
    if flags >= 0 { _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
}

/// The child of one `ChildProcess.run` as its time limit sees it: the pid and a copy of the
/// pidfd while `run` goes on, so a late SIGTERM never reaches a pid the kernel gave to another.
private final class Watched: Sendable {
    private let state = Mutex<(pid: pid_t, pidfd: Int32, signalled: Bool)?>(nil)

    /// Notes the child swift-subprocess started.
    func started(_ id: ProcessIdentifier) {
        let copy = id.processDescriptor >= 0 ? fcntl(id.processDescriptor, F_DUPFD_CLOEXEC, 0) : -1
        state.withLock { $0 = (id.value, copy, false) }
    }

    /// Sends `signal` if the child still runs; true when it was sent.
    func signal(_ signal: Int32) -> Bool {
        state.withLock { child in
            guard let running = child, running.pidfd >= 0 else { return false }
            var entry = pollfd(fd: running.pidfd, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 0) == 0 else { return false }
            kill(running.pid, signal)
            child?.signalled = true
            return true
        }
    }

    /// True when the time limit signalled the child.
    var wasSignalled: Bool { state.withLock { $0?.signalled ?? false } }

    /// Closes the pidfd copy once `run` has returned; later signals go nowhere.
    func forget() {
        state.withLock { child in
            if let pidfd = child?.pidfd, pidfd >= 0 { close(pidfd) }
            child?.pidfd = -1
        }
    }
}
