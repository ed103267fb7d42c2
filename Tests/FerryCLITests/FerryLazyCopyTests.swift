import FerryTestSupport
import Foundation
import Testing

@Suite("ferry copy --lazy and ferry watch: long-running processes", .serialized)
struct FerryLazyCopyTests {
    @Test("--lazy serves a promise from the live process; after SIGTERM it has handed the data over")
    func lazyThenTerminate() async throws {
        try await CLIBroker.with { broker in
            let data = noise(3 << 20, seed: 9)
            let file = try broker.file("lazy.bin", data)
            let source = try broker.start(["copy", "--lazy", "--type", "public.data", file.path])
            defer { source.kill() }
            let promised = try await eventually { try await self.isPromised(broker) }
            #expect(promised, "the lazy copy never showed up as promised")

            let served = try await broker.ferry("paste")
            #expect(served.succeeded, "\(served.summary)")
            #expect(firstDifference(served.standardOutput, data) == nil)

            source.send(SIGTERM)
            let status = await source.waitForExit(timeout: .seconds(15))
            #expect(status == 0, "the lazy copy handed over and exits 0 on SIGTERM, as documented")
            #expect(try await !self.isPromised(broker), "the data is still promised after the source exited")
            let afterwards = try await broker.ferry("paste")
            #expect(afterwards.succeeded, "\(afterwards.summary)")
            #expect(firstDifference(afterwards.standardOutput, data) == nil)
        }
    }

    @Test("--lazy exits by itself when something else is copied")
    func lazyReplaced() async throws {
        try await CLIBroker.with { broker in
            let source = try broker.start(["copy", "--lazy", "--text", "served lazily"])
            defer { source.kill() }
            #expect(try await eventually { try await self.isPromised(broker) })
            #expect(try await broker.ferry("paste").stdout == "served lazily")
            #expect(try await broker.ferry("copy", "--text", "something else").succeeded)
            let status = await source.waitForExit(timeout: .seconds(10))
            #expect(status == 0)
            #expect(try await broker.ferry("paste").stdout == "something else")
        }
    }

