import FerryTestSupport
import Foundation
import Testing

@Suite("ferry progress bar on a terminal")
struct FerryProgressTests {
    /// Runs ferry with standard error on a pseudo-terminal (python3's pty module, standard input
    /// and output inherited) and returns what it drew there.
    private static let script = """
        import os, pty, subprocess, sys
        master, slave = pty.openpty()
        child = subprocess.Popen(sys.argv[1:], stderr=slave)
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
        status = child.wait()
        sys.stderr.write(drawn.hex())
        sys.exit(status)
        """

    private func onTerminal(_ broker: CLIBroker, _ arguments: [String], stdin: Data? = nil) async throws -> (Int32, String) {
        let result = try await ChildProcess.run("/usr/bin/python3", ["-c", Self.script, try FerryCLI.binary().path] + arguments,
                                                environment: broker.environment, standardInput: stdin, timeout: .seconds(60))
        var bytes: [UInt8] = []
        var hex = result.stderr.utf8.makeIterator()
        while let a = hex.next(), let b = hex.next(), let byte = UInt8(String(decoding: [a, b], as: UTF8.self), radix: 16) {
            bytes.append(byte)
        }
        return (result.status, String(decoding: bytes, as: UTF8.self))
    }

    @Test("over 8 MiB a bar is drawn on a terminal and erased at the end; small transfers and pipes get none")
    func progress() async throws {
        try await CLIBroker.with { broker in
            let data = noise(12 << 20, seed: 5)
            let (copyStatus, copyDrawn) = try await onTerminal(broker, ["copy", "--type", "public.data"], stdin: data)
            #expect(copyStatus == 0)
            #expect(copyDrawn.contains("\rreading "), "\(copyDrawn.debugDescription)")
            #expect(copyDrawn.hasSuffix("\r\u{1B}[2K"), "the bar was not erased: \(copyDrawn.debugDescription)")

            let out = broker.folder.appendingPathComponent("progress.bin")
            let (pasteStatus, pasteDrawn) = try await onTerminal(broker, ["paste", "-o", out.path])
            #expect(pasteStatus == 0)
            #expect(pasteDrawn.contains("\rpasting ["), "\(pasteDrawn.debugDescription)")
            #expect(pasteDrawn.contains(" / 12.0 MiB"))
            #expect(pasteDrawn.hasSuffix("\r\u{1B}[2K"))
            #expect(try firstDifference(Data(contentsOf: out), data) == nil)

            let file = try broker.file("large.bin", noise(9 << 20, seed: 6))
            let (fileStatus, fileDrawn) = try await onTerminal(broker, ["copy", file.path])
            #expect(fileStatus == 0)
            #expect(fileDrawn.contains("\rcopying ["), "\(fileDrawn.debugDescription)")
            #expect(fileDrawn.hasSuffix("\r\u{1B}[2K"))
            #expect(try await broker.ferry("paste").standardOutput == (try Data(contentsOf: file)))
            #expect(try await broker.ferry("copy", "--type", "public.data", stdin: data).succeeded)

            let piped = try await broker.ferry("paste")
            #expect(firstDifference(piped.standardOutput, data) == nil)
            #expect(piped.standardError.isEmpty, "a bar was drawn on a pipe")

            #expect(try await broker.ferry("copy", "--text", "small").succeeded)
            let (_, smallDrawn) = try await onTerminal(broker, ["paste", "-o", out.path])
            #expect(smallDrawn.isEmpty)
        }
    }

    @Test("a file rewritten while it is copied with a bar on the terminal is refused (status 4); the bar shows; nothing is stored")
    func rewrittenWhileShowingProgress() async throws {
        try await CLIBroker.with { broker in
            #expect(try await broker.ferry("copy", "--text", "before").succeeded)
            let file = try broker.file("changing.bin", noise(48 << 20, seed: 3))
            let rewriter = Rewriter(path: file.path)
            rewriter.start()
            let (status, drawn) = try await onTerminal(broker, ["copy", "--type", "public.data", file.path])
            rewriter.stop()
            #expect(rewriter.rounds > 0, "the file was not rewritten during the copy")
            #expect(status == 4, "\(drawn.debugDescription)")
            #expect(drawn.contains("\rcopying ["), "\(drawn.debugDescription)")
            #expect(drawn.contains("ferry: ") && drawn.contains("changed while it was read"), "\(drawn.debugDescription)")
            #expect(try await broker.ferry("paste").stdout == "before", "nothing was stored")
        }
    }
}
