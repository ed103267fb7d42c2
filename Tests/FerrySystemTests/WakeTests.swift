import FerrySystem
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A pipe for one test, both ends closed at the end (the read end earlier when asked).
final class TestPipe: Sendable {
    private let readEnd: Mutex<Int32?>
    let write: Int32

    init() throws {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw SystemCallError("pipe") }
        readEnd = Mutex(ends[0])
        write = ends[1]
    }

    /// The read end (-1 once closed).
    var read: Int32 { readEnd.withLock { $0 ?? -1 } }

    func send(_ bytes: [UInt8]) { _ = bytes.withUnsafeBytes { Glibc.write(write, $0.baseAddress, $0.count) } }

    /// Closes the read end now: the writer's end then reports a hang-up.
    func closeRead() {
        readEnd.withLock { end in
            if let open = end { close(open) }
            end = nil
        }
    }

    deinit {
        closeRead()
        close(write)
    }
}

@Suite("Wake")
struct WakeTests {
    let clock = ContinuousClock()

    @Test func aTaskTakesASignalSentBeforeItWaitedAndOnlyOnce() async {
        let wake = Wake()
        wake.signal()
        #expect(wake.isSignalled)
        let started = clock.now
        await wake.wait(until: .now + .seconds(10))
        #expect(clock.now - started < .seconds(2), "a pending signal returns at once")
        #expect(!wake.isSignalled, "the wait took it")
        let again = clock.now
        await wake.wait(until: .now + .milliseconds(200))
        #expect(clock.now - again >= .milliseconds(190), "no second signal: the deadline ends the wait")
    }

    @Test func aSignalFromAnotherThreadWakesAWaitingTask() async {
        let wake = Wake()
        let started = clock.now
        Thread.detached(after: .milliseconds(100)) { wake.signal() }
        await wake.wait(until: .now + .seconds(10))
        #expect(clock.now - started < .seconds(5))
        #expect(!wake.isSignalled, "the waiter took it")
    }

    @Test func aCancelledTaskStopsWaiting() async {
        let wake = Wake()
        let waiter = Task { await wake.wait() }
        try? await Task.sleep(for: .milliseconds(50))
        let started = clock.now
        waiter.cancel()
        await waiter.value
        #expect(clock.now - started < .seconds(2))
    }

    @Test func aPollSeesDataTheWakeAndTheDeadline() throws {
        let pipe = try TestPipe()
        let wake = Wake()
        #expect(try wake.poll(pipe.read, until: .now + .milliseconds(100)) == .timedOut)
        pipe.send([1])
        #expect(try wake.poll(pipe.read, until: .now + .seconds(10)) == .ready)
        wake.signal()
        #expect(try wake.poll(pipe.read) == .woken, "a signal wins over a readable descriptor")
        #expect(try wake.poll(pipe.read) == .woken, "a poll does not take the signal")
        #expect(wake.take())
        #expect(!wake.take())
        #expect(try wake.poll(pipe.read, until: .now + .seconds(10)) == .ready, "taken: the descriptor again")
    }

    @Test func aSignalBeforeTheFirstPollStillWakesIt() throws {
        let pipe = try TestPipe()
        let wake = Wake()
        wake.signal()  // no pipe of the wake's yet
        #expect(try wake.poll(pipe.read, until: .now + .seconds(10)) == .woken)
    }

    @Test func aSignalFromAnotherThreadWakesABlockedPoll() async throws {
        let pipe = try TestPipe()
        let wake = Wake()
        let started = clock.now
        Thread.detached(after: .milliseconds(100)) { wake.signal() }
        let result = try await BlockingIO.run { () throws(SystemCallError) in try wake.poll(pipe.read, until: .now + .seconds(30)) }
        #expect(result == .woken)
        #expect(clock.now - started < .seconds(10))
    }

    @Test func aPollWithNoEventsSeesTheReaderLeave() async throws {
        let pipe = try TestPipe()
        let wake = Wake()
        Thread.detached(after: .milliseconds(100)) { pipe.closeRead() }
        let result = try await BlockingIO.run { () throws(SystemCallError) in
            try wake.poll(pipe.write, events: 0, until: .now + .seconds(30))
        }
        #expect(result == .ready)
    }
}

/// Runs `body` on a new thread after `delay` (a peer that is neither a task nor the pool).
enum Thread {
    static func detached(after delay: Duration, _ body: @escaping @Sendable () -> Void) {
        let work = Box(delay: delay, body: body)
        var thread = pthread_t()
        let made = pthread_create(&thread, nil, { context in
            let work = Unmanaged<Box>.fromOpaque(context!).takeRetainedValue()
            let (seconds, attoseconds) = work.delay.components
            usleep(UInt32(seconds * 1_000_000 + attoseconds / 1_000_000_000_000))
            work.body()
            return nil
        }, Unmanaged.passRetained(work).toOpaque())
        precondition(made == 0, "pthread_create failed")
        pthread_detach(thread)
    }

    private final class Box: Sendable {
        let delay: Duration
        let body: @Sendable () -> Void
        init(delay: Duration, body: @escaping @Sendable () -> Void) {
            self.delay = delay
            self.body = body
        }
    }
}
