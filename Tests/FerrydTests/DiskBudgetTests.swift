import DBus
import FerryTestSupport
import Foundation
import Testing

/// The pasteboards' files have a budget (`ferryd --disk-budget`): a descriptor that never ends
/// stops at it with `TooLarge` instead of filling the file system, removed files give their
/// bytes back, and a file system that fills up anyway still lets `Clear` and `ClearHistory` make
/// room.
@Suite("ferryd: the disk budget", .serialized)
struct DiskBudgetTests {
    typealias F = FerrydFixture

    /// The bytes of every file under `directory`, recursively.
    static func bytes(under directory: URL) -> Int {
        let enumerator = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.fileSizeKey])
        var total = 0
        while let url = enumerator?.nextObject() as? URL {
            total += (try? url.resourceValues(forKeys: [.fileSizeKey]).fileSize ?? 0) ?? 0
        }
        return total
    }

    static func blobs(_ stateDir: URL) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: stateDir.appendingPathComponent("blobs").path)) ?? []
    }

    static func open(_ path: String) throws -> FileDescriptor {
        let fd = Foundation.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CocoaError(.fileReadUnknown) }
        return FileDescriptor(taking: fd)
    }

    @Test("an fd of /dev/zero or a 1 TiB sparse file is refused with TooLarge at the budget, leaving nothing on disk")
    func endlessDescriptorsStopAtTheBudget() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start(["--disk-budget", "4M"])
        defer { daemon.stop() }
        let tool = try await fixture.connect()

        let zero = try Self.open("/dev/zero")
        let refused = await F.failure {
            try await F.setItems(tool, [F.item([F.representation("public.data", fd: zero)])], timeout: .seconds(60))
        }
        #expect(refused?.name == "org.ferry.Error.TooLarge", "\(String(describing: refused))")
        #expect(refused?.message.contains("--disk-budget") == true, "\(String(describing: refused))")
        #expect(Self.blobs(fixture.stateDir).isEmpty, "\(Self.blobs(fixture.stateDir))")

        let sparsePath = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-sparse-\(UUID().uuidString)").path
        let sparseFD = Foundation.open(sparsePath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        #expect(sparseFD >= 0)
        #expect(ftruncate(sparseFD, 1 << 40) == 0)
        Foundation.close(sparseFD)
        defer { unlink(sparsePath) }
        let sparse = try Self.open(sparsePath)
        let refusedSparse = await F.failure {
            try await F.setItems(tool, [F.item([F.representation("public.data", fd: sparse)])], timeout: .seconds(60))
        }
        #expect(refusedSparse?.name == "org.ferry.Error.TooLarge", "\(String(describing: refusedSparse))")
        #expect(Self.blobs(fixture.stateDir).isEmpty, "\(Self.blobs(fixture.stateDir))")
        #expect(Self.bytes(under: fixture.stateDir) < 8 << 20)

        // The budget is shared by what is kept: the current items and the history.
        let big = F.pattern(3 << 20)
        try await F.setItems(tool, [F.item([F.representation("public.data", fd: try F.file(big))])])
        let second = await F.failure {
            try await F.setItems(tool, [F.item([F.representation("public.data", fd: try F.file(F.pattern(3 << 20, seed: 9)))])])
        }
        #expect(second?.name == "org.ferry.Error.TooLarge", "the first 3 MiB stay in the history: \(String(describing: second))")
        // Bytes removed are given back: without history the same write fits.
        _ = try await F.pasteboard(tool, "Clear")
        _ = try await F.pasteboard(tool, "ClearHistory")
        try await F.setItems(tool, [F.item([F.representation("public.data", fd: try F.file(F.pattern(3 << 20, seed: 9)))])])
        #expect(Self.blobs(fixture.stateDir).count == 1)
        await tool.close(gracePeriod: .zero)
    }

    @Test("Clear and ClearHistory work on a full file system, and a write there is TooLarge",
          .enabled(if: getuid() == 0))
    func clearingWorksOnAFullDisk() async throws {
        let mountPoint = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-tmpfs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: mountPoint) }
        let mount = try await ChildProcess.run("/bin/mount", ["-t", "tmpfs", "-o", "size=8m", "tmpfs", mountPoint.path],
                                               timeout: .seconds(20))
        try #require(mount.succeeded, "\(mount.stderr)")
        defer { _ = umount2(mountPoint.path, 2 /* MNT_DETACH */) }
        let stateDir = mountPoint.appendingPathComponent("ferry")

        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start([], stateDir: stateDir)
        defer { daemon.stop() }
        let tool = try await fixture.connect()
        for seed in UInt8(1)...3 {
            try await F.setItems(tool, [F.item([F.representation("public.data", fd: try F.file(F.pattern(3 << 19, seed: seed)))])])
        }
        // Something else fills the file system to the last byte.
        let filler = Foundation.open(mountPoint.appendingPathComponent("filler").path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        try #require(filler >= 0)
        let chunk = [UInt8](repeating: 7, count: 4096)
        while chunk.withUnsafeBytes({ write(filler, $0.baseAddress, $0.count) }) > 0 {}
        Foundation.close(filler)

        let full = await F.failure {
            try await F.setItems(tool, [F.item([F.representation("public.data", fd: try F.file(F.pattern(1 << 20)))])])
        }
        #expect(full?.name == "org.ferry.Error.TooLarge", "\(String(describing: full))")
        let cleared = await F.failure { _ = try await F.pasteboard(tool, "Clear") }
        #expect(cleared == nil, "Clear on a full disk: \(String(describing: cleared))")
        let clearedHistory = await F.failure { _ = try await F.pasteboard(tool, "ClearHistory") }
        #expect(clearedHistory == nil, "ClearHistory on a full disk: \(String(describing: clearedHistory))")
        #expect(Self.blobs(stateDir).isEmpty, "\(Self.blobs(stateDir))")
        #expect(try await F.items(tool).isEmpty)
        // The room made is there to use.
        try await F.setItems(tool, [F.item([F.representation("public.data", fd: try F.file(F.pattern(1 << 20)))])])
        await tool.close(gracePeriod: .zero)
    }
}
