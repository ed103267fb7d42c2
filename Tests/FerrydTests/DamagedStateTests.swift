import DBus
import FerryTestSupport
import Foundation
import Testing

/// Damaged state on disk: a database that is not one any more is set aside and ferryd starts
/// without it, saying so; a blob file truncated, overwritten (even with as many bytes) or replaced
/// (by a link, a FIFO) is never served as the item's bytes, while one touched or put back
/// unchanged still is.
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

    /// Sets one item with a 300,000-byte blob representation; returns its bytes and the blob's file.
    static func storeBlob(_ fixture: FerrydFixture, _ client: Connection, seed: UInt8) async throws -> ([UInt8], URL) {
        let blobs = fixture.stateDir.appendingPathComponent("blobs")
        let before = Set(try files(in: blobs, prefix: ""))
        let bytes = F.pattern(300_000, seed: seed)
        try await F.setItems(client, [F.item([F.representation("public.data", fd: try F.file(bytes))])])
        let added = Set(try files(in: blobs, prefix: "")).subtracting(before)
        let name = try #require(added.count == 1 ? added.first : nil, "one new blob: \(added)")
        return (bytes, blobs.appendingPathComponent(name))
    }

    /// Overwrites `count` bytes of `file` at `offset` in place (same inode, same length).
    static func overwrite(_ file: URL, at offset: UInt64, count: Int) throws {
        let handle = try FileHandle(forUpdating: file)
        try handle.seek(toOffset: offset)
        let old = try handle.read(upToCount: count) ?? Data()
        try handle.seek(toOffset: offset)
        try handle.write(contentsOf: Data(old.map { $0 ^ 0xFF }))
        try handle.close()
    }

    /// Waits until ferryd's standard error contains `text` (its log is written asynchronously).
    static func logged(_ daemon: ServiceProcess, _ text: String) async throws -> Bool {
        await eventually { daemon.standardError.contains(text) }
    }

    @Test("a blob overwritten in place with as many bytes is Unavailable, named and logged, even across a restart")
    func blobOverwrittenWithSameLength() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        var daemon = try await fixture.start()
        var client = try await fixture.connect()
        for (what, offset) in [("first byte", UInt64(0)), ("middle", UInt64(150_001)), ("last byte", UInt64(299_999))] {
            let (bytes, file) = try await Self.storeBlob(fixture, client, seed: UInt8(offset % 251) + 1)
            #expect(try await F.read(client, 0, "public.data").bytes() == bytes, "\(what): served before tampering")
            try Self.overwrite(file, at: offset, count: 1)
            let failure = await F.failure { _ = try await F.read(client, 0, "public.data") }
            #expect(failure?.name == "org.ferry.Error.Unavailable", "\(what): \(String(describing: failure))")
            #expect(failure?.message.contains("checksum") == true, "\(what): the damage is named: \(String(describing: failure))")
            let again = await F.failure { _ = try await F.read(client, 0, "public.data") }
            #expect(again?.name == "org.ferry.Error.Unavailable", "\(what): still refused the second time")
        }
        #expect(try await Self.logged(daemon, "checksum mismatch"), "\(daemon.standardError)")
        await client.close()
        daemon.send(SIGTERM)
        _ = await daemon.waitForExit(timeout: .seconds(10))

        daemon = try await fixture.start()
        defer { daemon.stop() }
        client = try await fixture.connect()
        let failure = await F.failure { _ = try await F.read(client, 0, "public.data") }
        #expect(failure?.name == "org.ferry.Error.Unavailable", "after a restart: \(String(describing: failure))")
        #expect(daemon.isRunning)
        await client.close()
    }

    @Test("a blob touched, chmod-ed, or copied away and back unchanged is still served, and checked again after")
    func blobChangedOnlyInIdentity() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let client = try await fixture.connect()
        let copy = fixture.stateDir.deletingLastPathComponent().appendingPathComponent("ferry-blob-copy-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: copy) }
        let changes: [(String, (URL) throws -> Void)] = [
            ("touched", { url in #expect(utimes(url.path, nil) == 0) }),
            ("chmod-ed", { url in #expect(chmod(url.path, 0o644) == 0); #expect(chmod(url.path, 0o600) == 0) }),
            ("copied away and back", { url in
                try FileManager.default.copyItem(at: url, to: copy)
                try FileManager.default.removeItem(at: url)
                try FileManager.default.copyItem(at: copy, to: url)
                try FileManager.default.removeItem(at: copy)
            }),
        ]
        for (index, (what, change)) in changes.enumerated() {
            let (bytes, file) = try await Self.storeBlob(fixture, client, seed: 40 + UInt8(index))
            #expect(try await F.read(client, 0, "public.data").bytes() == bytes, "\(what): served before")
            try change(file)
            #expect(try await F.read(client, 0, "public.data").bytes() == bytes, "\(what): served after")
            #expect(try await F.read(client, 0, "public.data").bytes() == bytes, "\(what): served again")
            try Self.overwrite(file, at: 1000, count: 4)
            let failure = await F.failure { _ = try await F.read(client, 0, "public.data") }
            #expect(failure?.name == "org.ferry.Error.Unavailable", "\(what), then overwritten: \(String(describing: failure))")
        }
        #expect(daemon.isRunning)
        await client.close()
    }

    @Test("a store written before blob checksums opens, serves its blobs, history restore included, and checks them after")
    func storeWithoutChecksums() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        var daemon = try await fixture.start()
        var client = try await fixture.connect()
        let (older, _) = try await Self.storeBlob(fixture, client, seed: 61)
        let (newer, newerFile) = try await Self.storeBlob(fixture, client, seed: 62)
        await client.close()
        daemon.send(SIGTERM)
        _ = await daemon.waitForExit(timeout: .seconds(10))
        // Back to the schema of the previous version: its columns and its migration record.
        let database = fixture.stateDir.appendingPathComponent("ferry.sqlite").path
        let sql = """
            ALTER TABLE representation DROP COLUMN checksum;
            ALTER TABLE representation DROP COLUMN blobInode;
            ALTER TABLE representation DROP COLUMN blobChangeTime;
            ALTER TABLE item DROP COLUMN origin;
            ALTER TABLE item DROP COLUMN sourceProcess;
            ALTER TABLE pasteLog DROP COLUMN process;
            ALTER TABLE pasteLog DROP COLUMN consent;
            ALTER TABLE pasteLog DROP COLUMN writerProcess;
            ALTER TABLE pasteLog DROP COLUMN historyEntry;
            DELETE FROM grdb_migrations WHERE identifier <> 'v1';
            SELECT group_concat(identifier) FROM grdb_migrations;
            SELECT count(*) FROM pragma_table_info('representation');
            """
        let edit = try await ChildProcess.run("/usr/bin/sqlite3", [database, sql], timeout: .seconds(30))
        #expect(edit.succeeded, "\(edit.stderr)")
        #expect(edit.stdout == "v1\n9\n", "the store is a v1 store: \(edit.stdout)")

        daemon = try await fixture.start()
        defer { daemon.stop() }
        client = try await fixture.connect()
        #expect(try await F.read(client, 0, "public.data").bytes() == newer, "an old blob is served")
        try Self.overwrite(newerFile, at: 5, count: 1)
        let failure = await F.failure { _ = try await F.read(client, 0, "public.data") }
        #expect(failure?.name == "org.ferry.Error.Unavailable", "once read, its checksum holds: \(String(describing: failure))")
        _ = try await F.pasteboard(client, "RestoreHistory", [.uint32(0)])
        #expect(try await F.read(client, 0, "public.data").bytes() == older, "an old blob restored from history is served")
        #expect(daemon.isRunning)
        await client.close()
    }
}
