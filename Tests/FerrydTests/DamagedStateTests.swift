import DBus
import FerryTestSupport
import Foundation
import Testing

/// Damaged state on disk: a database that is not one any more is set aside and ferryd starts
/// without it, saying so; a blob file truncated, overwritten or replaced (by a link, a FIFO) is
/// never served as the item's bytes.
@Suite("ferryd: damaged state on disk", .serialized)
struct DamagedStateTests {
    typealias F = FerrydFixture
    typealias S = SceneBus

    /// Overwrites the first bytes of `file` (the SQLite header) with garbage.
    static func damage(_ file: URL) throws {
        let handle = try FileHandle(forWritingTo: file)
        try handle.write(contentsOf: Data(repeating: 0x5A, count: 100))
        try handle.close()
    }

    static func files(in directory: URL, prefix: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix(prefix) }.sorted()
    }

    @Test("a damaged ferry.sqlite is set aside with its blobs; ferryd starts, says so, and pasteboards and scenes work")
    func damagedPasteboardDatabase() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        var daemon = try await fixture.start()
        var client = try await fixture.connect()
        let large = F.pattern(200_000, seed: 9)
        try await F.setItems(client, [F.item([F.representation("public.data", fd: try F.file(large))])])
        await client.close()
        daemon.send(SIGTERM)
        _ = await daemon.waitForExit(timeout: .seconds(10))
        let blob = try #require(try Self.files(in: fixture.stateDir.appendingPathComponent("blobs"), prefix: "").first)
        try Self.damage(fixture.stateDir.appendingPathComponent("ferry.sqlite"))
        let damagedBytes = try Data(contentsOf: fixture.stateDir.appendingPathComponent("ferry.sqlite"))

        daemon = try await fixture.start()
        defer { daemon.stop() }
        #expect(daemon.standardError.contains("ferry.sqlite is damaged"), "\(daemon.standardError)")
        let aside = try Self.files(in: fixture.stateDir, prefix: "ferry.sqlite.damaged-")
        #expect(aside.count == 1, "\(aside)")
        if let name = aside.first {
            #expect(try Data(contentsOf: fixture.stateDir.appendingPathComponent(name)) == damagedBytes, "kept as it was")
        }
        let blobsAside = try Self.files(in: fixture.stateDir, prefix: "blobs.damaged-")
        #expect(blobsAside.count == 1, "\(blobsAside)")
        if let folder = blobsAside.first {
            let kept = try Data(contentsOf: fixture.stateDir.appendingPathComponent(folder).appendingPathComponent(blob))
            #expect(firstDifference(kept, large) == nil, "the blob's bytes were kept, not collected")
        }
        client = try await fixture.connect()
        #expect(try await F.items(client).isEmpty)
        try await F.setItems(client, [F.item([F.representation("public.utf8-plain-text", "after")])])
        #expect(try await F.read(client, 0, "public.text").bytes() == Array("after".utf8))
        let app = try await FakeSceneApp.start(fixture, SceneServiceTests.notes, manifest: try F.manifest("Notes"))
        _ = try await SceneServiceTests.firstSession(app)
        await app.quit()
        await client.close()
    }

    @Test("a damaged scenes.sqlite is set aside; ferryd starts, says so, keeps the pasteboard, and scenes work")
    func damagedSceneDatabase() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        var daemon = try await fixture.start()
        var client = try await fixture.connect()
        try await F.setItems(client, [F.item([F.representation("public.utf8-plain-text", "kept")])])
        await client.close()
        daemon.send(SIGTERM)
        _ = await daemon.waitForExit(timeout: .seconds(10))
        try Self.damage(fixture.stateDir.appendingPathComponent("scenes.sqlite"))

        daemon = try await fixture.start()
        defer { daemon.stop() }
        #expect(daemon.standardError.contains("scenes.sqlite is damaged"), "\(daemon.standardError)")
        #expect(try Self.files(in: fixture.stateDir, prefix: "scenes.sqlite.damaged-").count == 1)
        client = try await fixture.connect()
        #expect(try await F.read(client, 0, "public.text").bytes() == Array("kept".utf8), "the pasteboard survived")
        let app = try await FakeSceneApp.start(fixture, SceneServiceTests.notes, manifest: try F.manifest("Notes"))
        _ = try await SceneServiceTests.firstSession(app)
        #expect(try await S.sessions(client).count == 1)
        await app.quit()
        await client.close()
    }

    @Test("a blob truncated, overwritten with more bytes, replaced by a link or a FIFO is Unavailable, never served")
    func tamperedBlobs() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let client = try await fixture.connect()
        let blobs = fixture.stateDir.appendingPathComponent("blobs")
        let secret = fixture.stateDir.deletingLastPathComponent().appendingPathComponent("ferry-secret-\(UUID().uuidString)")
        try Data("root:$6$not-for-you".utf8).write(to: secret)
        defer { try? FileManager.default.removeItem(at: secret) }
        let tampering: [(String, (URL) throws -> Void)] = [
            ("truncated", { try FileHandle(forWritingTo: $0).truncate(atOffset: 1000) }),
            ("grown", { let h = try FileHandle(forWritingTo: $0); try h.seekToEnd(); try h.write(contentsOf: Data([1, 2, 3])); try h.close() }),
            ("a symbolic link", { try FileManager.default.removeItem(at: $0)
                try FileManager.default.createSymbolicLink(at: $0, withDestinationURL: secret) }),
            ("a FIFO", { try FileManager.default.removeItem(at: $0); #expect(mkfifo($0.path, 0o600) == 0) }),
        ]
        for (what, tamper) in tampering {
            let bytes = F.pattern(100_000, seed: 5)
            let before = Set(try Self.files(in: blobs, prefix: ""))
            try await F.setItems(client, [F.item([F.representation("public.data", fd: try F.file(bytes))])])
            let added = Set(try Self.files(in: blobs, prefix: "")).subtracting(before)
            let name = try #require(added.count == 1 ? added.first : nil, "\(what): one new blob: \(added)")
            #expect(try await F.read(client, 0, "public.data").bytes() == bytes, "\(what): served before tampering")
            try tamper(blobs.appendingPathComponent(name))
            let failure = await F.failure { _ = try await F.read(client, 0, "public.data") }
            #expect(failure?.name == "org.ferry.Error.Unavailable", "\(what): \(String(describing: failure))")
        }
        #expect(daemon.isRunning)
        await client.close()
    }
}
