import Foundation
import Synchronization

/// A long-running child process for tests (a peer service, later the daemon and demo apps),
/// started and considered ready once it prints a line beginning with `READY`.
///
/// Its standard output and error are collected; it gets SIGTERM on `stop()` or when released.
public final class ServiceProcess: Sendable {
    /// The child's process id.
    public var pid: Int32 { child.pid }
    private let child: RunningProcess
    private let collected = CollectedOutput()

    /// Starts `executable` and waits until it prints `READY` on standard output.
    ///
    /// - Parameters:
    ///   - environment: the child's full environment (use `PrivateBus.environment()`).
    ///   - timeout: how long to wait for `READY`.
    /// - Throws: `ChildProcessError` when it exits or stays silent past `timeout`; the
    ///   error includes what it printed.
    public init(_ executable: String, _ arguments: [String], environment: [String: String],
                timeout: Duration = .seconds(15)) async throws {
        let child = try RunningProcess(executable, arguments, environment: environment)
        self.child = child
        let collected = self.collected
        for (fd, isError) in [(child.standardOutput, false), (child.standardError, true)] {
            Thread.detachNewThread {
                var buffer = [UInt8](repeating: 0, count: 65536)
                while true {
                    let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                    if n < 0 && errno == EINTR { continue }
                    if n <= 0 {
                        collected.text.withLock { if isError { $0.errClosed = true } else { $0.outClosed = true } }
                        return
                    }
                    let text = String(decoding: buffer[0..<n], as: UTF8.self)
                    collected.text.withLock { if isError { $0.err += text } else { $0.out += text } }
                }
            }
        }
        let deadline = ContinuousClock.now + timeout
        // A whole line: one the reader has only begun to see would lack what follows READY.
        while !standardOutput.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            .contains(where: { $0.hasPrefix("READY") }) {
            if let status = child.exitStatus {
                throw failure("\(executable) exited with status \(status) before it was ready")
            }
            if ContinuousClock.now > deadline {
                child.kill()
                throw failure("\(executable) was not ready after \(timeout)")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    private func failure(_ what: String) -> ChildProcessError {
        ChildProcessError(description: "\(what).\nstdout: \(standardOutput)\nstderr: \(standardError)")
    }

    /// What the child printed on standard output so far.
    public var standardOutput: String { collected.text.withLock { $0.out } }
    /// What the child printed on standard error so far.
    public var standardError: String { collected.text.withLock { $0.err } }
    /// Whether the child is still running.
    public var isRunning: Bool { child.isRunning }

    /// Waits for the child to exit by itself, at most `timeout`; returns its exit status
    /// (128 + signal when a signal ended it) or nil. Once it returns a status, `standardOutput`
    /// and `standardError` hold everything the child printed (unless a grandchild kept them open).
    public func waitForExit(timeout: Duration = .seconds(10)) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        guard let status = await child.waitForExit(timeout: timeout) else { return nil }
        while !collected.text.withLock({ $0.outClosed && $0.errClosed }) && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(2))
        }
        return status
    }

    /// Sends `signal` to the child.
    public func send(_ signal: Int32) { child.send(signal) }

    /// Stops the child: SIGTERM, then SIGKILL after two seconds. Safe to call twice.
    public func stop() { child.terminate() }

    deinit { stop() }
}

/// A child's output so far, appended by reader threads.
private final class CollectedOutput: Sendable {
    let text = Mutex<(out: String, err: String, outClosed: Bool, errClosed: Bool)>(("", "", false, false))
}

extension ServiceProcess {
    /// Starts the built `ferryd` on `bus` with its state in `stateDir`, plus `extra` arguments
    /// and `environment` variables, and waits until it owns `org.ferry.Broker` (its READY line).
    public static func ferryd(on bus: PrivateBus, stateDir: URL, _ extra: [String] = [],
                              environment: [String: String] = [:]) async throws -> ServiceProcess {
        try await ServiceProcess(try BuiltProducts.executable("ferryd"),
                                 ["--bus", bus.address, "--state-dir", stateDir.path] + extra,
                                 environment: bus.environment().merging(environment) { _, given in given })
    }
}
