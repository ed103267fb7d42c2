import FerryTestSupport
import Foundation
import Testing

@Suite("ferry pasteboard commands: bad input and exit statuses")
struct FerryCLIErrorTests {
    @Test("an unknown --type, a missing file, a folder and a bad pasteboard name are named errors")
    func badInput() async throws {
        try await CLIBroker.with { broker in
            let unknown = try await broker.ferry("copy", "--type", "com.example.nope", "--text", "x")
            #expect(unknown.status == 2)
            #expect(unknown.stderr == "ferry: unknown type identifier 'com.example.nope'\n")
            let invalid = try await broker.ferry("paste", "--type", "not a type")
            #expect(invalid.status == 2)
            #expect(invalid.stderr == "ferry: invalid type identifier 'not a type'\n")

            let missingPath = broker.folder.appendingPathComponent("missing.txt").path
            let missing = try await broker.ferry("copy", missingPath)
            #expect(missing.status == 2)
            #expect(missing.stderr == "ferry: cannot read '\(missingPath)': No such file or directory\n")
            let folder = try await broker.ferry("copy", broker.folder.path)
            #expect(folder.status == 2)
            #expect(folder.stderr == "ferry: cannot copy '\(broker.folder.path)': it is a folder\n")

            let hostile = try await broker.ferry("paste", "--type", "x\ny\u{1B}[2J")
            #expect(hostile.stderr == "ferry: invalid type identifier 'x\\ny\\u{1B}[2J'\n",
                    "an error is one line whatever it quotes")

            let badName = try await broker.ferry("paste", "--pasteboard", "no spaces")
            #expect(badName.status == 64)
            #expect(badName.stderr.hasPrefix("ferry: bad pasteboard name \"no spaces\""), "\(badName.stderr)")
            #expect(try await broker.ferry("copy", "-p", "", "--text", "x").status == 64)

            let badRep = try await broker.ferry("copy", "--rep", "public.png")
            #expect(badRep.status == 64)
            #expect(badRep.stderr == "ferry: --rep needs TYPE=FILE, not 'public.png'\n")
            #expect(try await broker.ferry("copy", "--text", "x", "--expires", "0").status == 64)
            #expect(try await broker.ferry("paste", "--item", "-1").status == 64)

            // Nothing failed has changed the pasteboard.
            let empty = try await broker.ferry("paste")
            #expect(empty.status == 2)
            #expect(empty.stderr == "ferry: nothing to paste: the pasteboard is empty\n")
            #expect(empty.standardOutput.isEmpty)
        }
    }

    @Test("paste -o leaves no file behind when there is nothing to paste")
    func noPartialOutput() async throws {
        try await CLIBroker.with { broker in
            let out = broker.folder.appendingPathComponent("never.txt")
            let result = try await broker.ferry("paste", "-o", out.path)
            #expect(result.status == 2)
            #expect(!FileManager.default.fileExists(atPath: out.path))
            #expect(try FileManager.default.contentsOfDirectory(atPath: broker.folder.path).isEmpty)

            // An output folder that does not exist fails before the paste: nothing is logged.
            #expect(try await broker.ferry("copy", "--text", "x").succeeded)
            let nowhere = try await broker.ferry("paste", "-o", broker.folder.appendingPathComponent("no/such/file").path)
            #expect(nowhere.status == 1)
            #expect(nowhere.stderr.contains("No such file or directory"), "\(nowhere.stderr)")
            #expect(try await broker.ferry("log").stdout.isEmpty)
        }
    }

    @Test("no bus, or a bus without a broker, exits 69")
    func noBroker() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SESSION_BUS_ADDRESS"] = nil
        let ferry = try FerryCLI.binary().path
        let noSession = try await ChildProcess.run(ferry, ["paste"], environment: env)
        #expect(noSession.status == 69)
        #expect(noSession.stderr.hasPrefix("ferry: cannot connect to the session bus"), "\(noSession.stderr)")
        let noSocket = try await ChildProcess.run(ferry, ["types", "--bus", "unix:path=/nonexistent/ferry"], environment: env)
        #expect(noSocket.status == 69)
        let noDaemon = try await ChildProcess.run(ferry, ["copy", "--text", "x", "--bus", bus.address], environment: env)
        #expect(noDaemon.status == 69, "\(noDaemon.stderr)")
        #expect(noDaemon.stderr.hasPrefix("ferry: the Ferry broker is not running"), "\(noDaemon.stderr)")
        #expect(noDaemon.stderr.split(separator: "\n").count == 1)
    }
}
