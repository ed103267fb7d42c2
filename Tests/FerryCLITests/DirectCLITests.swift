import FerryTestSupport
import Foundation
import Testing

/// `ferry` over ferryd's direct connection, and `FERRY_DIRECT=0` keeping it on the bus.
@Suite("ferry: direct connections")
struct DirectCLITests {
    @Test("ferry copy and ferry pasteboards bind a direct connection; FERRY_DIRECT=0 keeps them on the bus; the bytes are the same")
    func directAndOff() async throws {
        let bus = try PrivateBus()
        let id = "\(getpid())-\(UUID().uuidString.prefix(8))"
        let stateDir = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-cli-direct-\(id)")
        let runtime = FileManager.default.temporaryDirectory.appendingPathComponent("fr-\(id)").path
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let daemon = try await ServiceProcess(try BuiltProducts.executable("ferryd"), ["--bus", bus.address, "--state-dir", stateDir.path, "--verbose"],
                                              environment: bus.environment(adding: ["XDG_RUNTIME_DIR": runtime]))
        defer {
            daemon.stop()
            bus.stop()
            try? FileManager.default.removeItem(at: stateDir)
            try? FileManager.default.removeItem(atPath: runtime)
        }
        func ferry(_ arguments: [String], direct: Bool, stdin: String? = nil) async throws -> ChildProcessResult {
            var environment = bus.environment(adding: ["COLUMNS": "80", "LINES": "25"])
            if !direct { environment["FERRY_DIRECT"] = "0" }
            return try await ChildProcess.run(try FerryCLI.binary().path, arguments, environment: environment,
                                              standardInput: stdin.map { Data($0.utf8) })
        }
        func bindings() -> Int { daemon.standardError.components(separatedBy: "direct connection bound to").count - 1 }
        // ferryd's log line can reach this process after the command has exited.
        func bound(_ count: Int) async -> Bool { await eventually(.seconds(5)) { bindings() >= count } && bindings() == count }

        let copied = try await ferry(["copy"], direct: true, stdin: "over the direct connection")
        #expect(copied.succeeded, "\(copied.stderr)")
        #expect(await bound(1), "\(daemon.standardError)")
        #expect(try await ferry(["paste"], direct: true).stdout == "over the direct connection")

        let off = try await ferry(["copy"], direct: false, stdin: "over the bus")
        #expect(off.succeeded, "\(off.stderr)")
        #expect(bindings() == 1, "FERRY_DIRECT=0 binds nothing")
        #expect(try await ferry(["paste"], direct: false).stdout == "over the bus")

        let listed = try await ferry(["pasteboards"], direct: true)
        #expect(listed.succeeded && listed.stdout.contains("general"), "\(listed.stdout)\(listed.stderr)")
        #expect(await bound(2), "\(daemon.standardError)")
    }
}
