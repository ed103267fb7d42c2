import FerryModel
import FerryTestSupport
import Foundation
import Testing
@testable import ferry_front
@testable import ferry
import FerryTerminal
import DBus
import Ferry

/// `ferry` is the front (Sources/ferry-front): plain `ferry paste` it does itself, everything else
/// it hands to `ferry-cli` beside it. "Alone" is a copy of the front in a folder without
/// `ferry-cli`: what it pastes, it pasted by itself; what it hands over fails with "cannot run".
@Suite("ferry, the front: plain paste by itself, the rest through ferry-cli", .serialized)
struct FrontPasteTests {
    /// A copy of the front with no `ferry-cli` beside it.
    private func alone(_ broker: CLIBroker) throws -> String {
        let copy = broker.folder.appendingPathComponent("alone/ferry")
        if !FileManager.default.fileExists(atPath: copy.path) {
            try FileManager.default.createDirectory(at: copy.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: try FerryCLI.binary(), to: copy)
        }
        return copy.path
    }

    private func runAlone(_ broker: CLIBroker, _ arguments: String...,
                          environment: [String: String]? = nil) async throws -> ChildProcessResult {
        try await ChildProcess.run(try alone(broker), arguments, environment: environment ?? broker.environment)
    }

    /// Runs the full CLI directly.
    private func fullCLI(_ broker: CLIBroker, _ arguments: String...) async throws -> ChildProcessResult {
        try await fullCLI(broker, arguments)
    }

    private func fullCLI(_ broker: CLIBroker, _ arguments: [String]) async throws -> ChildProcessResult {
        let path = try FerryCLI.binary().deletingLastPathComponent().appendingPathComponent("ferry-cli").path
        return try await ChildProcess.run(path, arguments, environment: broker.environment)
    }

    private func pasteLogCount(_ broker: CLIBroker) async throws -> Int {
        let log = try jsonObject(try await broker.ferry("log", "--json"))
        return try #require(log["entries"] as? [[String: Any]]).count
    }

    @Test("plain paste of text is byte-exact, done by the front alone, and logged once")
    func plainText() async throws {
        try await CLIBroker.with { broker in
            let text = "héllo\tworld\r\n  ✓ \u{1}end\n"
            #expect(try await broker.ferry("copy", "--text", text).succeeded)
            let pasted = try await runAlone(broker, "paste")
            #expect(pasted.succeeded, "\(pasted.summary)")
            #expect(pasted.standardOutput == Data(text.utf8))
            #expect(pasted.stderr.isEmpty)
            #expect(try await pasteLogCount(broker) == 1)
            #expect(try await broker.ferry("paste").standardOutput == Data(text.utf8))
            #expect(try await pasteLogCount(broker) == 2)
        }
    }

    @Test("held data over 16 KiB arrives as a descriptor and is copied whole")
    func heldDescriptor() async throws {
        try await CLIBroker.with { broker in
            let data = noise(200 << 10, seed: 4)
            let file = try broker.file("held.bin", data)
            #expect(try await broker.ferry("copy", "--type", "public.data", file.path).succeeded)
            let pasted = try await runAlone(broker, "paste")
            #expect(pasted.succeeded, "\(pasted.summary)")
            #expect(firstDifference(pasted.standardOutput, data) == nil)
        }
    }

    @Test("a promised representation (copy --lazy) streams from its app, is confirmed, and is logged once")
    func promised() async throws {
        try await CLIBroker.with { broker in
            let data = noise(3 << 20, seed: 5)
            let file = try broker.file("lazy.bin", data)
            let source = try broker.start(["copy", "--lazy", "--type", "public.data", file.path])
            defer { source.kill() }
            #expect(try await eventually { try await self.isPromised(broker) }, "the lazy copy never showed up")
            let pasted = try await runAlone(broker, "paste", "--timeout", "20")
            #expect(pasted.succeeded, "\(pasted.summary)")
            #expect(firstDifference(pasted.standardOutput, data) == nil)
            #expect(try await pasteLogCount(broker) == 1)
            #expect(try await self.isPromised(broker), "the data should still be served by the lazy copy")
        }
    }

