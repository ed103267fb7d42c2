import FerryTestSupport
import Foundation
import Testing

/// File names that are not UTF-8 reach the file system as the exact bytes given: Linux paths are
/// bytes, and Swift's `CommandLine.arguments` would turn the stray ones into U+FFFD.
@Suite("file names that are not UTF-8", .serialized)
struct RawPathTests {
    /// Runs `ferry` with arguments given as bytes: `Process` takes only Strings, so a shell's
    /// `printf` makes each argument from octal escapes.
    static func ferry(_ broker: CLIBroker, _ arguments: [[UInt8]]) async throws -> ChildProcessResult {
        let quoted = arguments.map { bytes in "\"$(printf '" + bytes.map { "\\" + String($0, radix: 8) }.joined() + "')\"" }
        return try await ChildProcess.run("/bin/sh", ["-c", "exec \"$0\" " + quoted.joined(separator: " "), try FerryCLI.binary().path],
                                          environment: broker.environment)
    }

    /// `folder/name` as bytes.
    static func path(_ folder: URL, _ name: [UInt8]) -> [UInt8] { Array(folder.path.utf8) + [UInt8(ascii: "/")] + name }

    /// Creates a file named by `path`'s bytes holding `text`.
    static func create(_ path: [UInt8], _ text: String) throws {
        let fd = open(path.map { CChar(bitPattern: $0) } + [0], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw CLITestError("cannot create \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        guard write(fd, bytes, bytes.count) == bytes.count else { throw CLITestError("cannot write \(path)") }
    }

    /// The bytes of the file named by `path`'s bytes; nil when there is none.
    static func contents(_ path: [UInt8]) -> String? {
        let fd = open(path.map { CChar(bitPattern: $0) } + [0], O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = read(fd, &buffer, buffer.count)
        return String(decoding: buffer[..<max(0, n)], as: UTF8.self)
    }

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test("copy, --rep, type of and share read the file the bytes name; two names differing only there stay apart")
    func reading() async throws {
        try await CLIBroker.with { broker in
            let first = Self.path(broker.folder, Self.bytes("a") + [0xFF] + Self.bytes(".txt"))
            let second = Self.path(broker.folder, Self.bytes("a") + [0xFE] + Self.bytes(".txt"))
            try Self.create(first, "first file")
            try Self.create(second, "second file")

            let copy = try await Self.ferry(broker, [Self.bytes("copy"), first, second])
            #expect(copy.succeeded, "\(copy.summary)")
            #expect(try await broker.ferry("paste", "-i", "0").stdout == "first file")
            #expect(try await broker.ferry("paste", "-i", "1").stdout == "second file")
            let json = try jsonObject(try await broker.ferry("types", "--json"))
            let items = try #require(json["items"] as? [[String: Any]])
            // Suggested names travel as text: the stray byte shows as U+FFFD, the extension still types it.
            #expect(items.map { $0["suggestedName"] as? String } == ["a\u{FFFD}", "a\u{FFFD}"])
            #expect(items.compactMap { ($0["representations"] as? [[String: Any]])?.first?["type"] as? String }
                    == ["public.utf8-plain-text", "public.utf8-plain-text"])

            let rep = try await Self.ferry(broker, [Self.bytes("copy"), Self.bytes("--rep"), Self.bytes("public.plain-text=") + second])
            #expect(rep.succeeded, "\(rep.summary)")
            #expect(try await broker.ferry("paste").stdout == "second file")

            let typeOf = try await Self.ferry(broker, [Self.bytes("type"), Self.bytes("of"), first])
            #expect(typeOf.succeeded, "\(typeOf.summary)")
            #expect(typeOf.stdout.contains("a\u{FFFD}.txt") && typeOf.stdout.contains("by name:    public.plain-text"), "\(typeOf.stdout)")

            let share = try await Self.ferry(broker, [Self.bytes("share"), first, Self.bytes("--list")])
            #expect(share.succeeded, "\(share.summary)")
            #expect(share.stdout.contains("org.ferry.activity.copy"))

            // Missing: the message names the file, the stray byte as U+FFFD.
            let missing = try await Self.ferry(broker, [Self.bytes("copy"), Self.path(broker.folder, Self.bytes("gone") + [0xFF])])
            #expect(missing.status == 2 && missing.stderr.contains("gone\u{FFFD}"), "\(missing.summary)")
            // Any argument echoed in an error shows its stray bytes as U+FFFD, not as what carried them.
            let badType = try await Self.ferry(broker, [Self.bytes("copy"), Self.bytes("-t"), Self.bytes("image/x") + [0xFF], first])
            #expect(badType.status == 2 && badType.stderr.contains("image/x\u{FFFD}"), "\(badType.summary)")
        }
    }

    @Test("paste -o writes the file the bytes name, not one with U+FFFD in its name")
    func writing() async throws {
        try await CLIBroker.with { broker in
            #expect(try await broker.ferry("copy", "--text", "pasted").succeeded)
            let out = Self.path(broker.folder, Self.bytes("out") + [0xFF] + Self.bytes(".txt"))
            let paste = try await Self.ferry(broker, [Self.bytes("paste"), Self.bytes("-o"), out])
            #expect(paste.succeeded, "\(paste.summary)")
            #expect(Self.contents(out) == "pasted")
            #expect(!FileManager.default.fileExists(atPath: broker.folder.appendingPathComponent("out\u{FFFD}.txt").path))
            let long = try await Self.ferry(broker, [Self.bytes("paste"), Self.bytes("--output=") + out + [0xFE]])
            #expect(long.succeeded, "\(long.summary)")
            #expect(Self.contents(out + [0xFE]) == "pasted")
        }
    }

    @Test("text arguments keep U+FFFD for stray bytes; a save-to-folder folder that is not UTF-8 is a usage error")
    func text() async throws {
        try await CLIBroker.with { broker in
            let copy = try await Self.ferry(broker, [Self.bytes("copy"), Self.bytes("--text"), Self.bytes("x") + [0xFF]])
            #expect(copy.succeeded, "\(copy.summary)")
            #expect(try await broker.ferry("paste").stdout == "x\u{FFFD}")

            let folder = Self.path(broker.folder, Self.bytes("dir") + [0xFF])
            #expect(mkdir(folder.map { CChar(bitPattern: $0) } + [0], 0o755) == 0)
            let file = try broker.file("a.txt", Data("a".utf8))
            let share = try await Self.ferry(broker, [Self.bytes("share"), Self.bytes(file.path), Self.bytes("--activity"),
                                                      Self.bytes("save-to-folder"), Self.bytes("--to"), folder])
            #expect(share.status == 64 && share.stderr.contains("is not UTF-8"), "\(share.summary)")
            #expect(share.stderr.split(separator: "\n").count == 1)
        }
    }
}
