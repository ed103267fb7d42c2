import FerryTerminal
import FerryTestSupport
import Foundation
import Testing

/// The release build `make install` and `make deb` install from, and ways to run what they
/// installed. `make test` builds it first (`make release`) and sets `FERRY_REQUIRE_RELEASE=1`, so
/// there these tests run; a `swift test` without a release build skips them and says why.
enum InstalledTree {
    /// The package root, where `make` runs.
    static let root = TestPaths.packageRoot

    /// Whether the release executables and the generated man pages are there.
    static var releaseBuilt: Bool {
        let release = root.appendingPathComponent(".build/release")
        return ["ferry", "ferry-cli", "ferryd"].allSatisfy {
            FileManager.default.isExecutableFile(atPath: release.appendingPathComponent($0).path)
        } && FileManager.default.fileExists(atPath: root.appendingPathComponent(".build/install/man1/ferry.1").path)
    }

    /// Run the tests even without a release build (they then fail naming what is missing).
    static var required: Bool { ProcessInfo.processInfo.environment["FERRY_REQUIRE_RELEASE"] == "1" }

    /// The condition every test of this target carries.
    static let enabled = ConditionTrait.enabled(if: releaseBuilt || required,
                                                "needs `make release` first (make test runs it)")

    /// A fresh scratch directory (removed by `remove`).
    static func scratch(_ name: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-\(name)-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// `make ARGUMENTS` at the package root without rebuilding (`-o release`: the release build
    /// is taken as it is; a nested SwiftPM build would wait on the one running the tests).
    static func make(_ arguments: [String]) async throws -> ChildProcessResult {
        try await ChildProcess.run("make", ["-C", root.path, "--no-print-directory", "-o", "release", "-o", "deps"] + arguments,
                                   timeout: .seconds(300))
    }

    /// The programs the Makefile installs (`make programs`).
    static func programs() async throws -> [String] {
        let result = try await make(["-s", "programs"])
        guard result.succeeded else { throw InstallTestError("make programs: \(result.stderr)") }
        return result.stdout.split(whereSeparator: \.isWhitespace).map(String.init)
    }

    /// The toolchain's library directory (where this test process found libswiftCore.so): what
    /// the installed binaries must run without.
    static func toolchainLibraryDirectory() throws -> String {
        // Read to end of file: /proc files have no size to read up to.
        guard let handle = FileHandle(forReadingAtPath: "/proc/self/maps") else { throw InstallTestError("cannot open /proc/self/maps") }
        defer { try? handle.close() }
        let maps = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        guard let line = maps.split(separator: "\n").first(where: { $0.hasSuffix("/libswiftCore.so") }),
              let path = line.split(separator: " ").last else {
            throw InstallTestError("this test process has no libswiftCore.so mapped")
        }
        return URL(fileURLWithPath: String(path)).deletingLastPathComponent().path
    }

    /// What `ldd` says of `binary`, and the lines naming a Swift or toolchain library.
    static func swiftLibraries(of binary: String) async throws -> (ldd: String, swift: [String]) {
        let result = try await ChildProcess.run("ldd", [binary])
        let text = result.stdout + result.stderr
        let swift = text.split(separator: "\n").map(String.init).filter {
            $0.contains("libswift") || $0.contains("libFoundation") || $0.contains("libdispatch")
                || $0.contains("libBlocksRuntime") || $0.contains("not found")
        }
        return (text, swift)
    }

    /// Runs `Fixtures/install/run-installed.sh` in private mount and pid namespaces: the
    /// toolchain's libraries hidden, a private bus whose only service directory is
    /// `serviceDirectory`, `ferry copy` activating ferryd from the installed service file.
    /// - Returns: the `key value` lines it printed, by key, and the whole result.
    static func runInstalled(bin: String, serviceDirectory: String, overlayUsr: String? = nil,
                             work: URL) async throws -> (lines: [String: [String]], result: ChildProcessResult) {
        let config = try String(contentsOf: TestPaths.fixtures.appendingPathComponent("dbus/session.conf"), encoding: .utf8)
            .replacingOccurrences(of: "</busconfig>", with: "  <servicedir>\(serviceDirectory)</servicedir>\n</busconfig>")
        let configURL = work.appendingPathComponent("bus.conf")
        try config.write(to: configURL, atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = nil
        environment["HIDE"] = try toolchainLibraryDirectory()
        environment["OVERLAY_USR"] = overlayUsr ?? ""
        environment["PROGRAMS"] = try await programs().joined(separator: " ")
        environment["FERRY_BIN"] = bin
        environment["BUS_CONFIG"] = configURL.path
        environment["WORK"] = work.path
        let script = TestPaths.fixtures.appendingPathComponent("install/run-installed.sh").path
        let result = try await ChildProcess.run("unshare", ["--mount", "--pid", "--fork", "--kill-child", "--mount-proc",
                                                            "/bin/bash", script],
                                                environment: environment, timeout: .seconds(120))
        var lines: [String: [String]] = [:]
        for line in result.stdout.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            lines[String(parts[0]), default: []].append(parts.count > 1 ? String(parts[1]) : "")
        }
        return (lines, result)
    }

    /// The `version PROGRAM OUTPUT` lines `runInstalled` printed that differ from what each
    /// program must say: `NAME NUMBER`, NAME the program's (`ferry` for ferry-cli, its other half).
    static func wrongVersions(in lines: [String: [String]], programs: [String]) -> [String] {
        let printed = lines["version"] ?? []
        let expected = programs.map { program in
            "\(program) " + FerryVersion.line(for: program == "ferry-cli" ? "ferry" : program)
        }
        return expected.filter { !printed.contains($0) } + printed.filter { !expected.contains($0) }
    }

    /// Every path under `directory`, relative to it, sorted.
    static func contents(of directory: URL) -> [String] {
        let base = directory.resolvingSymlinksInPath().path
        guard let walker = FileManager.default.enumerator(atPath: base) else { return [] }
        return walker.compactMap { $0 as? String }.sorted()
    }
}

extension ChildProcessResult {
    /// The status and both outputs, for a failed expectation.
    var outcome: String {
        "status \(status)\(terminatedBySignal ? " (signal)" : "")\(timedOut ? " (timed out)" : "")\nstdout: \(stdout)\nstderr: \(stderr)"
    }
}

/// A test's set-up failed (a command it needs, the state of this process).
struct InstallTestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
