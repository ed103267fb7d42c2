@testable import ferry
import Ferry
import FerryModel
import FerryTestSupport
import Foundation
import Testing

/// Readable output everywhere (#18 item 4): dynamic types by the MIME type they came from, in
/// errors too, and `--json` with the same JSON types for the same fields in every report.
@Suite("ferry: readable types and one JSON shape", .serialized)
struct ReadableOutputTests {
    /// A MIME type no declaration knows: its type is dynamic (`dyn.…`).
    static let odd = "application/x-ferry-readable"

    @Test("a broker error naming a dynamic type reaches the user with the MIME type, not dyn.")
    func brokerErrorsNameMIMETypes() throws {
        let type = try #require(ContentType(tag: Self.odd, tagClass: .mimeType, conformingTo: nil))
        #expect(type.isDynamic)
        // The broker's messages name types by identifier (for programs on the bus).
        let gone = FerryError(.unavailable, "the app that promised \(type.identifier) is gone without handing it over")
        #expect(describe(gone).1 == "the app that promised \(Self.odd) is gone without handing it over")
        let missing = FerryModelError(.notFound, "item 0 has nothing conforming to public.image; it has \(type.identifier), public.png")
        #expect(describe(missing).1 == "item 0 has nothing conforming to public.image; it has \(Self.odd), public.png")
        // Words that only look like a dynamic type are left as they are.
        #expect(withReadableTypes("a file named dyn.notatype and xdyn.\(type.identifier.dropFirst(4))")
                == "a file named dyn.notatype and xdyn.\(type.identifier.dropFirst(4))")
    }

    @Test("types, log and conforms: identifier and MIME in JSON, the MIME type in text for a dynamic type")
    func typesAndLog() async throws {
        try await CLIBroker.with { broker in
            #expect(try await broker.ferry("copy", "-t", Self.odd, "--text", "odd").succeeded)
            let types = try jsonObject(try await broker.ferry("types", "--json"))
            let item = try #require((types["items"] as? [[String: Any]])?.first)
            let representation = try #require((item["representations"] as? [[String: Any]])?.first)
            #expect((representation["type"] as? String)?.hasPrefix("dyn.") == true, "\(representation)")
            #expect(representation["mime"] as? String == Self.odd)
            #expect(representation["size"] as? Int == 3, "sizes are integers in bytes")

            #expect(try await broker.ferry("paste", "-t", Self.odd).stdout == "odd")
            let shown = try await eventually { try await broker.ferry("log").stdout.contains("  general  0  \(Self.odd)  pid ") }
            let text = try await broker.ferry("log").stdout
            #expect(shown, "the log shows the MIME type of a dynamic type: \(text)")
            let log = try jsonObject(try await broker.ferry("log", "--json"))
            let entry = try #require((log["entries"] as? [[String: Any]])?.first)
            #expect((entry["type"] as? String)?.hasPrefix("dyn.") == true && entry["mime"] as? String == Self.odd, "\(entry)")
            #expect((entry["timestamp"] as? String)?.hasSuffix("Z") == true && entry["pid"] is Int, "\(entry)")
        }
    }

    @Test("log names the reader's process: the front's own name for a plain paste, ferry-cli for the rest")
    func logProcessNames() async throws {
        try await CLIBroker.with { broker in
            #expect(try await broker.ferry("copy", "--text", "named").succeeded)
            // The kernel names a process after the file it executed: a link of another name.
            let link = broker.folder.appendingPathComponent("clip-reader")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: try FerryCLI.binary())
            for arguments in [["paste"], ["paste", "-t", "text/plain"]] {
                let pasted = try await ChildProcess.run(link.path, arguments, environment: broker.environment,
                                                        standardInput: nil, timeout: .seconds(30))
                #expect(pasted.status == 0 && pasted.stdout == "named", "\(arguments): \(pasted.stdout) \(pasted.stderr)")
            }
            let log = try jsonObject(try await broker.ferry("log", "--json"))
            let entries = try #require(log["entries"] as? [[String: Any]])
            #expect(entries.map { $0["process"] as? String } == ["ferry-cli", "clip-reader"], "newest first: \(entries)")
            let text = try await broker.ferry("log")
            let lines = text.stdout.split(separator: "\n")
            // The last column is the writer: the front copies a text itself, as `ferry`.
            #expect(lines.count == 2 && lines[0].hasSuffix("  ferry-cli  ferry") && lines[1].hasSuffix("  clip-reader  ferry"),
                    "\(text.stdout)")
            #expect(lines.allSatisfy { $0.contains("  pid ") }, "\(text.stdout)")
        }
    }

    @Test("log names who copied what was read, and tells a read of history from a paste")
    func logWriterAndHistoryReads() async throws {
        try await CLIBroker.with { broker in
            // ferry-cli itself under another name: the kernel names the writer after the link.
            let cli = try FerryCLI.binary().deletingLastPathComponent().appendingPathComponent("ferry-cli")
            let link = broker.folder.appendingPathComponent("clip-writer")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: cli)
            for text in ["older", "newer"] {
                let copied = try await ChildProcess.run(link.path, ["copy", "--text", text], environment: broker.environment,
                                                        standardInput: nil, timeout: .seconds(30))
                #expect(copied.status == 0, "\(copied.stdout) \(copied.stderr)")
            }
            #expect(try await broker.ferry("paste").stdout == "newer")
            let shown = try await broker.ferry("history", "show", "0")
            #expect(shown.status == 0 && shown.stdout == "older", "\(shown.summary)")

            let log = try jsonObject(try await broker.ferry("log", "--json"))
            let entries = try #require(log["entries"] as? [[String: Any]])
            #expect(entries.count == 2, "\(entries)")
            #expect(entries.map { $0["writerProcess"] as? String } == ["clip-writer", "clip-writer"], "\(entries)")
            #expect(entries.first?["historyEntry"] as? Int == 0, "the newest is the read of history entry 0: \(entries)")
            #expect(entries.last?["historyEntry"] is NSNull, "a paste is no read of history: \(entries)")
            #expect(entries.allSatisfy { $0.keys.contains("writerProcess") && $0.keys.contains("historyEntry") })

            let text = try await broker.ferry("log").stdout
            let lines = text.split(separator: "\n")
            #expect(lines.count == 2, "\(text)")
            #expect(lines.first?.contains("  history 0  0  ") == true && lines.first?.hasSuffix("  clip-writer") == true, "\(text)")
            #expect(lines.last?.contains("  general  0  ") == true && lines.last?.hasSuffix("  clip-writer") == true, "\(text)")
        }
    }

    @Test("clear --json and history restore --json give the change count as copy --json does")
    func clearAndRestore() async throws {
        try await CLIBroker.with { broker in
            let copied = try jsonObject(try await broker.ferry("copy", "--json", "--text", "first"))
            let copyCount = try #require(copied["changeCount"] as? Int)
            let cleared = try await broker.ferry("clear", "--json")
            #expect(cleared.status == 0, "\(cleared.summary)")
            let clearReport = try jsonObject(cleared)
            #expect(Set(clearReport.keys) == ["pasteboard", "changeCount"])
            #expect(clearReport["pasteboard"] as? String == "general")
            let clearCount = try #require(clearReport["changeCount"] as? Int)
            #expect(clearCount > copyCount)
            #expect(try jsonObject(try await broker.ferry("types", "--json"))["changeCount"] as? Int == clearCount)
            #expect(try await broker.ferry("clear").stdout.isEmpty, "without --json nothing is printed")

            let restored = try await broker.ferry("history", "restore", "--json", "0")
            #expect(restored.status == 0, "\(restored.summary)")
            let restoreReport = try jsonObject(restored)
            #expect(Set(restoreReport.keys) == ["pasteboard", "changeCount"])
            let restoreCount = try #require(restoreReport["changeCount"] as? Int)
            #expect(try jsonObject(try await broker.ferry("types", "--json"))["changeCount"] as? Int == restoreCount)
            let missing = try await broker.ferry("history", "restore", "--json", "99")
            #expect(missing.status == 2 && missing.stdout.isEmpty, "\(missing.summary)")
        }
    }
}
