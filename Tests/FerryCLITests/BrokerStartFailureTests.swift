import FerryTestSupport
import Foundation
import Testing

/// When the bus cannot start ferryd because another ferryd holds the state directory (a second
/// session bus of the same user), `ferry` says which one.
@Suite("ferry: a broker that cannot start because its state is held")
struct BrokerStartFailureTests {
    @Test("paste (the front), types and copy exit 69 naming the ferryd that holds the state directory",
          arguments: [["paste"], ["types"], ["copy", "--text", "x"]])
    func heldStateNamed(_ arguments: [String]) async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-held-\(UUID().uuidString.prefix(8))")
        let state = root.appendingPathComponent("ferry")
        let services = root.appendingPathComponent("services")
        try FileManager.default.createDirectory(at: services, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }

        // The first session: its ferryd holds the default state directory.
        let first = try PrivateBus()
        defer { first.stop() }
        let holder = try await ServiceProcess.ferryd(on: first, stateDir: state)
        defer { holder.stop() }

        // The second session: the bus would start ferryd on the same directory.
        let config = try String(contentsOf: TestPaths.fixtures.appendingPathComponent("dbus/session.conf"), encoding: .utf8)
            .replacingOccurrences(of: "</busconfig>", with: "  <servicedir>\(services.path)</servicedir>\n</busconfig>")
        let configURL = root.appendingPathComponent("session.conf")
        try config.write(to: configURL, atomically: true, encoding: .utf8)
        try """
            [D-BUS Service]
            Name=org.ferry.Broker
            Exec=\(try BuiltProducts.executable("ferryd")) --state-dir \(state.path)
            """.write(to: services.appendingPathComponent("org.ferry.Broker.service"), atomically: true, encoding: .utf8)
        let second = try PrivateBus(config: configURL)
        defer { second.stop() }

        let result = try await ChildProcess.run(try FerryCLI.binary().path, arguments,
                                                environment: second.environment(adding: ["XDG_STATE_HOME": root.path]),
                                                timeout: .seconds(30))
        #expect(result.status == 69, "\(arguments): \(result.summary)")
        #expect(result.stderr.hasPrefix("ferry: the Ferry broker is not running and cannot be started"), "\(result.stderr)")
        #expect(result.stderr.contains("\(state.path) is held by ferryd (pid \(holder.pid)) on the bus \(first.address)"),
                "\(arguments): \(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(holder.isRunning)
    }
}