    @Test("over 8 MiB the front draws the full CLI's progress bar on a terminal and erases it")
    func progressBar() async throws {
        try await CLIBroker.with { broker in
            let data = noise(12 << 20, seed: 6)
            #expect(try await broker.ferry(["copy", "--type", "public.data"], stdin: data).succeeded)
            // Standard error on a pseudo-terminal (python3's pty module), standard output a file.
            let script = """
                import os, pty, subprocess, sys
                master, slave = pty.openpty()
                with open(sys.argv[1], "wb") as out:
                    child = subprocess.Popen(sys.argv[2:], stdout=out, stderr=slave)
                os.close(slave)
                drawn = b""
                while True:
                    try:
                        chunk = os.read(master, 65536)
                    except OSError:
                        break
                    if not chunk:
                        break
                    drawn += chunk
                sys.stderr.write(drawn.hex())
                sys.exit(child.wait())
                """
            let out = broker.folder.appendingPathComponent("bar.bin")
            let result = try await ChildProcess.run("/usr/bin/python3", ["-c", script, out.path, try alone(broker), "paste"],
                                                    environment: broker.environment, timeout: .seconds(60))
            #expect(result.status == 0, "\(result.summary)")
            var bytes: [UInt8] = []
            var hex = result.stderr.utf8.makeIterator()
            while let a = hex.next(), let b = hex.next(), let byte = UInt8(String(decoding: [a, b], as: UTF8.self), radix: 16) {
                bytes.append(byte)
            }
            let drawn = String(decoding: bytes, as: UTF8.self)
            #expect(drawn.contains("\rpasting ["), "\(drawn.debugDescription)")
            #expect(drawn.contains(" / 12.0 MiB"))
            #expect(drawn.hasSuffix("\r\u{1B}[2K"), "the bar was not erased: \(drawn.debugDescription)")
            #expect(try firstDifference(Data(contentsOf: out), data) == nil)
        }
    }

    @Test("--item, --type (known identifiers) and --pasteboard are handled by the front; a MIME type goes to ferry-cli")
    func forms() async throws {
        try await CLIBroker.with { broker in
            let png = try payload("sample.png")
            let text = try broker.file("note.txt", Data("first item\n".utf8))
            let image = try broker.file("image.png", png)
            #expect(try await broker.ferry("copy", text.path, image.path).succeeded)
            #expect(try await runAlone(broker, "paste", "--item", "1", "--type", "public.image").standardOutput == png)
            #expect(try await runAlone(broker, "paste", "-i", "0", "-t", "public.plain-text").stdout == "first item\n")
            #expect(try await runAlone(broker, "paste", "-t", "public.png", "-i", "1").standardOutput == png)

            #expect(try await broker.ferry("copy", "-p", "notes.v2", "--text", "named").succeeded)
            #expect(try await runAlone(broker, "paste", "-p", "notes.v2").stdout == "named")
            #expect(try await runAlone(broker, "paste", "--pasteboard", "notes.v2", "--item", "0").stdout == "named")

            // Resolving a MIME type needs the type database: the full CLI does it.
            #expect(try await broker.ferry("paste", "-i", "1", "--type", "image/png").standardOutput == png)
            let handedOver = try await runAlone(broker, "paste", "-i", "1", "--type", "image/png")
            #expect(handedOver.status == 1)
            #expect(handedOver.stderr.hasPrefix("ferry: cannot run ") && handedOver.stderr.contains("ferry-cli"), "\(handedOver.summary)")
        }
    }

    @Test("nothing to paste, no such item, nothing conforming: the same message and status as ferry-cli, nothing logged")
    func failuresGoThroughTheFullCLI() async throws {
        try await CLIBroker.with { broker in
            let empty = try await broker.ferry("paste")
            #expect(empty.status == 2)
            #expect(empty.stderr == "ferry: nothing to paste: the pasteboard is empty\n")
            let direct = try await fullCLI(broker, "paste")
            #expect(direct.status == empty.status && direct.stderr == empty.stderr)

            #expect(try await broker.ferry("copy", "--text", "one").succeeded)
            for arguments in [["paste", "--item", "3"], ["paste", "--type", "public.png"], ["paste", "-p", "fresh"]] {
                let front = try await broker.ferry(arguments)
                let reference = try await fullCLI(broker, arguments)
                #expect(front.status == 2, "\(arguments): \(front.summary)")
                #expect(front.status == reference.status && front.stderr == reference.stderr, "\(arguments)")
                #expect(front.stderr.split(separator: "\n").count == 1)
            }
            // The front handed those over without a line of its own.
            let alone = try await runAlone(broker, "paste", "--item", "3")
            #expect(alone.status == 1 && alone.stderr.split(separator: "\n").count == 1, "\(alone.summary)")
            #expect(try await pasteLogCount(broker) == 0)
            #expect(try await broker.ferry("paste").stdout == "one")
            #expect(try await pasteLogCount(broker) == 1)
        }
    }

