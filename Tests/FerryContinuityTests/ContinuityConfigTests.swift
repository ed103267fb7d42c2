import FerryTestSupport
import Foundation
import Testing

/// ferryd's continuity config file: the options as `key = value` lines instead of arguments.
@Suite("Continuity: the config file", .serialized)
struct ContinuityConfigTests {
    /// Writes `text` as a file of `mode` in `folder`.
    func write(_ text: String, to folder: URL, _ name: String, mode: Int = 0o600) throws -> URL {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent(name)
        try Data(text.utf8).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: file.path)
        return file
    }

    /// Runs ferryd until it exits (it should refuse to start) with the given arguments.
    func refusedStart(_ arguments: [String], home: URL) async throws -> ChildProcessResult {
        let state = home.appendingPathComponent("state")
        return try await ChildProcess.run(try BuiltProducts.executable("ferryd"), ["--state-dir", state.path] + arguments,
                                          environment: ["HOME": home.path, "PATH": "/usr/bin:/bin"], timeout: .seconds(20))
    }

    @Test("a device set up by continuity.conf alone, with paths relative to the file, takes part")
    func configFileTurnsContinuityOn() async throws {
        let laptop: (ContinuityEngine) async throws -> Device = { engine in
            // The laptop's seed sits beside its config file and is named relatively.
            let folder = engine.directory.appendingPathComponent("laptop-config")
            let seed = try String(contentsOfFile: engine.seeds["laptop"]!, encoding: .utf8)
            _ = try write(seed, to: folder, "laptop.nk")
            let config = try write("""
                # the laptop's continuity
                continuity = \(engine.url)
                creds = laptop.nk
                continuity-key = \(engine.keys["ALICE"]!)\r
                continuity-ca = \(engine.caFile)

                device = laptop
                handoff-lifetime = 60
                """, to: folder, "continuity.conf")
            return try await Device("laptop", engine: engine, arguments: ["--continuity-config", config.path])
        }
        let desktop: (ContinuityEngine) async throws -> Device = { try await Device("desktop", engine: $0) }
        try await ContinuityEngine.withDevices([laptop, desktop]) { _, devices async throws in
            let (laptop, desktop) = (devices[0], devices[1])
            #expect(try await laptop.ferry("copy", "--text", "configured by file").succeeded)
            #expect(try await eventually { try await desktop.ferry("types").stdout.contains("remote laptop") },
                    "the desktop never listed the copy of the laptop configured by its file")
            #expect(try await desktop.ferry("paste").stdout == "configured by file")
        }
    }

    @Test("a wrong config file stops ferryd with the file, the line and the reason")
    func wrongFilesAreNamed() async throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-conf-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: home) }
        let folder = home.appendingPathComponent(".config/ferry")

        // The default place is read when it exists.
        let unknown = try write("# mine\ncontinuity = tls://127.0.0.1:1\nengine = x\n", to: folder, "continuity.conf")
        var result = try await refusedStart([], home: home)
        #expect(result.status == 1)
        #expect(result.stderr == "ferryd: error: \(unknown.path): line 3: unknown key 'engine' (expected one of continuity, creds, continuity-key, continuity-ca, device, handoff-lifetime, pairing-lifetime, continuity-pasteboards)\n")

        _ = try write("device = a\ndevice = b\n", to: folder, "continuity.conf")
        result = try await refusedStart([], home: home)
        #expect(result.stderr.hasSuffix("line 2: 'device' is given twice\n"), "\(result.stderr)")

        _ = try write("continuity tls://127.0.0.1:1\n", to: folder, "continuity.conf")
        result = try await refusedStart([], home: home)
        #expect(result.stderr.hasSuffix("line 1: expected key = value\n"), "\(result.stderr)")

        // It names the keys ferryd trusts: nobody else may write it.
        _ = try write("device = a\n", to: folder, "continuity.conf", mode: 0o666)
        result = try await refusedStart([], home: home)
        #expect(result.stderr.hasSuffix("writable by others (it names the keys ferryd trusts): chmod go-w\n"), "\(result.stderr)")

        // The file and the command line together need the engine for creds or a key to mean anything.
        _ = try write("device = laptop\n", to: folder, "continuity.conf")
        result = try await refusedStart(["--creds", "/nonexistent"], home: home)
        #expect(result.status == 1)
        #expect(result.stderr == "ferryd: error: continuity (from the command line and \(folder.path)/continuity.conf): --creds and --continuity-key need --continuity\n")

        // A file named on the command line must exist; a value of the file is checked as the option's.
        result = try await refusedStart(["--continuity-config", home.appendingPathComponent("missing.conf").path], home: home)
        #expect(result.stderr.hasSuffix("missing.conf: No such file or directory\n"), "\(result.stderr)")
        let badURL = try write("continuity = http://x\ncreds = a\ncontinuity-key = b\n", to: home, "other.conf")
        result = try await refusedStart(["--continuity-config", badURL.path], home: home)
        #expect(result.stderr.hasSuffix("--continuity http://x: expected tls://host:port\n"), "\(result.stderr)")

        // Without a file, --device alone is refused as before.
        try FileManager.default.removeItem(at: folder.appendingPathComponent("continuity.conf"))
        result = try await refusedStart(["--device", "laptop"], home: home)
        #expect(result.stderr == "ferryd: error: continuity (from the command line): --continuity-ca and --device need --continuity\n")
    }
}
