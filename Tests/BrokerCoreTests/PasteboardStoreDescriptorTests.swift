import BrokerCore
import FerryModel
import FerryTestSupport
import Foundation
import Testing

/// Descriptors handed to the store: byte ranges of a shared fd, and a timeout for silent pipes.
@Suite("PasteboardStore: descriptor byte ranges and the read timeout")
struct PasteboardStoreDescriptorTests {
    static func temporaryFile(_ data: Data) throws -> Int32 {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-range-\(UUID().uuidString)").path
        try data.write(to: URL(fileURLWithPath: path))
        defer { unlink(path) }
        return open(path, O_RDONLY | O_CLOEXEC)
    }

    @Test("ranges of one fd: inline and blob, the shared offset untouched, a length past the end refused")
    func ranges() throws {
        let fixture = try StoreFixture()
        let store = try fixture.open()
        let whole = pattern(300_000)
        let fd = try Self.temporaryFile(whole)
        defer { close(fd) }
        try store.write([item([
            (.png, .fileRange(fd, offset: 0, length: 100_000)),
            (.jpeg, .fileRange(fd, offset: 100_000, length: 10)),
            (.tiff, .fileRange(fd, offset: 200_000, length: nil)),
        ])], to: "general")
        let id = try #require(try store.items(in: "general").first?.id)
        #expect(try firstDifference(bytes(store, id, .png), whole[0..<100_000]) == nil)
        #expect(try bytes(store, id, .jpeg) == whole[100_000..<100_010])
        #expect(try firstDifference(bytes(store, id, .tiff), whole[200_000...]) == nil)
        #expect(lseek(fd, 0, SEEK_CUR) == 0, "positional reads leave the descriptor's offset alone")

        let pastEnd = #expect(throws: FerryModelError.self) {
            try store.write([item([(.png, .fileRange(fd, offset: 299_990, length: 100))])], to: "general")
        }
        #expect(pastEnd?.code == .invalidArgument)
        #expect(pastEnd?.message.contains("ended after 10 of 100 bytes") == true)
        let negative = #expect(throws: FerryModelError.self) {
            try store.write([item([(.png, .fileRange(fd, offset: -1, length: nil))])], to: "general")
        }
        #expect(negative?.code == .invalidArgument)
        #expect(try store.items(in: "general").first?.id == id, "refused writes change nothing")
    }

    @Test("a pipe whose writer stays silent fails with Timeout after the store's descriptor timeout; an offset on a pipe is refused")
    func silentPipe() throws {
        let fixture = try StoreFixture()
        let store = try PasteboardStore.open(directory: fixture.directory, descriptorTimeout: .milliseconds(300))
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let started = ContinuousClock.now
        let silent = #expect(throws: FerryModelError.self) {
            try store.write([item([(.data, .fileDescriptor(fds[0]))])], to: "general")
        }
        #expect(silent?.code == .timeout)
        let waited = ContinuousClock.now - started
        #expect(waited >= .milliseconds(300) && waited < .seconds(5))

        // Some data, then silence: still a timeout (nothing arrives for the timeout).
        #expect(write(fds[1], "abc", 3) == 3)
        let stalled = #expect(throws: FerryModelError.self) {
            try store.write([item([(.data, .fileDescriptor(fds[0]))])], to: "general")
        }
        #expect(stalled?.code == .timeout)
        let seek = #expect(throws: FerryModelError.self) {
            try store.write([item([(.data, .fileRange(fds[0], offset: 0, length: nil))])], to: "general")
        }
        #expect(seek?.code == .invalidArgument)
        #expect(try store.items(in: "general").isEmpty)
        #expect(try store.blobFilesAreClean(fixture))
    }
}

extension PasteboardStore {
    /// True when no temporary blob files were left behind.
    fileprivate func blobFilesAreClean(_ fixture: StoreFixture) throws -> Bool {
        try fixture.blobFiles().allSatisfy { !$0.hasPrefix(".tmp-") }
    }
}
