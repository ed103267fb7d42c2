import FerryTestSupport
import Foundation
import Testing

/// `ferry copy --primary` and `ferry paste --primary`: the pasteboard `primary`, which
/// ferry-bridge joins to the desktop's PRIMARY selection.
@Suite("ferry copy / paste --primary", .serialized)
struct PrimaryCLITests {
    @Test("copy --primary fills the pasteboard primary, not the clipboard; paste --primary gets it, from the front too")
    func copyAndPaste() async throws {
        try await CLIBroker.with { broker in
            #expect(try await broker.ferry("copy", "--text", "clipboard").succeeded)
            let copy = try await broker.ferry("copy", "--primary", "--text", "selected words")
            #expect(copy.succeeded, "\(copy.summary)")
            #expect(try await broker.ferry("pasteboards").stdout.contains("primary"))
            #expect(try await broker.ferry("paste").stdout == "clipboard", "the clipboard is untouched")
            let pasted = try await broker.ferry("paste", "--primary")
            #expect(pasted.succeeded, "\(pasted.summary)")
            #expect(pasted.stdout == "selected words")
            #expect(try await broker.ferry("paste", "-p", "primary").stdout == "selected words")
            // The front pastes --primary by itself: a copy of it without ferry-cli beside it.
            let alone = broker.folder.appendingPathComponent("alone/ferry")
            try FileManager.default.createDirectory(at: alone.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: try FerryCLI.binary(), to: alone)
            let front = try await ChildProcess.run(alone.path, ["paste", "--primary", "-t", "public.plain-text"],
                                                   environment: broker.environment)
            #expect(front.succeeded, "\(front.summary)")
            #expect(front.stdout == "selected words")
            // The full CLI's fast path too.
            let cli = try FerryCLI.binary().deletingLastPathComponent().appendingPathComponent("ferry-cli").path
            let full = try await ChildProcess.run(cli, ["paste", "--primary"], environment: broker.environment)
            #expect(full.stdout == "selected words", "\(full.summary)")
        }
    }

    @Test("paste --primary before any selection: nothing to paste (status 2), and no pasteboard is created")
    func nothingSelected() async throws {
        try await CLIBroker.with { broker in
            for arguments in [["paste", "--primary"], ["paste", "--primary", "-t", "public.plain-text"]] {
                let pasted = try await broker.ferry(arguments)
                #expect(pasted.status == 2, "\(arguments): \(pasted.summary)")
                #expect(pasted.stderr == "ferry: nothing to paste: the primary selection is empty\n", "\(arguments)")
            }
            #expect(try await !broker.ferry("pasteboards").stdout.contains("primary"))
        }
    }

    @Test("--primary with --pasteboard is a usage error (status 64), for copy and paste")
    func withPasteboard() async throws {
        try await CLIBroker.with { broker in
            for arguments in [["copy", "--primary", "-p", "notes", "--text", "x"], ["paste", "--primary", "-p", "notes"],
                              ["paste", "-p", "notes", "--primary"]] {
                let result = try await broker.ferry(arguments)
                #expect(result.status == 64, "\(arguments): \(result.summary)")
                #expect(result.stderr.contains("--primary and --pasteboard"), "\(arguments): \(result.stderr)")
            }
            #expect(try await broker.ferry("pasteboards").stdout == "general\n", "nothing was created")
        }
    }
}

/// The item origin ferry-bridge gives its imports, as `ferry types --json` and `ferry history
/// --json` show it.
@Suite("ferry types / history --json: an item's origin", .serialized)
struct OriginCLITests {
    @Test("an item written with origin desktop:CLIPBOARD (by gdbus, as another client) shows it; a ferry copy has null")
    func origin() async throws {
        try await CLIBroker.with { broker in
            let items = "[{'representations': <[<{'type': <'public.utf8-plain-text'>, 'data': <b'from the desktop'>}>]>, "
                + "'origin': <'desktop:CLIPBOARD'>}]"
            let write = try await ChildProcess.run("/usr/bin/gdbus", [
                "call", "--address", broker.bus.address, "--dest", "org.ferry.Broker", "--object-path", "/org/ferry/Pasteboard/general",
                "--method", "org.ferry.Pasteboard1.SetItems", items, "{}",
            ])
            #expect(write.succeeded, "\(write.summary)")
            let types = try jsonObject(try await broker.ferry("types", "--json"))
            let listed = try #require(types["items"] as? [[String: Any]])
            #expect(listed.first?["origin"] as? String == "desktop:CLIPBOARD")
            #expect(try await broker.ferry("copy", "--text", "typed in ferry").succeeded)
            let now = try #require(try jsonObject(try await broker.ferry("types", "--json"))["items"] as? [[String: Any]])
            #expect(now.first?["origin"] is NSNull)
            let history = try #require(try jsonObject(try await broker.ferry("history", "--json"))["entries"] as? [[String: Any]])
            let replaced = try #require(history.first?["items"] as? [[String: Any]])
            #expect(replaced.first?["origin"] as? String == "desktop:CLIPBOARD")
        }
    }
}
