import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// Files that change while Ferry reads them: a copy matches one version of the file or fails.
@Suite("ferry copy of a file that is being rewritten", .serialized)
struct FerryChangingFileTests {
    @Test("a file rewritten while the broker copies it is refused (status 4), and the pasteboard keeps what it had")
    func rewrittenDuringCopy() async throws {
        try await CLIBroker.with { broker in
            #expect(try await broker.ferry("copy", "--text", "before").succeeded)
            let file = try broker.file("changing.bin", noise(48 << 20, seed: 3))
            let rewriter = Rewriter(path: file.path)
            rewriter.start()
            let copy = try await broker.ferry("copy", "--type", "public.data", file.path, timeout: .seconds(60))
            rewriter.stop()
            #expect(rewriter.rounds > 0, "the file was not rewritten during the copy")
            #expect(copy.status == 4, "\(copy.summary)")
            #expect(copy.stderr.hasPrefix("ferry: ") && copy.stderr.contains("changed while it was read"), "\(copy.stderr)")
            #expect(copy.stderr.split(separator: "\n").count == 1)
            #expect(try await broker.ferry("paste").stdout == "before")
        }
    }

    @Test("the same file, left alone, is copied whole")
    func unchangedFileCopies() async throws {
        try await CLIBroker.with { broker in
            let data = noise(12 << 20, seed: 4)
            let file = try broker.file("still.bin", data)
            let copy = try await broker.ferry("copy", "--type", "public.data", file.path)
            #expect(copy.succeeded, "\(copy.summary)")
            let paste = try await broker.ferry("paste")
            #expect(firstDifference(paste.standardOutput, data) == nil)
        }
    }
}

/// Rewrites a file in place, 64 KiB at a time across its whole length, on a thread of its own
/// until stopped.
final class Rewriter: Sendable {
    let path: String
    private let state = Mutex((stopped: false, rounds: 0, done: false))

    init(path: String) { self.path = path }

    var rounds: Int { state.withLock { $0.rounds } }

    func start() {
        let thread = Thread { [self] in
            let fd = open(path, O_WRONLY)
            defer { if fd >= 0 { close(fd) } }
            var info = stat()
            guard fd >= 0, fstat(fd, &info) == 0 else { return }
            var chunk = [UInt8](repeating: 0, count: 64 << 10)
            var round: UInt8 = 0
            while !state.withLock({ $0.stopped }) {
                round &+= 1
                for i in chunk.indices { chunk[i] = round &+ UInt8(truncatingIfNeeded: i) }
                var offset: off_t = 0
                while offset < info.st_size, !state.withLock({ $0.stopped }) {
                    _ = chunk.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, offset) }
                    offset += off_t(chunk.count)
                }
                state.withLock { $0.rounds += 1 }
            }
            state.withLock { $0.done = true }
        }
        thread.start()
    }

    func stop() {
        state.withLock { $0.stopped = true }
        while !state.withLock({ $0.done }) { usleep(1000) }
    }
}
