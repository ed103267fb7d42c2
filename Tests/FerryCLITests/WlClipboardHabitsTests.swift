import FerryTestSupport
import Foundation
import Testing

/// The habits of wl-clipboard (#18): `paste -l`, `watch --exec`, `copy --paste-once`, `-t text`
/// and `-t image`, and no image bytes dumped on a terminal.
@Suite("ferry: the habits of wl-copy and wl-paste", .serialized)
struct WlClipboardHabitsTests {
    @Test("paste --list-types prints one MIME type per line, highest fidelity first, and pastes nothing")
    func listTypes() async throws {
        try await CLIBroker.with { broker in
            let empty = try await broker.ferry("paste", "--list-types")
            #expect(empty.status == 0 && empty.stdout.isEmpty, "\(empty.summary)")
            let png = try broker.file("p.png", try payload("sample.png"))
            let html = try broker.file("p.html", try payload("sample.html"))
            #expect(try await broker.ferry("copy", "--rep", "public.png=\(png.path)", "--rep", "public.html=\(html.path)",
                                          "--rep", "public.url=\(html.path)").succeeded)
            let listed = try await broker.ferry("paste", "-l")
            #expect(listed.status == 0, "\(listed.summary)")
            #expect(listed.stdout == "image/png\ntext/html\npublic.url\n", "a type without a MIME type shows its identifier")
            let log = try await broker.ferry("log")
            #expect(!log.stdout.contains("public.png"), "listing types is not a paste: \(log.stdout)")
            let misuse = try await broker.ferry("paste", "-l", "-t", "public.png")
            #expect(misuse.status == 64, "\(misuse.summary)")
            let outOfRange = try await broker.ferry("paste", "-l", "-i", "3")
            #expect(outOfRange.status == 2 && outOfRange.stderr == "ferry: no item 3: the pasteboard has 1 item\n")
        }
    }

    @Test("-t text and -t image read, copy and test conformance as wl-paste's generic types do")
    func genericTypes() async throws {
        try await CLIBroker.with { broker in
            #expect(try await broker.ferry("copy", "--text", "plain words").succeeded)
            let text = try await broker.ferry("paste", "-t", "text")
            #expect(text.status == 0 && text.stdout == "plain words", "\(text.summary)")
            let noImage = try await broker.ferry("paste", "-t", "image")
            #expect(noImage.status == 2 && noImage.stderr.contains("nothing conforming to public.image"), "\(noImage.summary)")

            let png = try broker.file("cat.bin", try payload("sample.png"))
            #expect(try await broker.ferry("copy", "-t", "image", png.path).succeeded)
            let types = try await broker.ferry("types")
            #expect(types.stdout.hasPrefix("0  public.png"), "-t image keeps the sniffed image type: \(types.stdout)")
            let image = try await broker.ferry("paste", "-t", "image")
            let pngBytes = try payload("sample.png")
            #expect(image.status == 0 && image.standardOutput == pngBytes)

            let words = try broker.file("words.png", Data("not a picture at all\n".utf8))
            let refused = try await broker.ferry("copy", "-t", "image", words.path)
            #expect(refused.status == 64, "\(refused.summary)")
            #expect(refused.stderr == "ferry: '\(words.path)' is not an image (its content is public.utf8-plain-text)\n")
            #expect(try await broker.ferry("paste", "-t", "image").standardOutput == pngBytes, "a refused copy changes nothing")

            #expect(try await broker.ferry("copy", "-t", "text", "--text", "typed").succeeded)
            #expect(try await broker.ferry("types").stdout.hasPrefix("0  public.utf8-plain-text"))
        }
        #expect(try FerryCLI.run("type", "conforms", "image/png", "image").status == 0)
        #expect(try FerryCLI.run("type", "conforms", "text/plain", "text").status == 0)
        #expect(try FerryCLI.run("type", "conforms", "image/png", "text").status == 1)
        let named = try FerryCLI.run("type", "conforms", "text/html", "public.text")
        #expect(named.stdout == "public.html conforms to public.text\n")
        let invalid = try FerryCLI.run("type", "conforms", "image/", "image")
        #expect(invalid.status == 2 && invalid.stderr == "ferry: invalid MIME type 'image/'\n")
    }

    @Test("watch --exec runs the command per change with the content on stdin and FERRY_CHANGE, FERRY_TYPE set")
    func watchExec() async throws {
        try await CLIBroker.with { broker in
            #expect(try await broker.ferry("copy", "--text", "first").succeeded)
            let script = #"printf '%s|%s|%s|' "$FERRY_CHANGE" "$FERRY_TYPE" "$FERRY_MIME_TYPE"; base64 -w0; echo"#
            let watcher = try broker.start(["watch", "--exec", "sh", "-c", script])
            defer { watcher.kill() }
            var lines = LineReader(fd: watcher.standardOutput)
            let initial = lines.next(timeout: .seconds(10))
            #expect(initial?.hasSuffix("|public.utf8-plain-text|text/plain;charset=utf-8|\(Self.base64("first"))") == true,
                    "\(initial ?? "nothing")")

            let copy = try await broker.ferry("copy", "-v", "--text", "second")
            let count = try #require(Self.changeCount(copy.stderr))
            #expect(lines.next(timeout: .seconds(10)) == "\(count)|public.utf8-plain-text|text/plain;charset=utf-8|\(Self.base64("second"))")

            let png = try broker.file("image.png", try payload("sample.png"))
            #expect(try await broker.ferry("copy", png.path).succeeded)
            let image = lines.next(timeout: .seconds(10)) ?? ""
            #expect(image.contains("|public.png|image/png|"), "\(image)")
            let pngBytes = try payload("sample.png")
            #expect(image.hasSuffix("|image/png|" + pngBytes.base64EncodedString()), "the image's bytes reached the command")

            let cleared = try await broker.ferry("clear")
            #expect(cleared.succeeded)
            let empty = lines.next(timeout: .seconds(10)) ?? ""
            #expect(empty.hasSuffix("|||"), "an empty pasteboard runs the command with empty input and type: \(empty)")
            #expect(watcher.isRunning)
        }
    }

    @Test("watch --exec never pairs a change count with another change's content, however fast copies come")
    func watchExecRace() async throws {
        try await CLIBroker.with { broker in
            // The command is slow: copies pile up while it runs, and most are replaced before
            // their turn. Each run must get the content of the change it names, or be skipped.
            let script = #"sleep 0.2; printf '%s=' "$FERRY_CHANGE"; cat; echo"#
            let watcher = try broker.start(["watch", "--exec", "sh", "-c", script])
            defer { watcher.kill() }
            var lines = LineReader(fd: watcher.standardOutput)
            _ = lines.next(timeout: .seconds(10))  // the empty pasteboard at start
            var contentAt: [String: String] = [:]
            for n in 0..<12 {
                let copy = try await broker.ferry("copy", "-v", "--text", "copy-\(n)")
                contentAt[try #require(Self.changeCount(copy.stderr))] = "copy-\(n)"
            }
            var seen: [String] = []
            while let line = lines.next(timeout: .seconds(3)) {
                let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
                try #require(parts.count == 2, "\(line)")
                #expect(contentAt[parts[0]] == parts[1], "change \(parts[0]) ran with \(parts[1])")
                seen.append(parts[1])
                if parts[1] == "copy-11" { break }
            }
            #expect(seen.last == "copy-11", "the newest change always runs: \(seen)")
            #expect(seen.count < 12, "changes replaced before their turn are skipped: \(seen)")
        }
    }

    @Test("watch --exec with a command that cannot start fails with status 1 and one line")
    func watchExecMissingCommand() async throws {
        try await CLIBroker.with { broker in
            let result = try await broker.ferry("watch", "--exec", "ferry-no-such-command-\(getpid())")
            #expect(result.status == 1, "\(result.summary)")
            #expect(result.stderr == "ferry: cannot run 'ferry-no-such-command-\(getpid())': No such file or directory\n")
            let misuse = try await broker.ferry("watch", "--json", "--exec", "cat")
            #expect(misuse.status == 64)
        }
    }

    @Test("copy --paste-once serves one paste, then the item is gone and the pasteboard is back to before")
    func pasteOnce() async throws {
        try await CLIBroker.with { broker in
            #expect(try await broker.ferry("copy", "--text", "before").succeeded)
            let source = try broker.start(["copy", "--paste-once", "--text", "only once"])
            defer { source.kill() }
            #expect(try await eventually { try await broker.ferry("types").stdout.contains("promised") })
            // Looking is not pasting: types and the list of types leave it there.
            #expect(try await broker.ferry("paste", "-l").stdout == "text/plain;charset=utf-8\n")
            #expect(try await broker.ferry("types", "--json").succeeded)
            #expect(source.isRunning)

            let first = try await broker.ferry("paste")
            #expect(first.status == 0 && first.stdout == "only once", "\(first.summary)")
            let status = await source.waitForExit(timeout: .seconds(10))
            #expect(status == 0)
            #expect(try await eventually { try await broker.ferry("paste").stdout == "before" },
                    "the item is gone after its paste")
            let history = try await broker.ferry("history")
            #expect(!history.stdout.contains("promised"), "nothing of it is left in the history: \(history.stdout)")
        }
    }

    @Test("copy --paste-once replaced before any paste exits 0 and leaves nothing behind; it cannot be lazy")
    func pasteOnceReplaced() async throws {
        try await CLIBroker.with { broker in
            let source = try broker.start(["copy", "--paste-once", "--text", "never pasted"])
            defer { source.kill() }
            #expect(try await eventually { try await broker.ferry("types").stdout.contains("promised") })
            #expect(try await broker.ferry("copy", "--text", "newer").succeeded)
            #expect(await source.waitForExit(timeout: .seconds(10)) == 0)
            let history = try await broker.ferry("history", "--json")
            #expect(!history.stdout.contains("promised\":true"), "\(history.stdout)")
            #expect(try await broker.ferry("paste").stdout == "newer")
            #expect(try await broker.ferry("copy", "--paste-once", "--lazy", "--text", "x").status == 64)
        }
    }

    @Test("an image pasted to a terminal asks for -o or --force; --force, a pipe and text are written")
    func imageToTerminal() async throws {
        try await CLIBroker.with { broker in
            let png = try broker.file("t.png", try payload("sample.png"))
            #expect(try await broker.ferry("copy", png.path).succeeded)
            let ferry = try FerryCLI.binary().path
            let refused = try await Self.onTerminal(broker, "'\(ferry)' paste")
            #expect(refused.output.contains("ferry: item 0 is public.png, not text: give -o FILE to write it to a file, or --force to write it to the terminal anyway"),
                    "\(refused.output)")
            #expect(refused.status == 64)
            let piped = try await broker.ferry("paste")
            let pngBytes = try payload("sample.png")
            #expect(piped.status == 0 && piped.standardOutput == pngBytes, "a pipe gets the bytes as today")
            let forced = try await Self.onTerminal(broker, "'\(ferry)' paste --force; echo status=$?")
            #expect(forced.output.contains("PNG") && forced.output.contains("status=0"), "--force writes the bytes anyway")
            #expect(try await broker.ferry("copy", "--text", "words").succeeded)
            let words = try await Self.onTerminal(broker, "'\(ferry)' paste")
            #expect(words.status == 0 && words.output.contains("words"), "\(words.output)")
        }
    }

    @Test("types names MIME types beside identifiers and a dynamic type by its MIME type, in errors too; copy --json")
    func readableTypes() async throws {
        try await CLIBroker.with { broker in
            let copied = try await broker.ferry("copy", "--json", "-t", "application/x-ferry-unknown", "--text", "odd")
            #expect(copied.status == 0, "\(copied.summary)")
            let report = try jsonObject(copied)
            #expect(report["pasteboard"] as? String == "general")
            let types = try await broker.ferry("types", "--json")
            #expect((report["changeCount"] as? NSNumber)?.int64Value == (try jsonObject(types)["changeCount"] as? NSNumber)?.int64Value,
                    "copy --json gives the change count 'types --json' shows, as a number")
            let table = try await broker.ferry("types")
            #expect(table.stdout == "0  application/x-ferry-unknown  application/x-ferry-unknown  3 B\n", "\(table.stdout)")
            let missing = try await broker.ferry("paste", "-t", "image")
            #expect(missing.stderr == "ferry: item 0 has nothing conforming to public.image; it has application/x-ferry-unknown\n")
            #expect(try await broker.ferry("copy", "--text", "words").succeeded)
            #expect(try await broker.ferry("types").stdout == "0  public.utf8-plain-text  text/plain;charset=utf-8  5 B\n")
        }
    }

    @Test("log shows local time with its offset; --json keeps UTC")
    func logLocalTime() async throws {
        try await CLIBroker.with { broker in
            #expect(try await broker.ferry("copy", "--text", "logged").succeeded)
            #expect(try await broker.ferry("paste").succeeded)
            let json = try jsonObject(try await broker.ferry("log", "--json"))
            let utc = try #require((json["entries"] as? [[String: Any]])?.first?["timestamp"] as? String)
            #expect(utc.hasSuffix("Z"))
            var environment = broker.environment
            environment["TZ"] = "UTC-3"
            let shifted = try await ChildProcess.run(try FerryCLI.binary().path, ["log"], environment: environment,
                                                     standardInput: nil, timeout: .seconds(30))
            #expect(shifted.stdout.contains(" +0300  general  0  public.utf8-plain-text  pid "), "\(shifted.stdout)")
            // The UTC hour plus three, modulo a day.
            let hour = Int(utc.dropFirst(11).prefix(2)) ?? -1
            let shown = Int(shifted.stdout.dropFirst(11).prefix(2)) ?? -2
            #expect(shown == (hour + 3) % 24, "\(utc) → \(shifted.stdout)")
        }
    }

    /// Runs `command` through `sh` with a pseudo-terminal as its standard output (script(1)).
    private static func onTerminal(_ broker: CLIBroker, _ command: String) async throws -> (status: Int32, output: String) {
        let result = try await ChildProcess.run("/usr/bin/script", ["-q", "-e", "-c", command, "/dev/null"],
                                                environment: broker.environment, standardInput: nil, timeout: .seconds(30))
        return (result.status, result.stdout)
    }

    private static func base64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }

    /// The change count `ferry copy -v` reports.
    private static func changeCount(_ stderr: String) -> String? {
        guard let range = stderr.range(of: "change count ") else { return nil }
        return String(stderr[range.upperBound...].prefix { $0.isNumber })
    }
}
