import Foundation
import FerryModel
import Synchronization
import Testing

@Suite struct FileIdentityTests {
    private func scratch(_ name: String, _ data: Data) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-identity-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let url = folder.appendingPathComponent(name)
        try data.write(to: url)
        return url
    }

    @Test func sayWhatChanged() throws {
        let url = try scratch("a.bin", Data(repeating: 1, count: 100))
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let first = try #require(FileIdentity(path: url.path))
        #expect(FileIdentity(path: url.path)?.change(since: first) == nil)

        let handle = try FileHandle(forWritingTo: url)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data([2]))
        try handle.close()
        #expect(FileIdentity(path: url.path)?.change(since: first) == "its size went from 100 to 101 bytes")

        let grown = try #require(FileIdentity(path: url.path))
        usleep(20_000)
        let fd = open(url.path, O_WRONLY)
        defer { close(fd) }
        var byte: UInt8 = 9
        #expect(pwrite(fd, &byte, 1, 0) == 1)
        #expect(FileIdentity(descriptor: fd)?.change(since: grown) == "it was modified")

        let other = url.deletingLastPathComponent().appendingPathComponent("b.bin")
        try Data(repeating: 1, count: 101).write(to: other)
        #expect(rename(other.path, url.path) == 0)
        #expect(FileIdentity(path: url.path)?.change(since: grown) == "it was replaced by another file")

        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        #expect(FileIdentity(descriptor: ends[0]) == nil, "a pipe has no identity to compare")
        close(ends[0]); close(ends[1])
    }

    @Test func aFileRewrittenWhileItIsLoadedIsUnavailable() async throws {
        let url = try scratch("big.bin", Data(repeating: 7, count: 32 << 20))
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        var provider = ItemProvider()
        provider.register(ItemProvider.Representation(contentType: .data, source: .file(url, openInPlace: false), estimatedSize: nil))
        let stop = StopFlag()
        let path = url.path
        let rewriter = Thread {
            let fd = open(path, O_WRONLY)
            defer { close(fd) }
            var chunk = [UInt8](repeating: 3, count: 1 << 16)
            var offset: off_t = 0
            while !stop.value.load(ordering: .relaxed) {
                chunk[0] &+= 1
                _ = chunk.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, offset) }
                offset = (offset + off_t(chunk.count)) % off_t(32 << 20)
            }
        }
        rewriter.start()
        defer { stop.value.store(true, ordering: .relaxed) }
        let error = await #expect(throws: FerryModelError.self) { _ = try await provider.loadData(for: .data) }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("changed while it was read") == true, "\(String(describing: error))")
    }
}

private final class StopFlag: Sendable {
    let value = Atomic(false)
}
