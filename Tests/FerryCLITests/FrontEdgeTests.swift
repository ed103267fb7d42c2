import FerryTestSupport
import Foundation
import Testing
import FerryTerminal
import FerryText
@testable import ferry_front

/// The `ferry` front at the edges: closed standard descriptors, a reader that stops early, odd
/// argument forms, and where it looks for `ferry-cli`. Each compared with `ferry-cli` itself.
@Suite("ferry, the front, at the edges: the same as ferry-cli", .serialized)
struct FrontEdgeTests {
    private func fullCLIPath() throws -> String {
        try FerryCLI.binary().deletingLastPathComponent().appendingPathComponent("ferry-cli").path
    }

    /// Runs `script` with `sh -c`, `$0` the program, `$1`… `arguments`.
    private func shell(_ broker: CLIBroker, _ script: String, _ program: String,
                       _ arguments: [String] = []) async throws -> ChildProcessResult {
        try await ChildProcess.run("/bin/sh", ["-c", script, program] + arguments, environment: broker.environment,
                                   timeout: .seconds(60))
    }

    @Test("standard output closed: the paste fails as ferry-cli's does, and the bytes do not go to the bus")
    func closedStandardOutput() async throws {
        try await CLIBroker.with { broker in
            #expect(try await broker.ferry("copy", "--text", "secret text").succeeded)
            let script = #"exec "$0" paste >&-"#
            let front = try await shell(broker, script, try FerryCLI.binary().path)
            let cli = try await shell(broker, script, try fullCLIPath())
            #expect(cli.status == 1, "\(cli.summary)")
            #expect(front.status == cli.status && front.stderr == cli.stderr, "front: \(front.summary) cli: \(cli.summary)")
            #expect(front.stderr.hasPrefix("ferry: cannot write to standard output"), "\(front.summary)")
            // The broker's bus connection still works (nothing was written into it).
            #expect(try await broker.ferry("paste").stdout == "secret text")
        }
    }

    @Test("standard error closed: the paste still writes its bytes")
    func closedStandardError() async throws {
        try await CLIBroker.with { broker in
            #expect(try await broker.ferry("copy", "--text", "quiet").succeeded)
            let pasted = try await shell(broker, #"exec "$0" paste 2>&-"#, try FerryCLI.binary().path)
            #expect(pasted.succeeded && pasted.stdout == "quiet", "\(pasted.summary)")
        }
    }

    @Test("a reader that stops after one byte ends the paste the way it ends ferry-cli's (held and promised data)")
    func readerStopsEarly() async throws {
        try await CLIBroker.with { broker in
            let data = noise(4 << 20, seed: 9)
            let file = try broker.file("big.bin", data)
            // bash for PIPESTATUS: the paste's own status, whatever head does.
            let script = #""$0" paste | head -c1 >/dev/null; echo "${PIPESTATUS[0]}""#
            func both() async throws -> (front: ChildProcessResult, cli: ChildProcessResult) {
                let front = try await ChildProcess.run("/bin/bash", ["-c", script, try FerryCLI.binary().path],
                                                       environment: broker.environment, timeout: .seconds(60))
                let cli = try await ChildProcess.run("/bin/bash", ["-c", script, try fullCLIPath()],
                                                     environment: broker.environment, timeout: .seconds(60))
                return (front, cli)
            }
            #expect(try await broker.ferry("copy", "--type", "public.data", file.path).succeeded)
            let held = try await both()
            #expect(held.front.stdout == held.cli.stdout && held.front.stderr == held.cli.stderr,
                    "front: \(held.front.summary) cli: \(held.cli.summary)")
            #expect(held.front.stdout != "0\n", "a paste cut short must not succeed: \(held.front.summary)")

            let source = try broker.start(["copy", "--lazy", "--type", "public.data", file.path])
            defer { source.kill() }
            #expect(try await eventually {
                try await broker.ferry("types").stdout.contains("promised")
            }, "the lazy copy never showed up")
            let promised = try await both()
            #expect(promised.front.stdout == promised.cli.stdout && promised.front.stderr == promised.cli.stderr,
                    "front: \(promised.front.summary) cli: \(promised.cli.summary)")
            #expect(promised.front.stdout != "0\n", "\(promised.front.summary)")
        }
    }

    @Test("`--`, repeated options and values that look like options: the same output and status as ferry-cli")
    func oddArguments() async throws {
        try await CLIBroker.with { broker in
            #expect(try await broker.ferry("copy", "--text", "odd").succeeded)
            let forms = [["paste", "--"], ["paste", "--", "-t"], ["paste", "-t", "--"], ["paste", "-t", "-i", "0"],
                         ["paste", "-p", "-"], ["paste", "--timeout", "5", "--timeout", "6"], ["paste", "-t", "-"],
                         ["paste", "-i", "+0"], ["paste", "-i", "00"], ["paste", "--bus", "-"]]
            for arguments in forms {
                let front = try await broker.ferry(arguments)
                let cli = try await ChildProcess.run(try fullCLIPath(), arguments, environment: broker.environment)
                #expect(front.status == cli.status && front.stdout == cli.stdout && front.stderr == cli.stderr,
                        "\(arguments): front \(front.summary) cli \(cli.summary)")
            }
        }
    }

    @Test("PrintableText escapes exactly the controls, separators and bidi controls Unicode's tables name")
    func printableRanges() {
        let bidi: [UInt32] = [0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069]
        var mismatches: [UInt32] = []
        for value in UInt32(0)..<0x30000 {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let category = scalar.properties.generalCategory
            let expected = category == .control || category == .lineSeparator || category == .paragraphSeparator || bidi.contains(value)
            let escaped = PrintableText.line(String(Character(scalar))) != String(Character(scalar))
            if expected != escaped { mismatches.append(value) }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(10).map { String($0, radix: 16) })")
        #expect(PrintableText.line("a\u{202E}b\nc", limit: 4) == "a\\u…")
    }

    @Test("ferry-cli is looked for beside the front, never in the current folder")
    func fullCLILocation() {
        #expect(FullCLI.location(besides: "/usr/bin/ferry") == "/usr/bin/ferry-cli")
        #expect(FullCLI.location(besides: "bin/ferry") == "bin/ferry-cli")
        #expect(FullCLI.location(besides: "/ferry") == "/ferry-cli")
        #expect(FullCLI.location(besides: "ferry") == nil)
        #expect(FullCLI.location(besides: "") == nil)
    }
}