    @Test("a missing type when the item has only a dynamic one: the error names its MIME type, never dyn.")
    func missingTypeNamesMIMETypes() async throws {
        try await CLIBroker.with { broker in
            let odd = "application/x-ferry-front-odd"
            #expect(try await broker.ferry("copy", "-t", odd, "--text", "odd").succeeded)
            for arguments in [["paste", "-t", "public.png"], ["paste", "-t", "image/png"]] {
                let front = try await broker.ferry(arguments)
                #expect(front.status == 2, "\(arguments): \(front.summary)")
                #expect(front.stderr.contains(odd) && !front.stderr.contains("dyn."), "\(arguments): \(front.stderr)")
            }
        }
    }

    @Test("other commands and --help run ferry-cli: the same output, still called ferry")
    func otherCommands() async throws {
        try await CLIBroker.with { broker in
            for arguments in [["--help"], ["paste", "--help"], ["paste", "--item", "-1"], ["pasteboards"], ["frobnicate"]] {
                let front = try await broker.ferry(arguments)
                let reference = try await fullCLI(broker, arguments)
                #expect(front.status == reference.status, "\(arguments)")
                #expect(front.stdout == reference.stdout && front.stderr == reference.stderr, "\(arguments)")
                #expect(!(front.stdout + front.stderr).contains("ferry-cli"), "\(arguments)")
            }
            let help = try await broker.ferry("--help")
            #expect(help.succeeded && help.stdout.contains("USAGE: ferry [--version] <subcommand>"))
            #expect(try await broker.ferry("paste", "--item", "-1").status == 64)
        }
    }

    @Test("--bus is honoured; without a reachable bus the status is ferry-cli's (69)")
    func bus() async throws {
        try await CLIBroker.with { broker in
            #expect(try await broker.ferry("copy", "--text", "over --bus").succeeded)
            var environment = broker.environment
            environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent/ferry-front-test"
            let pasted = try await runAlone(broker, "paste", "--bus", broker.bus.address, environment: environment)
            #expect(pasted.succeeded, "\(pasted.summary)")
            #expect(pasted.stdout == "over --bus")

            let noBus = try await ChildProcess.run(try FerryCLI.binary().path, ["paste"], environment: environment)
            #expect(noBus.status == 69, "\(noBus.summary)")
            #expect(noBus.stderr.hasPrefix("ferry: ") && noBus.stderr.split(separator: "\n").count == 1)
        }
    }

