import FerryTestSupport
import Foundation
import Testing

@Suite("ferry copy / paste between processes", .serialized)
struct FerryCopyPasteTests {
    @Test("text copied by one process (which then exits) pastes in another, byte for byte, with no newline added")
    func text() async throws {
        try await CLIBroker.with { broker in
            let copy = try await broker.ferry("copy", "--text", "héllo ferry")
            #expect(copy.succeeded, "\(copy.summary)")
            #expect(copy.standardOutput.isEmpty && copy.standardError.isEmpty)

            let paste = try await broker.ferry("paste")
            #expect(paste.succeeded, "\(paste.summary)")
            #expect(paste.stdout == "héllo ferry")
            let plain = try await broker.ferry("paste", "--type", "public.plain-text")
            #expect(plain.stdout == "héllo ferry")
            let mime = try await broker.ferry("paste", "-t", "text/plain")
            #expect(mime.stdout == "héllo ferry")

            let types = try await broker.ferry("types")
            #expect(types.stdout.hasPrefix("0  public.utf8-plain-text  text/plain;charset=utf-8  12 B"), "\(types.stdout)")

            // Standard input, sniffed as text; a trailing newline stays exactly as it was.
            let piped = try await broker.ferry("copy", stdin: Data("line one\nline two\n".utf8))
            #expect(piped.succeeded, "\(piped.summary)")
            #expect(try await broker.ferry("paste").stdout == "line one\nline two\n")
            let json = try jsonObject(try await broker.ferry("types", "--json"))
            let items = try #require(json["items"] as? [[String: Any]])
            let reps = try #require(items.first?["representations"] as? [[String: Any]])
            #expect(reps.first?["type"] as? String == "public.utf8-plain-text")
            #expect(items.first?["localOnly"] as? Bool == false)
            #expect(items.first?["expirationDate"] is NSNull)
            #expect(Set(try #require(items.first).keys) == ["index", "id", "suggestedName", "localOnly", "expirationDate",
                                                          "sourceAppID", "origin", "representations"])
            #expect(items.first?["origin"] is NSNull)
        }
    }

    @Test("a PNG file round-trips: type from its name, suggested name, identical bytes, -o writes the file")
    func png() async throws {
        try await CLIBroker.with { broker in
            let png = try payload("sample.png")
            let file = try broker.file("Photo.png", png)
            let copy = try await broker.ferry("copy", file.path)
            #expect(copy.succeeded, "\(copy.summary)")

            let json = try jsonObject(try await broker.ferry("types", "--json"))
            let item = try #require((json["items"] as? [[String: Any]])?.first)
            #expect(item["suggestedName"] as? String == "Photo")
            let rep = try #require((item["representations"] as? [[String: Any]])?.first)
            #expect(rep["type"] as? String == "public.png")
            #expect(rep["size"] as? Int == png.count)

            let paste = try await broker.ferry("paste")
            #expect(paste.standardOutput == png)
            let image = try await broker.ferry("paste", "--type", "public.image")
            #expect(image.standardOutput == png)

            let out = broker.folder.appendingPathComponent("out.png")
            let written = try await broker.ferry("paste", "-o", out.path)
            #expect(written.succeeded && written.standardOutput.isEmpty, "\(written.summary)")
            #expect(try Data(contentsOf: out) == png)
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: broker.folder.path).filter { $0.hasPrefix(".") }
            #expect(leftovers.isEmpty, "temporary files left: \(leftovers)")
        }
    }

    @Test("--rep makes one item with several representations; paste --type picks the best conforming one")
    func representations() async throws {
        try await CLIBroker.with { broker in
            let png = try payload("sample.png"), jpeg = try payload("sample.jpg")
            let pngFile = try broker.file("a.png", png), jpegFile = try broker.file("a.jpg", jpeg)
            let textFile = try broker.file("a.txt", Data("a picture".utf8))
            let copy = try await broker.ferry("copy", "--rep", "public.png=\(pngFile.path)", "--rep", "image/jpeg=\(jpegFile.path)",
                                              "--rep", "public.utf8-plain-text=\(textFile.path)")
            #expect(copy.succeeded, "\(copy.summary)")

            let types = try await broker.ferry("types")
            let listed = types.stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true) }
            #expect(listed.map { String($0[0]) } == ["0", "0", "0"], "\(types.stdout)")
            #expect(listed.map { String($0[1]) } == ["public.png", "public.jpeg", "public.utf8-plain-text"])

            #expect(try await broker.ferry("paste", "--type", "public.image").standardOutput == png)
            #expect(try await broker.ferry("paste", "--type", "public.jpeg").standardOutput == jpeg)
            #expect(try await broker.ferry("paste", "--type", "public.text").stdout == "a picture")
            #expect(try await broker.ferry("paste").standardOutput == png)

            let none = try await broker.ferry("paste", "--type", "com.adobe.pdf")
            #expect(none.status == 2)
            #expect(none.stderr == "ferry: item 0 has nothing conforming to com.adobe.pdf; it has public.png, public.jpeg, public.utf8-plain-text\n")
        }
    }

    @Test("several files are several items; --item picks one; an item out of range exits 2")
    func severalFiles() async throws {
        try await CLIBroker.with { broker in
            let png = try payload("sample.png"), jpeg = try payload("sample.jpg")
            let files = [try broker.file("notes.txt", Data("notes\n".utf8)), try broker.file("b.png", png),
                         try broker.file("c.jpg", jpeg)]
            let copy = try await broker.ferry(["copy"] + files.map(\.path))
            #expect(copy.succeeded, "\(copy.summary)")
            let json = try jsonObject(try await broker.ferry("types", "--json"))
            let items = try #require(json["items"] as? [[String: Any]])
            #expect(items.map { $0["suggestedName"] as? String } == ["notes", "b", "c"])

            #expect(try await broker.ferry("paste").stdout == "notes\n")
            #expect(try await broker.ferry("paste", "--item", "1").standardOutput == png)
            #expect(try await broker.ferry("paste", "-i", "2").standardOutput == jpeg)
            let single = try await broker.ferry("types", "--item", "2")
            #expect(single.stdout.hasPrefix("2  public.jpeg"), "\(single.stdout)")

            let missing = try await broker.ferry("paste", "--item", "9")
            #expect(missing.status == 2)
            #expect(missing.stderr == "ferry: no item 9: the pasteboard has 3 items\n")
            #expect(try await broker.ferry("types", "--item", "9").status == 2)
        }
    }

    @Test("20 MiB on standard input round-trips byte for byte, to standard output and with -o")
    func largeStandardInput() async throws {
        try await CLIBroker.with { broker in
            let data = noise(20 << 20)
            let copy = try await broker.ferry("copy", "--type", "public.data", stdin: data)
            #expect(copy.succeeded, "\(copy.summary)")
            let paste = try await broker.ferry("paste")
            #expect(paste.succeeded, "\(paste.summary)")
            #expect(paste.standardOutput.count == data.count)
            #expect(firstDifference(paste.standardOutput, data) == nil)
            let out = broker.folder.appendingPathComponent("big.bin")
            #expect(try await broker.ferry("paste", "-o", out.path).succeeded)
            #expect(try firstDifference(Data(contentsOf: out), data) == nil)

            // Standard input redirected from a regular file is handed over as that file.
            let other = noise(3 << 20, seed: 3)
            let file = try broker.file("redirected.bin", other)
            let fd = open(file.path, O_RDONLY | O_CLOEXEC)
            defer { close(fd) }
            let redirected = try broker.start(["copy", "-", "-t", "public.data"], stdin: fd)
            #expect(await redirected.waitForExit(timeout: .seconds(30)) == 0)
            #expect(try await firstDifference(broker.ferry("paste").standardOutput, other) == nil)
        }
    }

    @Test("history lists previous contents but never --sensitive ones; restore brings one back")
    func historyAndSensitive() async throws {
        try await CLIBroker.with { broker in
            #expect(try await broker.ferry("copy", "--text", "first").succeeded)
            let first = try await changeCount(broker)
            #expect(try await broker.ferry("copy", "--sensitive", "--text", "hunter2").succeeded)
            let secret = try await changeCount(broker)
            #expect(try await broker.ferry("paste").stdout == "hunter2")
            #expect(try await broker.ferry("copy", "--text", "third").succeeded)

            let json = try jsonObject(try await broker.ferry("history", "--json"))
            let entries = try #require(json["entries"] as? [[String: Any]])
            let counts = entries.compactMap { ($0["changeCount"] as? NSNumber)?.uint64Value }
            #expect(counts.contains(first), "\(counts)")
            #expect(!counts.contains(secret), "a sensitive item entered the history: \(counts)")

            let text = try await broker.ferry("history")
            #expect(text.stdout.hasPrefix("0  \(first)  "), "\(text.stdout)")
            #expect(try await broker.ferry("history", "restore", "0").succeeded)
            #expect(try await broker.ferry("paste").stdout == "first")
            let bad = try await broker.ferry("history", "restore", "99")
            #expect(bad.status == 2)
            #expect(bad.stderr == "ferry: no history entry 99\n")
            #expect(try await broker.ferry("history", "clear").succeeded)
            #expect(try await broker.ferry("history").stdout.isEmpty)
        }

        func changeCount(_ broker: CLIBroker) async throws -> UInt64 {
            let json = try jsonObject(try await broker.ferry("types", "--json"))
            return try #require((json["changeCount"] as? NSNumber)?.uint64Value)
        }
    }

    @Test("--expires 1: the item is there at once and gone once the second has passed")
    func expires() async throws {
        try await CLIBroker.with { broker in
            #expect(try await broker.ferry("copy", "--expires", "1", "--local-only", "--text", "brief").succeeded)
            #expect(try await broker.ferry("paste").stdout == "brief")
            let json = try jsonObject(try await broker.ferry("types", "--json"))
            let item = try #require((json["items"] as? [[String: Any]])?.first)
            #expect(item["localOnly"] as? Bool == true)
            let expiration = try #require(item["expirationDate"] as? String)
            #expect(expiration.hasSuffix("Z") && expiration.count == 24, "\(expiration)")
            var gone = try await broker.ferry("paste")
            #expect(try await eventually {
                gone = try await broker.ferry("paste")
                return gone.status == 2
            }, "\(gone.summary)")
            #expect(gone.stderr == "ferry: nothing to paste: the pasteboard is empty\n")
            #expect(try await broker.ferry("types").stdout.isEmpty)
        }
    }

    @Test("clear empties the pasteboard; named pasteboards are separate, listed and removable; log records pastes")
    func clearNamedAndLog() async throws {
        try await CLIBroker.with { broker in
            #expect(try await broker.ferry("copy", "--text", "general text").succeeded)
            #expect(try await broker.ferry("copy", "-p", "notes", "--text", "note text").succeeded)
            #expect(try await broker.ferry("paste", "--pasteboard", "notes").stdout == "note text")
            #expect(try await broker.ferry("paste").stdout == "general text")
            #expect(try await broker.ferry("pasteboards").stdout == "general\nnotes\n")

            let log = try jsonObject(try await broker.ferry("log", "--json"))
            let entries = try #require(log["entries"] as? [[String: Any]])
            #expect(entries.count == 2)
            #expect(entries.first?["pasteboard"] as? String == "general")
            #expect(entries.last?["pasteboard"] as? String == "notes")
            #expect(entries.first?["type"] as? String == "public.utf8-plain-text")
            #expect(entries.first?["appID"] is NSNull)

            #expect(try await broker.ferry("clear").succeeded)
            let empty = try await broker.ferry("paste")
            #expect(empty.status == 2)
            #expect(empty.stderr == "ferry: nothing to paste: the pasteboard is empty\n")

            #expect(try await broker.ferry("pasteboards", "remove", "notes").succeeded)
            #expect(try await broker.ferry("pasteboards", "--json").stdout == "{\"pasteboards\":[\"general\"]}\n")
            let again = try await broker.ferry("pasteboards", "remove", "notes")
            #expect(again.status == 2)
            #expect(again.stderr == "ferry: no pasteboard named 'notes'\n")
            #expect(try await broker.ferry("pasteboards", "remove", "general").status == 64)
        }
    }
}

/// Standard output parsed as one JSON object.
func jsonObject(_ result: ChildProcessResult) throws -> [String: Any] {
    let object = try JSONSerialization.jsonObject(with: result.standardOutput)
    guard let dictionary = object as? [String: Any] else { throw CLITestError("not a JSON object: \(result.stdout)") }
    return dictionary
}
