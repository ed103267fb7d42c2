import FerryTestSupport
import Foundation
import Testing

/// The habits of clipboard managers through the CLI (issue #18): `ferry history show`
/// (`cliphist decode`), `ferry history delete`, one entry for a repeated copy, ferryd's
/// `--history-bytes`, and the disk budget's error.
@Suite("ferry history: show, delete, repeated copies and byte limits", .serialized)
struct HistoryHabitsTests {
    /// The blob files in the broker's state folder.
    static func blobs(_ broker: CLIBroker) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: broker.stateDir.appendingPathComponent("blobs").path)) ?? []
    }

    /// The rows `ferry history` prints.
    static func rows(_ broker: CLIBroker) async throws -> [String] {
        let listed = try await broker.ferry("history")
        #expect(listed.succeeded, "\(listed.summary)")
        return listed.stdout.split(separator: "\n").map(String.init)
    }

    /// The paste log's records, newest first.
    static func pasteLog(_ broker: CLIBroker) async throws -> [[String: Any]] {
        let json = try jsonObject(try await broker.ferry("log", "--json"))
        return try #require(json["entries"] as? [[String: Any]])
    }

    /// Whether `data` holds PNG's signature.
    static func hasPNGSignature(_ data: Data) -> Bool { data.range(of: Data([0x89, 0x50, 0x4E, 0x47])) != nil }

    /// Runs `ferry ARGUMENTS` with a pseudo-terminal as its standard output (util-linux `script`).
    static func onTerminal(_ broker: CLIBroker, _ arguments: [String]) async throws -> ChildProcessResult {
        let command = ([try FerryCLI.binary().path] + arguments).map { "'\($0)'" }.joined(separator: " ")
        return try await ChildProcess.run("/usr/bin/script", ["-q", "-e", "-c", command, "/dev/null"],
                                          environment: broker.environment)
    }

    @Test("history show writes entry N (or the one a line of 'ferry history' names on stdin) without restoring it")
    func show() async throws {
        try await CLIBroker.with { broker in
            let png = try payload("sample.png")
            #expect(try await broker.ferry("copy", "--text", "the first line\nand more").succeeded)
            #expect(try await broker.ferry("copy", try broker.file("Photo.png", png).path).succeeded)
            #expect(try await broker.ferry("copy", "--text", "current").succeeded)
            let rows = try await Self.rows(broker)
            try #require(rows.count == 2, "\(rows)")
            let logBefore = try await Self.pasteLog(broker).count

            let shown = try await broker.ferry("history", "show", "1")
            #expect(shown.succeeded && shown.stdout == "the first line\nand more", "\(shown.summary)")
            // What a picker such as fzf prints: the chosen line of 'ferry history'.
            let picked = try #require(rows.first { $0.hasSuffix("the first line") })
            let piped = try await broker.ferry("history", "show", stdin: Data((picked + "\n").utf8))
            #expect(piped.succeeded && piped.stdout == "the first line\nand more", "\(piped.summary)")
            let output = broker.folder.appendingPathComponent("out.png")
            #expect(try await broker.ferry("history", "show", "0", "-o", output.path).succeeded)
            #expect(try Data(contentsOf: output) == png)
            let asImage = try await broker.ferry("history", "show", "0", "-t", "image")
            #expect(asImage.succeeded && asImage.standardOutput == png, "into a pipe the bytes go as they are")

            #expect(try await broker.ferry("paste").stdout == "current", "showing restored nothing")
            #expect(try await Self.rows(broker) == rows, "the history is as it was")
            let log = try await Self.pasteLog(broker)
            #expect(log.count == logBefore + 5, "each show is a paste, and ferry paste one more: \(log)")
            #expect(log.allSatisfy { $0["pasteboard"] as? String == "general" }, "\(log)")

            let refused = try await Self.onTerminal(broker, ["history", "show", "0"])
            #expect(refused.status == 64 && refused.stdout.contains("-o FILE"), "\(refused.summary) \(refused.stdout)")
            #expect(!Self.hasPNGSignature(refused.standardOutput), "no image bytes reached the terminal")
            let forced = try await Self.onTerminal(broker, ["history", "show", "0", "--force"])
            #expect(forced.status == 0 && Self.hasPNGSignature(forced.standardOutput), "\(forced.summary)")

            let noText = try await broker.ferry("history", "show", "0", "-t", "text")
            #expect(noText.status == 2 && noText.stderr.contains("nothing conforming"), "\(noText.summary)")
            let missing = try await broker.ferry("history", "show", "5")
            #expect(missing.status == 2 && missing.stderr.contains("history entry 5"), "\(missing.summary)")
            let empty = try await broker.ferry("history", "show")
            #expect(empty.status == 64 && empty.stderr.contains("standard input"), "\(empty.summary)")
            let garbage = try await broker.ferry("history", "show", stdin: Data("x1  what\n".utf8))
            #expect(garbage.status == 64 && garbage.stderr.contains("\"x1\""), "\(garbage.summary)")
            #expect(garbage.stdout.isEmpty)
        }
    }

    @Test("history delete forgets the entries named, their files too; an index out of range deletes nothing")
    func delete() async throws {
        try await CLIBroker.with { broker in
            for n in 1...3 {
                #expect(try await broker.ferry("copy", try broker.file("f\(n).bin", noise(100_000, seed: UInt32(n))).path).succeeded)
            }
            #expect(try await broker.ferry("copy", "--text", "current").succeeded)
            #expect(Self.blobs(broker).count == 3)

            let outOfRange = try await broker.ferry("history", "delete", "0", "3")
            #expect(outOfRange.status == 2 && outOfRange.stderr.contains("history entry 3"), "\(outOfRange.summary)")
            #expect(try await Self.rows(broker).count == 3, "nothing was deleted")
            let none = try await broker.ferry("history", "delete")
            #expect(none.status == 64, "\(none.summary)")

            let deleted = try await broker.ferry("history", "delete", "0", "2")
            #expect(deleted.succeeded && deleted.stdout.isEmpty, "\(deleted.summary)")
            #expect(try await Self.rows(broker).count == 1)
            #expect(try await broker.ferry("history", "show", "0").standardOutput == noise(100_000, seed: 2))
            #expect(Self.blobs(broker).count == 1, "the deleted entries' files left the disk")
            #expect(try await broker.ferry("paste").stdout == "current")
        }
    }

    @Test("copying the same thing twice makes one history entry")
    func repeatedCopies() async throws {
        try await CLIBroker.with { broker in
            let file = try broker.file("big.bin", noise(200_000))
            for arguments in [["--text", "same"], ["--text", "same"], [file.path], [file.path], ["--text", "same"],
                              ["--text", "other"], ["--text", "same"]] {
                #expect(try await broker.ferry(["copy"] + arguments).succeeded)
            }
            let rows = try await Self.rows(broker)
            #expect(rows.count == 4, "same, the file, same, other: \(rows)")
            #expect(Self.blobs(broker).count == 1, "the file is stored once")
        }
    }

    @Test("ferryd --history-bytes keeps the newest entries that fit; an entry larger than it is not kept")
    func historyBytes() async throws {
        try await CLIBroker.with(ferrydArguments: ["--history-bytes", "250K"]) { broker in
            for n in 1...3 {
                #expect(try await broker.ferry("copy", try broker.file("f\(n).bin", noise(100_000, seed: UInt32(n))).path).succeeded)
            }
            #expect(try await broker.ferry("copy", try broker.file("huge.bin", noise(300_000, seed: 9)).path).succeeded)
            #expect(try await broker.ferry("copy", "--text", "now").succeeded)
            let rows = try await Self.rows(broker)
            #expect(rows.count == 2, "\(rows)")
            #expect(try await broker.ferry("history", "show", "0").standardOutput == noise(100_000, seed: 3))
            #expect(try await broker.ferry("history", "show", "1").standardOutput == noise(100_000, seed: 2))
            #expect(Self.blobs(broker).count == 2, "the dropped entries' files left the disk")
        }
    }

    @Test("a copy past ferryd --disk-budget fails with one clear line and keeps the pasteboard as it was")
    func diskBudget() async throws {
        try await CLIBroker.with(ferrydArguments: ["--disk-budget", "1M"]) { broker in
            #expect(try await broker.ferry("copy", "--text", "kept").succeeded)
            let big = try broker.file("big.bin", noise(2 << 20))
            let refused = try await broker.ferry("copy", big.path)
            #expect(refused.status == 1, "\(refused.summary)")
            #expect(refused.stderr.contains("--disk-budget"), "\(refused.summary)")
            #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
            #expect(try await broker.ferry("paste").stdout == "kept")
            #expect(Self.blobs(broker).isEmpty)
        }
    }
}
