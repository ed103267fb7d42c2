import FerryTestSupport
import Foundation
import Testing

/// `services/ferry-bridge.service` (systemd user unit) and `services/ferry-bridge.desktop` (XDG
/// autostart), checked by the tools that read them: `systemd-analyze verify --user` and
/// `desktop-file-validate` (desktop-file-utils).
@Suite("services: ferry-bridge's systemd user unit and XDG autostart file")
struct BridgeServiceFilesTests {
    static let services = TestPaths.packageRoot.appendingPathComponent("services")

    /// The `key=value` lines of one section of an INI-style file, in order.
    static func entries(_ text: String, section: String) -> [(key: String, value: String)] {
        var current = ""
        var found: [(String, String)] = []
        for line in text.split(separator: "\n").map(String.init) {
            if line.hasPrefix("[") { current = line; continue }
            guard current == "[\(section)]", !line.hasPrefix("#"), let equals = line.firstIndex(of: "=") else { continue }
            found.append((String(line[..<equals]), String(line[line.index(after: equals)...])))
        }
        return found
    }

    @Test("the unit belongs to the graphical session, restarts on failure, runs ferry-bridge, and systemd accepts it")
    func systemdUnit() async throws {
        let text = try String(contentsOf: Self.services.appendingPathComponent("ferry-bridge.service"), encoding: .utf8)
        let unit = Self.entries(text, section: "Unit"), service = Self.entries(text, section: "Service")
        let install = Self.entries(text, section: "Install")
        #expect(unit.contains { $0 == ("PartOf", "graphical-session.target") })
        #expect(unit.contains { $0 == ("After", "graphical-session.target") })
        #expect(service.contains { $0 == ("Restart", "on-failure") })
        #expect(install.contains { $0 == ("WantedBy", "graphical-session.target") })
        let execStart = try #require(service.first { $0.key == "ExecStart" }?.value)
        #expect(execStart == "/usr/local/bin/ferry-bridge", "the path convention of ferryd.service")
        let ferryd = try String(contentsOf: Self.services.appendingPathComponent("ferryd.service"), encoding: .utf8)
        #expect(ferryd.contains("ExecStart=/usr/local/bin/ferryd"))

        // systemd checks that ExecStart is executable: verify a copy whose ExecStart is one that
        // exists here, so every other line is checked as written.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-units-\(getpid())-\(UUID().uuidString.prefix(8))")
        let runtime = folder.appendingPathComponent("runtime")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = folder.appendingPathComponent("ferry-bridge.service")
        try text.replacingOccurrences(of: "ExecStart=\(execStart)", with: "ExecStart=/bin/true").write(to: copy, atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = runtime.path
        let verify = try await ChildProcess.run("/usr/bin/systemd-analyze", ["verify", "--user", copy.path], environment: environment)
        #expect(verify.status == 0 && verify.stderr.isEmpty && verify.stdout.isEmpty,
                "systemd-analyze verify --user: \(verify.status) \(verify.stdout)\(verify.stderr)")
    }

    @Test("the autostart file runs ferry-bridge, is hidden from menus, and desktop-file-validate accepts it")
    func autostartFile() async throws {
        let path = Self.services.appendingPathComponent("ferry-bridge.desktop").path
        let entry = Self.entries(try String(contentsOfFile: path, encoding: .utf8), section: "Desktop Entry")
        #expect(entry.contains { $0 == ("Type", "Application") })
        #expect(entry.contains { $0 == ("Exec", "/usr/local/bin/ferry-bridge") })
        #expect(entry.contains { $0 == ("NoDisplay", "true") })
        #expect(!entry.contains { $0.key == "OnlyShowIn" || $0.key == "NotShowIn" || $0.key == "Hidden" }, "every desktop starts it")
        let validator = "/usr/bin/desktop-file-validate"
        guard FileManager.default.isExecutableFile(atPath: validator) else {
            Issue.record("desktop-file-validate is missing: apt-get install desktop-file-utils")
            return
        }
        let validate = try await ChildProcess.run(validator, [path])
        #expect(validate.status == 0 && validate.stdout.isEmpty && validate.stderr.isEmpty,
                "desktop-file-validate: \(validate.status) \(validate.stdout)\(validate.stderr)")
    }
}
