import FerryTestSupport
import Foundation
import Testing

/// A private bus with a real `ferryd`, and the real `ferry` run against it as separate processes.
final class CLIBroker: Sendable {
    let bus: PrivateBus
    let stateDir: URL
    let daemon: ServiceProcess
    /// A scratch folder for files the test copies and pastes.
    let folder: URL

    /// Starts a bus and a `ferryd` given `ferrydArguments` (`--disk-budget 1M`) besides its bus and state folder.
    init(ferrydArguments: [String] = []) async throws {
        bus = try PrivateBus()
        let id = UUID().uuidString.prefix(8)
        stateDir = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-cli-state-\(id)")
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-cli-files-\(id)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        daemon = try await ServiceProcess.ferryd(on: bus, stateDir: stateDir, ferrydArguments)
    }

    /// Runs `body` with a fresh broker, tearing it down afterwards (off the pool).
    static func with<T>(ferrydArguments: [String] = [], _ body: (CLIBroker) async throws -> T) async throws -> T {
        try await withTearDown(try await CLIBroker(ferrydArguments: ferrydArguments), { $0.tearDown() }, body)
    }

    func tearDown() {
        daemon.stop()
        bus.stop()
        try? FileManager.default.removeItem(at: stateDir)
        try? FileManager.default.removeItem(at: folder)
    }

    /// The environment for `ferry`: this bus as the session bus, fixed terminal size.
    var environment: [String: String] { bus.environment(adding: ["COLUMNS": "80", "LINES": "25"]) }

    /// Runs `ferry ARGUMENTS` on this bus and waits for it.
    func ferry(_ arguments: String..., stdin: Data? = nil, timeout: Duration = .seconds(30)) async throws -> ChildProcessResult {
        try await ferry(arguments, stdin: stdin, timeout: timeout)
    }

    /// Runs `ferry ARGUMENTS` on this bus and waits for it.
    func ferry(_ arguments: [String], stdin: Data? = nil, timeout: Duration = .seconds(30)) async throws -> ChildProcessResult {
        try await ChildProcess.run(try FerryCLI.binary().path, arguments, environment: environment, standardInput: stdin,
                                   timeout: timeout)
    }

    /// Starts `ferry ARGUMENTS` in the background (a `--lazy` copy), standard input from `stdin`.
    func start(_ arguments: [String], stdin: Int32? = nil) throws -> RunningProcess {
        try RunningProcess(try FerryCLI.binary().path, arguments, environment: environment, standardInput: stdin)
    }

    /// Writes `data` to a file named `name` in the scratch folder.
    func file(_ name: String, _ data: Data) throws -> URL {
        let url = folder.appendingPathComponent(name)
        try data.write(to: url)
        return url
    }

}

extension ChildProcessResult {
    /// A description for failed expectations.
    var summary: String { "status \(status)\(terminatedBySignal ? " (signal)" : ""), stdout \(standardOutput.count) bytes, stderr: \(stderr)" }
}

/// Deterministic bytes that no sniffer calls text.
func noise(_ count: Int, seed: UInt32 = 1) -> Data {
    var bytes = [UInt8](repeating: 0, count: count)
    var x = seed &* 2_654_435_761 | 1
    for i in 0..<count {
        x ^= x << 13
        x ^= x >> 17
        x ^= x << 5
        bytes[i] = UInt8(truncatingIfNeeded: x)
    }
    return Data(bytes)
}

/// A payload from `Fixtures/Payloads`.
func payload(_ name: String) throws -> Data {
    try Data(contentsOf: TestPaths.fixtures.appendingPathComponent("Payloads/\(name)"))
}
