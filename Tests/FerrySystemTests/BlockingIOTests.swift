import FerrySystem
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("Blocking I/O and the descriptor watcher")
struct BlockingIOTests {
    let clock = ContinuousClock()

    struct Refused: Error, Equatable {}

    @Test func workHandsBackItsResultOrError() async throws {
        #expect(await BlockingIO.run { 6 * 7 } == 42)
        await #expect(throws: Refused.self) {
            try await BlockingIO.run { () throws(Refused) -> Int in throw Refused() }
        }
    }

    /// Many pieces of work blocked at once all make progress: the pool is not the cooperative
    /// pool's handful of threads (on the cooperative pool, the sixteen reads would take every
    /// thread and the task that writes the bytes would never run: the time limit fails it).
    @Test(.timeLimit(.minutes(1))) func sixteenBlockedReadsDoNotStarveEachOther() async throws {
        let pipes = try (0..<16).map { _ in try TestPipe() }
        try await withThrowingTaskGroup(of: Int.self) { group in
            for pipe in pipes {
                group.addTask {
                    await BlockingIO.run {
                        var byte: UInt8 = 0
                        return Glibc.read(pipe.read, &byte, 1)  // blocks until the byte below
                    }
                }
            }
            try await Task.sleep(for: .milliseconds(200))
            for pipe in pipes { pipe.send([7]) }
            var done = 0
            for try await n in group {
                #expect(n == 1)
                done += 1
            }
            #expect(done == 16)
        }
    }

    /// Cancelling the task stops a read waiting on a silent pipe at once, not at its deadline.
    @Test func cancellingTheTaskWakesAPollingThread() async throws {
        let pipe = try TestPipe()
        let read = Task {
            try await BlockingIO.run(cancellable: { (wake) throws(SystemCallError) in
                try wake.poll(pipe.read, until: .now + .seconds(30))
            })
        }
        try await Task.sleep(for: .milliseconds(200))
        let cancelledAt = clock.now
        read.cancel()
        #expect(try await read.value == .woken)
        #expect(clock.now - cancelledAt < .seconds(2))
    }

    @Test func aTaskCancelledBeforeItsWorkStartsIsWokenAtTheFirstPoll() async throws {
        let pipe = try TestPipe()
        let read = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await BlockingIO.run(cancellable: { (wake) throws(SystemCallError) in
                try wake.poll(pipe.read, until: .now + .seconds(30))
            })
        }
        #expect(try await read.value == .woken)
    }

    @Test func theWatcherSeesDataTheDeadlineAndTheReaderLeaving() async throws {
        let pipe = try TestPipe()
        let silentFor = clock.now
        #expect(try await DescriptorWatcher.shared.waitUntilReadable(pipe.read, timeout: .milliseconds(150)) == false)
        #expect(clock.now - silentFor >= .milliseconds(140))
        Thread.detached(after: .milliseconds(100)) { pipe.send([1]) }
        #expect(try await DescriptorWatcher.shared.waitUntilReadable(pipe.read, timeout: .seconds(30)) == true)

        Thread.detached(after: .milliseconds(100)) { pipe.closeRead() }
        let hangUp = clock.now
        try await DescriptorWatcher.shared.waitForHangUp(pipe.write)
        #expect(clock.now - hangUp < .seconds(10))
    }

    @Test func aRegularFileIsReadableAtOnce() async throws {
        var name = Array("/tmp/ferry-system-test-XXXXXX".utf8CString)
        let fd = mkstemp(&name)
        try #require(fd >= 0)
        defer {
            unlink(name)
            close(fd)
        }
        #expect(try await DescriptorWatcher.shared.waitUntilReadable(fd, timeout: .milliseconds(1)) == true)
    }

    @Test func cancellingAWatchThrowsAtOnce() async throws {
        let pipe = try TestPipe()
        let watch = Task { try await DescriptorWatcher.shared.waitUntilReadable(pipe.read, timeout: .seconds(30)) }
        try await Task.sleep(for: .milliseconds(100))
        let cancelledAt = clock.now
        watch.cancel()
        await #expect(throws: CancellationError.self) { _ = try await watch.value }
        #expect(clock.now - cancelledAt < .seconds(2))
    }

    /// Two hundred silent pipes watched at once cost entries in one poll, not a thread each.
    @Test func twoHundredWatchedPipesTakeNoThreadEach() async throws {
        let pipes = try (0..<200).map { _ in try TestPipe() }
        let before = Self.threads()
        let watches = pipes.map { pipe in
            Task { try await DescriptorWatcher.shared.waitUntilReadable(pipe.read, timeout: .seconds(30)) }
        }
        try await Task.sleep(for: .milliseconds(300))
        let during = Self.threads()
        #expect(during - before < 50, "\(before) threads before, \(during) with 200 watches")
        for pipe in pipes { pipe.send([1]) }
        for watch in watches { #expect(try await watch.value == true) }
    }

    /// This process's thread count, from /proc/self/status.
    static func threads() -> Int {
        guard let file = fopen("/proc/self/status", "r") else { return 0 }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 256)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if text.hasPrefix("Threads:") { return Int(text.dropFirst(8).trimmingPrefix(while: \.isWhitespace).prefix { $0.isNumber }) ?? 0 }
        }
        return 0
    }
}