    @Test("without DBUS_SESSION_BUS_ADDRESS the front pastes over $XDG_RUNTIME_DIR/bus, by itself")
    func runtimeDirectoryBus() async throws {
        try await CLIBroker.with { broker in
            #expect(try await broker.ferry("copy", "--text", "over the runtime folder's bus").succeeded)
            // The private bus's socket, linked where a session's bus would be.
            let address = broker.bus.address
            let path = try #require(address.split(separator: ",").first.flatMap { entry in
                entry.hasPrefix("unix:path=") ? String(entry.dropFirst("unix:path=".count)) : nil
            }, "\(address)")
            let runtime = broker.folder.appendingPathComponent("runtime")
            try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: runtime.appendingPathComponent("bus").path, withDestinationPath: path)
            var environment = broker.environment
            environment["DBUS_SESSION_BUS_ADDRESS"] = nil
            environment["XDG_RUNTIME_DIR"] = runtime.path
            let pasted = try await runAlone(broker, "paste", environment: environment)
            #expect(pasted.succeeded, "\(pasted.summary)")
            #expect(pasted.stdout == "over the runtime folder's bus")
        }
    }

    @Test("a bus without ferryd (none running, none activatable): the front says what ferry-cli says, by itself")
    func noBroker() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let environment = bus.environment(adding: ["COLUMNS": "80", "LINES": "25"])
        let front = try await ChildProcess.run(try FerryCLI.binary().path, ["paste"], environment: environment)
        let cli = try await ChildProcess.run(
            try FerryCLI.binary().deletingLastPathComponent().appendingPathComponent("ferry-cli").path, ["paste"],
            environment: environment)
        #expect(front.status == 69, "\(front.summary)")
        #expect(front.status == cli.status && front.stderr == cli.stderr, "front: \(front.stderr) cli: \(cli.stderr)")
        #expect(front.stderr.hasPrefix("ferry: the Ferry broker is not running and cannot be started ("))
        // Not handed over: a copy of the front with no ferry-cli beside it gives the same line.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-front-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = folder.appendingPathComponent("ferry")
        try FileManager.default.copyItem(at: try FerryCLI.binary(), to: copy)
        let alone = try await ChildProcess.run(copy.path, ["paste"], environment: environment)
        #expect(alone.status == 69 && alone.stderr == front.stderr, "\(alone.summary)")
    }

    // MARK: - The front's parsing, without processes

    @Test("the plain forms parse; anything else is left to ferry-cli")
    func parsing() throws {
        func parse(_ arguments: String...) -> PlainPaste? { PlainPaste(arguments: arguments[...]) }
        let plain = try #require(parse("paste"))
        #expect(plain.type == "public.item" && plain.item == 0 && plain.pasteboard == "general" && plain.timeout == 60 && plain.bus == nil)
        let full = try #require(parse("paste", "-t", "public.png", "--item", "2", "-p", "a.b", "--timeout", "5", "--bus", "unix:path=/x"))
        #expect(full.type == "public.png" && full.item == 2 && full.pasteboard == "a.b" && full.timeout == 5 && full.bus == "unix:path=/x")
        for rejected in [["copy"], ["paste", "--help"], ["paste", "-o", "f"], ["paste", "--output", "f"], ["paste", "--type=public.png"],
                         ["paste", "-t", "text/plain"], ["paste", "-t", "com.example.unknown"], ["paste", "-i", "-1"],
                         ["paste", "-i", "x"], ["paste", "-i", "4294967296"], ["paste", "-p", "bad name"], ["paste", "-p", "-x"],
                         ["paste", "--timeout", "0"], ["paste", "--bus", ""], ["paste", "-i", "1", "-i", "2"],
                         ["paste", "--into", "app"], ["paste", "-t"], [], ["paste", "extra"]] {
            #expect(PlainPaste(arguments: rejected[...]) == nil, "\(rejected)")
        }
    }

    @Test("every --type the front sends as it is is what the full CLI would send")
    func knownTypes() {
        for identifier in PlainPaste.knownTypes {
            #expect(ContentType(identifier)?.identifier == identifier, "\(identifier)")
        }
    }

    @Test("broker errors after a delivered read map to the full CLI's statuses and messages")
    func errorStatuses() throws {
        let names = ["org.ferry.Error.Unavailable", "org.ferry.Error.Timeout", "org.ferry.Error.NotFound", "org.ferry.Error.IO",
                     "org.ferry.Error.NoBroker", "org.ferry.Error.Bus", "org.ferry.Error.TooLarge", "org.ferry.Error.Cancelled",
                     "org.ferry.Error.PermissionDenied", "org.ferry.Error.InvalidArgument", "org.ferry.Error.Unheard",
                     "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner",
                     "org.freedesktop.DBus.Error.Spawn.ExecFailed", "org.freedesktop.DBus.Error.UnknownObject",
                     "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout",
                     "org.freedesktop.DBus.Error.InvalidArgs", "org.freedesktop.DBus.Error.AccessDenied", "com.example.Error.Odd"]
        for name in names {
            let odd = try #require(ContentType(tag: "application/x-ferry-front-odd", tagClass: .mimeType, conformingTo: nil))
            let ext = try #require(ContentType(tag: "ferryodd", tagClass: .filenameExtension, conformingTo: nil))
            let named = ":1.7 failed to provide \(odd.identifier): broken pipe (not dyn.\(odd.identifier.dropFirst(4)) nor x\(odd.identifier))"
            for message in ["", "gone\nfor good", "cannot connect", named, "no \(ext.identifier) here"] {
                let front = FrontFailure(busErrorName: name, message: message)
                let error = FerryError(DBusError(try ErrorName(name), message))
                let full = ferryErrorDescription(error)
                #expect(front.status == full?.0.rawValue, "\(name) \(message)")
                // The full CLI prints a dynamic type by its MIME type (describe): so does the front.
                let printed = full.map { withReadableTypes($0.1) }
                #expect(front.message == printed, "\(name) \(message): \(front.message) vs \(printed ?? "")")
            }
        }
        #expect(FrontFailure(busErrorName: "org.ferry.Error.Unavailable", message: "gone").status == 4)
        // A promised read of a dynamic type that fails in FinishTransfer: the front names its MIME type.
        let odd = try #require(ContentType(tag: "application/x-ferry-front-odd", tagClass: .mimeType, conformingTo: nil))
        #expect(odd.isDynamic)
        #expect(FrontFailure(busErrorName: "org.ferry.Error.Unavailable", message: "the source failed to provide \(odd.identifier)")
                .message == "the source failed to provide application/x-ferry-front-odd")
    }

    private func isPromised(_ broker: CLIBroker) async throws -> Bool {
        let result = try await broker.ferry("types", "--json")
        guard result.succeeded, let json = try? jsonObject(result),
              let items = json["items"] as? [[String: Any]], let reps = items.first?["representations"] as? [[String: Any]]
        else { return false }
        return reps.first?["promised"] as? Bool == true
    }
}
