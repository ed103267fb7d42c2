import FerryContinuity
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// Named pasteboards opted in to continuity (`ferryd --continuity-pasteboards`): carried like the
/// general one between devices that both list them, never announced otherwise.
@Suite("Continuity: named pasteboards opted in", .serialized)
struct NamedPasteboardTests {
    /// Runs `body` with an engine, a laptop opted in to `laptopBoards` on its command line and a
    /// desktop to `desktopBoards` in its continuity.conf; stops them all, also on failure.
    func withDevices(laptop laptopBoards: String, desktop desktopBoards: String,
                     _ body: (ContinuityEngine, Device, Device) async throws -> Void) async throws {
        let laptop: (ContinuityEngine) async throws -> Device = { engine in
            try await Device("laptop", engine: engine, extra: ["--continuity-pasteboards", laptopBoards])
        }
        // The desktop lists its pasteboards in its continuity.conf.
        let desktop: (ContinuityEngine) async throws -> Device = { engine in
            let config = engine.directory.appendingPathComponent("desktop.conf")
            let lines = """
                continuity = \(engine.url)
                creds = \(engine.seeds["desktop"]!)
                continuity-key = \(engine.keys["ALICE"]!)
                continuity-ca = \(engine.caFile)
                device = desktop
                continuity-pasteboards = \(desktopBoards)

                """
            try engine.writeSecret(lines, to: config.path)
            return try await Device("desktop", engine: engine, arguments: ["--continuity-config", config.path])
        }
        try await ContinuityEngine.withDevices([laptop, desktop]) { try await body($0, $1[0], $1[1]) }
    }

    @Test("a copy to an opted-in named pasteboard lands on the other device's pasteboard of that name, apart from the general one")
    func optedInCrosses() async throws {
        try await withDevices(laptop: "notes, work", desktop: "notes") { _, laptop, desktop in
            #expect(try await laptop.ferry("copy", "--text", "on the general one").succeeded)
            #expect(try await laptop.ferry("copy", "-p", "notes", "--text", "a note from the laptop").succeeded)
            #expect(try await eventually { try await desktop.ferry("paste", "-p", "notes").stdout == "a note from the laptop" },
                    "the desktop's notes pasteboard never got the laptop's note")
            let types = try await desktop.ferry("types", "-p", "notes").stdout
            #expect(types.contains("remote laptop"), "\(types)")
            // Each pasteboard has its own bucket key: the general copy is still there, unmixed.
            #expect(try await desktop.ferry("paste").stdout == "on the general one")

            // A newer local note on the desktop wins there, and crosses back.
            #expect(try await desktop.ferry("copy", "-p", "notes", "--text", "the desktop's note").succeeded)
            #expect(try await eventually { try await laptop.ferry("paste", "-p", "notes").stdout == "the desktop's note" })
            await provingNothingHappens(for: .milliseconds(300))
            #expect(try await desktop.ferry("paste", "-p", "notes").stdout == "the desktop's note")
        }
    }

    @Test("a named pasteboard not opted in is never announced, and one the receiver does not list never lands there")
    func notOptedInStays() async throws {
        try await withDevices(laptop: "work", desktop: "notes") { engine, laptop, desktop in
            // Every announcement of the laptop's named pasteboards, whatever its name.
            let spy = try engine.link(as: "desktop")
            defer { spy.close() }
            let subjects = Mutex<[String]>([])
            try spy.subscribe("$KV.ferry_pb.laptop.>") { bytes, _ in subjects.withLock { $0.append("\(bytes.count) bytes") } }

            #expect(try await laptop.ferry("copy", "-p", "notes", "--text", "NOTES-NOT-OPTED-IN").succeeded)
            await provingNothingHappens(for: .milliseconds(800))
            #expect(subjects.withLock { $0.isEmpty }, "the laptop announced a pasteboard it did not opt in: \(subjects.withLock { $0 })")
            let notes = try await desktop.ferry("paste", "-p", "notes")
            #expect(!notes.stdout.contains("NOTES-NOT-OPTED-IN"))

            // The laptop announces "work" (the spy sees it, so it would have seen "notes"), but
            // the desktop did not opt in to it: nothing lands there.
            #expect(try await laptop.ferry("copy", "-p", "work", "--text", "work, laptop only").succeeded)
            #expect(await eventually { subjects.withLock { !$0.isEmpty } }, "the laptop never announced its opted-in pasteboard")
            await provingNothingHappens(for: .milliseconds(500))
            let work = try await desktop.ferry("paste", "-p", "work")
            #expect(!work.succeeded && !work.stdout.contains("work, laptop only"), "the desktop showed a pasteboard it did not list")
            #expect(try await desktop.ferry("types").stdout.isEmpty, "a named copy landed on the desktop's general pasteboard")
        }
    }

    @Test("ferryd refuses to share the general pasteboard by name, the broker's own pasteboards and bad names")
    func refusesBadLists() async throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-named-\(getpid())-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: state) }
        for (list, expected) in [("general", "always shared"), ("notes,org.ferry.drag.1", "broker's own"),
                                 ("notes,,work", "empty name"), ("no/slash", "bad pasteboard name")] {
            let result = try await ChildProcess.run(try BuiltProducts.executable("ferryd"),
                                                    ["--state-dir", state.path, "--continuity", "tls://127.0.0.1:4222",
                                                     "--continuity-pasteboards", list],
                                                    environment: ["HOME": state.path, "PATH": "/usr/bin:/bin"], timeout: .seconds(20))
            #expect(!result.succeeded && !result.timedOut, "ferryd started with --continuity-pasteboards \(list)")
            #expect(result.stderr.contains(expected), "\(list): \(result.stderr)")
        }
    }
}