    @Test("a --lazy source killed with SIGKILL leaves no broken item: the pasteboard is back to what it held before")
    func lazyKilled() async throws {
        try await CLIBroker.with { broker in
            #expect(try await broker.ferry("copy", "--text", "before").succeeded)
            let file = try broker.file("big.bin", noise(1 << 20, seed: 5))
            let source = try broker.start(["copy", "--lazy", "--type", "public.data", file.path])
            #expect(try await eventually { try await self.isPromised(broker) })
            source.kill()
            #expect(try await eventually { try await broker.ferry("paste").stdout == "before" },
                    "the general pasteboard fell back to its previous content")
            #expect(try await !self.isPromised(broker))
            let history = try await broker.ferry("history")
            #expect(!history.stdout.contains("public.data"), "no dead promise in the history: \(history.stdout)")
            #expect(broker.daemon.isRunning)
            #expect(try await broker.ferry("copy", "--text", "still works").succeeded)
            #expect(try await broker.ferry("paste").stdout == "still works")
        }
    }

    @Test("a --lazy copy to a named pasteboard killed with SIGKILL leaves it empty")
    func lazyKilledNamed() async throws {
        try await CLIBroker.with { broker in
            let source = try broker.start(["copy", "--lazy", "-p", "board", "--text", "never handed over"])
            #expect(try await eventually { try await self.itemCount(broker, "board") == 1 })
            source.kill()
            #expect(try await eventually { try await self.itemCount(broker, "board") == 0 })
            let paste = try await broker.ferry("paste", "-p", "board")
            #expect(paste.status == 2, "nothing to paste: \(paste.summary)")
            #expect(paste.stderr.split(separator: "\n").count == 1)
        }
    }

    @Test("a --lazy copy whose file is then edited refuses to serve the new bytes, in one clear line")
    func lazyEditedFile() async throws {
        try await CLIBroker.with { broker in
            let data = noise(2 << 20, seed: 6)
            let file = try broker.file("edited.bin", data)
            let source = try broker.start(["copy", "--lazy", "--type", "public.data", file.path])
            defer { source.kill() }
            #expect(try await eventually { try await self.isPromised(broker) })
            let handle = try FileHandle(forWritingTo: file)
            try handle.seekToEnd()
            try handle.write(contentsOf: Data("more".utf8))
            try handle.close()
            let paste = try await broker.ferry("paste")
            #expect(paste.status == 4, "\(paste.summary)")
            #expect(paste.standardOutput.isEmpty)
            #expect(paste.stderr.contains("changed after it was copied"), "\(paste.stderr)")
            #expect(!paste.stderr.contains("CLIFailure") && !paste.stderr.contains("status:"), "\(paste.stderr)")
            #expect(paste.stderr.split(separator: "\n").count == 1)
        }
    }

    @Test("a --lazy copy whose file is then deleted says so in one clear line")
    func lazyDeletedFile() async throws {
        try await CLIBroker.with { broker in
            let file = try broker.file("deleted.bin", noise(2 << 20, seed: 7))
            let source = try broker.start(["copy", "--lazy", "--type", "public.data", file.path])
            defer { source.kill() }
            #expect(try await eventually { try await self.isPromised(broker) })
            try FileManager.default.removeItem(at: file)
            let paste = try await broker.ferry("paste")
            #expect(paste.status == 4, "\(paste.summary)")
            #expect(paste.stderr.contains("was removed after it was copied"), "\(paste.stderr)")
            #expect(!paste.stderr.contains("CLIFailure") && !paste.stderr.contains("status:"), "\(paste.stderr)")
        }
    }

    @Test("a --lazy copy that cannot hand over on SIGTERM says why and exits non-zero; nothing broken stays")
    func lazyTerminateAfterEdit() async throws {
        try await CLIBroker.with { broker in
            #expect(try await broker.ferry("copy", "--text", "before").succeeded)
            let file = try broker.file("edited.bin", noise(1 << 20, seed: 8))
            let source = try broker.start(["copy", "--lazy", "--type", "public.data", file.path])
            defer { source.kill() }
            #expect(try await eventually { try await self.isPromised(broker) })
            try noise(1 << 20, seed: 9).write(to: file)
            source.send(SIGTERM)
            let status = await source.waitForExit(timeout: .seconds(15))
            #expect(status == 4, "\(String(describing: status))")
            let stderr = String(decoding: FileHandle(fileDescriptor: source.standardError, closeOnDealloc: false).readDataToEndOfFile(),
                                as: UTF8.self)
            #expect(stderr.contains("could not hand the data over") && stderr.contains("changed"), "\(stderr)")
            #expect(try await eventually { try await broker.ferry("paste").stdout == "before" })
        }
    }

    @Test("watch prints the current state, then a line per change, and stops cleanly on SIGINT")
    func watch() async throws {
        try await CLIBroker.with { broker in
            #expect(try await broker.ferry("copy", "--text", "before").succeeded)
            let watcher = try broker.start(["watch"])
            defer { watcher.kill() }
            var lines = LineReader(fd: watcher.standardOutput)
            let firstLine = lines.next(timeout: .seconds(10))
            let first = try #require(firstLine, "no first line")
            let parts = first.split(separator: " ")
            #expect(parts.count == 2 && parts[1] == "public.utf8-plain-text", "\(first)")
            let count = try #require(UInt64(parts[0]))

            let png = try broker.file("w.png", try payload("sample.png"))
            #expect(try await broker.ferry("copy", png.path, "--text", "x").status == 64)
            #expect(try await broker.ferry("copy", png.path).succeeded)
            let secondLine = lines.next(timeout: .seconds(10))
            let second = try #require(secondLine, "no line after a copy")
            #expect(second == "\(count + 1) public.png")
            #expect(try await broker.ferry("clear").succeeded)
            let third = lines.next(timeout: .seconds(10))
            #expect(third == "\(count + 2)")

            watcher.send(SIGINT)
            #expect(await watcher.waitForExit(timeout: .seconds(5)) == 0)
        }
    }

    @Test("watch --json prints the object of types --json per line")
    func watchJSON() async throws {
        try await CLIBroker.with { broker in
            // watch never creates a pasteboard: this one exists, empty.
            #expect(try await broker.ferry("copy", "-p", "board", "--text", "first").succeeded)
            #expect(try await broker.ferry("clear", "-p", "board").succeeded)
            let watcher = try broker.start(["watch", "--json", "-p", "board"])
            defer { watcher.kill() }
            var lines = LineReader(fd: watcher.standardOutput)
            let firstLine = lines.next(timeout: .seconds(10))
            let first = try #require(firstLine)
            let empty = try #require(JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any])
            #expect(empty["pasteboard"] as? String == "board")
            #expect((empty["items"] as? [Any])?.isEmpty == true)
            #expect(try await broker.ferry("copy", "-p", "board", "--text", "hi").succeeded)
            let nextLine = lines.next(timeout: .seconds(10))
            let next = try #require(nextLine)
            let object = try #require(JSONSerialization.jsonObject(with: Data(next.utf8)) as? [String: Any])
            let items = try #require(object["items"] as? [[String: Any]])
            #expect(items.count == 1)
            #expect(((items[0]["representations"] as? [[String: Any]])?.first?["type"]) as? String == "public.utf8-plain-text")
        }
    }

    private func itemCount(_ broker: CLIBroker, _ pasteboard: String) async throws -> Int? {
        let result = try await broker.ferry("types", "--json", "-p", pasteboard)
        guard result.succeeded, let json = try? jsonObject(result) else { return nil }
        return (json["items"] as? [Any])?.count
    }

    private func isPromised(_ broker: CLIBroker) async throws -> Bool {
        let result = try await broker.ferry("types", "--json")
        guard result.succeeded, let json = try? jsonObject(result),
              let items = json["items"] as? [[String: Any]], let reps = items.first?["representations"] as? [[String: Any]]
        else { return false }
        return reps.first?["promised"] as? Bool == true
    }
}

/// Reads lines from a child's standard output with a time limit.
struct LineReader {
    let fd: Int32
    private var pending: [UInt8] = []

    init(fd: Int32) { self.fd = fd }

    /// The next line without its newline, or nil at end of file or after `timeout`.
    mutating func next(timeout: Duration) -> String? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let newline = pending.firstIndex(of: 0x0A) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                return line
            }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return nil }
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&entry, 1, Int32(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { return nil }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { return nil }
            pending += buffer[..<n]
        }
    }
}
