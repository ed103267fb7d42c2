import Foundation
import Synchronization

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

/// Runs child processes for tests, with a time limit, capturing their output.
///
/// Built on Foundation's `Process`, so the child inherits the spawning thread's signal mask
/// (SIGTERM blocked on Swift's worker threads): fine for commands that run to completion; for
/// services that must stop on SIGTERM use `ServiceProcess`/`Subprocess`. A child that outlives
/// `timeout` gets SIGTERM, then SIGKILL a second later.
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
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try resolve(executable))
        process.arguments = arguments
        var env = environment ?? ProcessInfo.processInfo.environment
        if environment == nil { env["DBUS_SESSION_BUS_ADDRESS"] = nil }
        process.environment = env
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let input = Pipe()
        process.standardInput = standardInput == nil ? FileHandle.nullDevice : input

        let collected = Mutex<(out: Data?, err: Data?, status: (Int32, Bool)?)>((nil, nil, nil))
        let done = Completion()
        let check: @Sendable () -> Void = {
            let finished = collected.withLock { $0.out != nil && $0.err != nil && $0.status != nil }
            if finished { done.complete() }
        }
        process.terminationHandler = { p in
            let signalled = p.terminationReason == .uncaughtSignal
            collected.withLock { $0.status = (p.terminationStatus, signalled) }
            check()
        }
        // Children other tests spawn meanwhile must not inherit our pipe ends (a stray copy of a
        // write end would keep the reads below from ever seeing end of file).
        for pipe in [out, err, input] {
            setCloseOnExec(pipe.fileHandleForReading.fileDescriptor)
            setCloseOnExec(pipe.fileHandleForWriting.fileDescriptor)
        }
        try process.run()
        // Blocking reads stay off the cooperative pool.
        let outHandle = out.fileHandleForReading, errHandle = err.fileHandleForReading
        Thread.detachNewThread {
            let data = outHandle.readDataToEndOfFile()
            collected.withLock { $0.out = data }
            check()
        }
        Thread.detachNewThread {
            let data = errHandle.readDataToEndOfFile()
            collected.withLock { $0.err = data }
            check()
        }
        if let standardInput {
            let writer = input.fileHandleForWriting
            Thread.detachNewThread {
                try? writer.write(contentsOf: standardInput)
                try? writer.close()
            }
        }
        let pid = process.processIdentifier
        let timedOut = await done.wait(timeout: timeout)
        if timedOut {
            kill(pid, SIGTERM)
            if await done.wait(timeout: .seconds(1)) { kill(pid, SIGKILL) }
            _ = await done.wait(timeout: .seconds(10))
        }
        let final = collected.withLock { $0 }
        return ChildProcessResult(
            status: final.status?.0 ?? -1, terminatedBySignal: final.status?.1 ?? true,
            standardOutput: final.out ?? Data(), standardError: final.err ?? Data(), timedOut: timedOut)
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

/// A one-shot flag that tasks can await with a time limit (polls; fine for tests).
final class Completion: Sendable {
    private let done = Mutex(false)

    func complete() { done.withLock { $0 = true } }

    /// Waits for completion; returns true if the time limit passed first.
    func wait(timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if done.withLock({ $0 }) { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return !done.withLock { $0 }
    }
}
