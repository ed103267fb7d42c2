import DBus
import Dispatch
import FerryBroker
import FerryModel
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// A source app on its own connection: a real `org.ferry.Client1` object that writes promised
/// bytes into the fd the broker sends, as the `Ferry` client library does.
private final class Source: Sendable {
    enum Behaviour: Sendable {
        /// Writes these bytes, closes, replies with the count.
        case bytes([UInt8])
        /// Writes `count` bytes of `Source.pattern`, closes, replies with the count.
        case pattern(count: Int)
        /// Replies with an org.ferry.Error.NotFound carrying this message, writing nothing.
        case fail(String)
        /// Writes `count` bytes, closes the fd, then drops off the bus without replying.
        case quit(after: Int)
        /// Never writes, never replies (for a while).
        case hang
        /// Writes these bytes, closes, and replies with a count that is not theirs.
        case miscount([UInt8], says: UInt64)
        /// Writes `count` bytes, then holds the pipe open without writing for `seconds` before
        /// closing it and replying with the count.
        case stall(after: Int, seconds: Int)
    }

    static let path: ObjectPath = "/org/ferry/Client"
    let connection: Connection
    let behaviours = Mutex<[String: Behaviour]>([:])
    let requests = Mutex<[String]>([])

    init(bus: PrivateBus) async throws {
        // A reader that stops early breaks the pipe: a source must take EPIPE, not die of SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        connection = try await Connection(address: bus.address)
        let interface = Interface("org.ferry.Client1") {
            Method("ProvideRepresentation", in: ["item_id": "s", "type": "s", "fd": "h", "options": "a{sv}"],
                   out: ["size": "t"]) { [weak self] call in
                guard let self else { throw DBusError(.failed, "gone") }
                return try await self.provide(call)
            }
        }
        try connection.export(interface, at: Self.path)
    }

    /// The byte at `index` of a pattern payload.
    static func pattern(_ index: Int) -> UInt8 { UInt8(truncatingIfNeeded: index &* 31 &+ (index >> 13)) }

    func promise(_ item: UUID, _ behaviour: Behaviour) {
        behaviours.withLock { $0[item.uuidString] = behaviour }
    }

    private func provide(_ call: MethodCall) async throws -> [DBusValue] {
        let (itemID, type, fd, _) = try call.arguments(String.self, String.self, FileDescriptor.self,
                                                       [String: DBusValue].self)
        requests.withLock { $0.append("\(itemID) \(type)") }
        guard let behaviour = behaviours.withLock({ $0[itemID] }) else {
            throw DBusError("org.ferry.Error.NotFound", "no item \(itemID)")
        }
        switch behaviour {
        case .bytes(let bytes):
            try await Self.offThread { try fd.write(all: bytes) }
            fd.close()
            return [.uint64(UInt64(bytes.count))]
        case .pattern(let count):
            try await Self.offThread { try Self.writePattern(fd, count: count) }
            fd.close()
            return [.uint64(UInt64(count))]
        case .miscount(let bytes, let said):
            try await Self.offThread { try fd.write(all: bytes) }
            fd.close()
            return [.uint64(said)]
        case .fail(let message):
            throw DBusError("org.ferry.Error.NotFound", message)
        case .quit(let count):
            try await Self.offThread { try Self.writePattern(fd, count: count) }
            fd.close()
            // Drop off the bus without replying. (The call's message and arguments hold copies
            // of the fd until this handler returns, as a dying process's would until it exits.)
            await connection.close(gracePeriod: .zero)
            throw DBusError(.failed, "quit")
        case .hang:
            try await Task.sleep(for: .seconds(2))
            throw DBusError(.failed, "hung")
        case .stall(let count, let seconds):
            try await Self.offThread { try Self.writePattern(fd, count: count) }
            try await Task.sleep(for: .seconds(seconds))
            fd.close()
            return [.uint64(UInt64(count))]
        }
    }

    private static func writePattern(_ fd: FileDescriptor, count: Int) throws {
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var offset = 0
        while offset < count {
            let n = min(chunk.count, count - offset)
            for i in 0..<n { chunk[i] = pattern(offset + i) }
            try fd.write(all: chunk[0..<n])
            offset += n
        }
    }

    /// Runs blocking pipe I/O on a Dispatch thread, off the cooperative pool.
    static func offThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
        }
    }
}

/// What a reader got out of the pipe.
private struct Received: Sendable {
    var count = 0
    var matchesPattern = true
    var bytes: [UInt8] = []
}

/// Reads `fd` to end of file on a Dispatch thread, checking each byte against the pattern.
private func drain(_ fd: FileDescriptor, keep: Bool = false) async throws -> Received {
    try await Source.offThread {
        var received = Received()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        try fd.withRawValue { raw in
            while true {
                let n = chunk.withUnsafeMutableBytes { read(raw, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { break }
                for i in 0..<n where chunk[i] != Source.pattern(received.count + i) { received.matchesPattern = false }
                if keep { received.bytes.append(contentsOf: chunk[0..<n]) }
                received.count += n
            }
        }
        fd.close()
        return received
    }
}

@Suite("Promise relay", .serialized)
struct PromiseRelayTests {
    let bus: PrivateBus
    let reader: BusName = ":1.424242"

    init() throws { bus = try PrivateBus.shared() }

    private func relay(timeout: Duration = .seconds(60), retention: Duration = .seconds(60))
        async throws -> (PromiseRelay, Connection)
    {
        let broker = try await Connection(address: bus.address)
        return (PromiseRelay(connection: broker, timeout: timeout, retention: retention), broker)
    }

    private func expectError(_ code: FerryModelError.Code, containing text: String,
                             _ body: () async throws -> Void) async {
        do {
            try await body()
            Issue.record("expected \(code)")
        } catch let error as FerryModelError {
            #expect(error.code == code, "\(error)")
            #expect(error.message.contains(text), "\(error)")
        } catch {
            Issue.record("expected FerryModelError \(code), got \(error)")
        }
    }

    @Test func smallPayloadArrivesIntactAndFinishReportsItsSize() async throws {
        let source = try await Source(bus: bus)
        let (relay, broker) = try await relay()
        let item = UUID()
        let text = Array("hello, promised world".utf8)
        source.promise(item, .bytes(text))

        let (fd, transfer) = try await relay.start(owner: source.connection.uniqueName, clientPath: Source.path,
                                                   itemID: item, type: .utf8PlainText,
                                                   estimatedSize: Int64(text.count), reader: reader)
        #expect(!transfer.isEmpty)
        // Estimated to fit a pipe as made: not resized.
        #expect((fd.pipeCapacity ?? 0) <= PromiseRelay.defaultPipeSize)
        let received = try await drain(fd, keep: true)
        #expect(received.bytes == text)
        #expect(try await relay.finish(transfer, caller: reader) == UInt64(text.count))
        #expect(source.requests.withLock { $0 } == ["\(item.uuidString) public.utf8-plain-text"])
        await broker.close()
        await source.connection.close()
    }

    @Test func aSmallPromiseTheSourceWritesAtOnceComesInlineOtherwiseThroughThePipe() async throws {
        let source = try await Source(bus: bus)
        let (relay, broker) = try await relay()
        let owner = source.connection.uniqueName
        func read(_ behaviour: Source.Behaviour, within window: Duration = .seconds(10)) async throws -> PromiseRelay.Delivery {
            let item = UUID()
            source.promise(item, behaviour)
            return try await relay.read(owner: owner, clientPath: Source.path, itemID: item, type: .utf8PlainText,
                                        estimatedSize: 24, reader: reader, waitingAtMost: window)
        }
        let text = Array("hello, promised world".utf8)
        guard case .bytes(let bytes) = try await read(.bytes(text)) else {
            Issue.record("a quick source's bytes did not come inline")
            return
        }
        #expect(bytes == text)
        #expect(await relay.count == 0, "nothing left to finish")

        // A count that is not what the pipe holds: the reader gets the pipe, untouched, and the count.
        guard case .stream(let miscounted, let transfer) = try await read(.miscount(text, says: 5)) else {
            Issue.record("a miscounted promise came inline")
            return
        }
        #expect(try await drain(miscounted, keep: true).bytes == text)
        #expect(try await relay.finish(transfer, caller: reader) == 5)

        // A source still writing when the wait ends: the pipe, and the transfer finishes later.
        let started = ContinuousClock.now
        guard case .stream(let slow, let slowTransfer) = try await read(.stall(after: 10, seconds: 1),
                                                                          within: .milliseconds(100)) else {
            Issue.record("a slow source's bytes came inline")
            return
        }
        #expect(ContinuousClock.now - started < .milliseconds(900), "the read did not wait for the source")
        #expect(try await drain(slow).count == 10)
        #expect(try await relay.finish(slowTransfer, caller: reader) == 10)
        #expect(await relay.count == 2)

        await expectError(.unavailable, containing: "the document was closed") {
            _ = try await read(.fail("the document was closed"))
        }

        // A drag's pasteboard that goes while the read waits cancels it then and there.
        let item = UUID()
        source.promise(item, .hang)
        let waiting = Task {
            try await relay.read(owner: owner, clientPath: Source.path, itemID: item, type: .utf8PlainText,
                                 estimatedSize: 24, reader: reader, pasteboard: "drag-1", waitingAtMost: .seconds(10))
        }
        try await Task.sleep(for: .milliseconds(100))
        let cancelledAt = ContinuousClock.now
        relay.cancelTransfers(ofPasteboard: "drag-1")
        await expectError(.cancelled, containing: "cancelled") { _ = try await waiting.value }
        #expect(ContinuousClock.now - cancelledAt < .seconds(1), "not once the source gave up (2 s)")
        #expect(await relay.count == 2, "the cancelled read left nothing behind")
        await broker.close()
        await source.connection.close()
    }

    @Test func sixtyFourMiBStreamThroughThePipeIntact() async throws {
        let source = try await Source(bus: bus)
        let (relay, broker) = try await relay()
        let item = UUID()
        let size = 64 << 20
        source.promise(item, .pattern(count: size))

        let clock = ContinuousClock()
        let started = clock.now
        let (fd, transfer) = try await relay.start(owner: source.connection.uniqueName, clientPath: Source.path,
                                                   itemID: item, type: .data, reader: reader)
        // No estimate: the larger pipe (as large as /proc/sys/fs/pipe-max-size allows).
        #expect((fd.pipeCapacity ?? 0) > PromiseRelay.defaultPipeSize)
        let received = try await drain(fd)
        let elapsed = clock.now - started
        #expect(received.count == size)
        #expect(received.matchesPattern)
        #expect(try await relay.finish(transfer, caller: reader) == UInt64(size))
        print("PromiseRelay: 64 MiB through the pipe in \(elapsed)")
        await broker.close()
        await source.connection.close()
    }

    @Test func aSourceErrorIsUnavailableWithItsMessage() async throws {
        let source = try await Source(bus: bus)
        let (relay, broker) = try await relay()
        let item = UUID()
        source.promise(item, .fail("the document was closed"))
        let owner = source.connection.uniqueName
        let (fd, transfer) = try await relay.start(owner: owner, clientPath: Source.path,
                                                   itemID: item, type: .utf8PlainText, reader: reader)
        #expect(try await drain(fd).count == 0, "the reader sees end of file, no bytes")
        await expectError(.unavailable, containing: "the document was closed") {
            _ = try await relay.finish(transfer, caller: reader)
        }
        await expectError(.unavailable, containing: "the source \(owner.rawValue) failed") {
            _ = try await relay.finish(transfer, caller: reader)
        }
        await broker.close()
        await source.connection.close()
    }

    @Test func aSourceThatQuitsMidTransferEndsTheStreamEarlyAndIsUnavailable() async throws {
        let source = try await Source(bus: bus)
        let (relay, broker) = try await relay()
        let item = UUID()
        source.promise(item, .quit(after: 3 << 20))
        let (fd, transfer) = try await relay.start(owner: source.connection.uniqueName, clientPath: Source.path,
                                                   itemID: item, type: .data, reader: reader)
        let received = try await drain(fd)
        #expect(received.count == 3 << 20, "end of file right after what the source wrote")
        #expect(received.matchesPattern)
        await expectError(.unavailable, containing: "went away mid-transfer") {
            _ = try await relay.finish(transfer, caller: reader)
        }
        await broker.close()
    }

    @Test func aSourceNotOnTheBusIsUnavailable() async throws {
        let (relay, broker) = try await relay()
        let gone = try await Connection(address: bus.address)
        let owner = gone.uniqueName
        await gone.close()
        let (fd, transfer) = try await relay.start(owner: owner, clientPath: Source.path, itemID: UUID(),
                                                   type: .utf8PlainText, reader: reader)
        #expect(try await drain(fd).count == 0)
        await expectError(.unavailable, containing: "went away") {
            _ = try await relay.finish(transfer, caller: reader)
        }
        await broker.close()
    }

    @Test func onlyTheReaderWhoStartedATransferMayFinishIt() async throws {
        let source = try await Source(bus: bus)
        let (relay, broker) = try await relay()
        let item = UUID()
        source.promise(item, .bytes([1, 2, 3]))
        let (fd, transfer) = try await relay.start(owner: source.connection.uniqueName, clientPath: Source.path,
                                                   itemID: item, type: .data, reader: reader)
        _ = try await drain(fd)
        await expectError(.notFound, containing: "no transfer") {
            _ = try await relay.finish(transfer, caller: ":1.999999")
        }
        await expectError(.notFound, containing: "no transfer") {
            _ = try await relay.finish("not-a-transfer", caller: reader)
        }
        #expect(try await relay.finish(transfer, caller: reader) == 3)
        await broker.close()
        await source.connection.close()
    }

    @Test func aSilentSourceTimesOut() async throws {
        let source = try await Source(bus: bus)
        let (relay, broker) = try await relay(timeout: .milliseconds(300))
        let item = UUID()
        source.promise(item, .hang)
        let (fd, transfer) = try await relay.start(owner: source.connection.uniqueName, clientPath: Source.path,
                                                   itemID: item, type: .data, reader: reader)
        let started = ContinuousClock.now
        await expectError(.timeout, containing: "did not finish writing public.data within 0.3 s") {
            _ = try await relay.finish(transfer, caller: reader)
        }
        #expect(ContinuousClock.now - started < .seconds(3))
        fd.close()

        let relaxed = PromiseRelay(connection: broker)  // 60 s, but fetch gets its own timeout
        await expectError(.timeout, containing: "within 0.2 s") {
            _ = try await relaxed.fetch(owner: source.connection.uniqueName, clientPath: Source.path, itemID: item,
                                        type: .utf8PlainText, limit: 100, timeout: .milliseconds(200))
        }
        await broker.close()
        await source.connection.close(gracePeriod: .zero)
    }

    @Test func endedTransfersAreForgottenAfterTheRetention() async throws {
        let source = try await Source(bus: bus)
        let (relay, broker) = try await relay(retention: .milliseconds(200))
        let item = UUID()
        source.promise(item, .bytes([7]))
        let (fd, transfer) = try await relay.start(owner: source.connection.uniqueName, clientPath: Source.path,
                                                   itemID: item, type: .data, reader: reader)
        _ = try await drain(fd)
        #expect(try await relay.finish(transfer, caller: reader) == 1)
        #expect(await relay.count == 1)
        // Asked again once the call has surely ended: the kept answer, not the task, gives it.
        try await Task.sleep(for: .milliseconds(50))
        #expect(try await relay.finish(transfer, caller: reader) == 1)
        try await Task.sleep(for: .milliseconds(400))
        await expectError(.notFound, containing: "no transfer") {
            _ = try await relay.finish(transfer, caller: reader)
        }
        #expect(await relay.count == 0)
        await broker.close()
        await source.connection.close()
    }

    @Test func fetchReadsAtMostTheLimit() async throws {
        let source = try await Source(bus: bus)
        let (relay, broker) = try await relay()
        let owner = source.connection.uniqueName
        let big = UUID(), small = UUID(), failing = UUID()
        source.promise(big, .pattern(count: 8 << 20))
        source.promise(small, .bytes(Array("call +1 555 123 4567".utf8)))
        source.promise(failing, .fail("no longer there"))

        let prefix = try await relay.fetch(owner: owner, clientPath: Source.path, itemID: big, type: .data, limit: 1000)
        #expect(prefix == (0..<1000).map(Source.pattern))
        let whole = try await relay.fetch(owner: owner, clientPath: Source.path, itemID: small,
                                          type: .utf8PlainText, limit: 65536)
        #expect(String(decoding: whole, as: UTF8.self) == "call +1 555 123 4567")
        await expectError(.unavailable, containing: "no longer there") {
            _ = try await relay.fetch(owner: owner, clientPath: Source.path, itemID: failing,
                                      type: .utf8PlainText, limit: 100)
        }
        #expect(await relay.count == 0, "fetches are not transfers")
        await broker.close()
        await source.connection.close()
    }

    @Test func streamHandsEveryChunkToTheSinkAndRethrowsWhatTheSinkThrows() async throws {
        let source = try await Source(bus: bus)
        let (relay, broker) = try await relay()
        let owner = source.connection.uniqueName
        let big = UUID(), failing = UUID()
        source.promise(big, .pattern(count: 3 << 20 + 17))
        source.promise(failing, .fail("no longer there"))

        let received = Mutex<[UInt8]>([])
        let count = try await relay.stream(owner: owner, clientPath: Source.path, itemID: big, type: .data) { chunk in
            received.withLock { $0.append(contentsOf: chunk) }
        }
        #expect(count == 3 << 20 + 17)
        #expect(received.withLock { $0 } == (0..<(3 << 20 + 17)).map(Source.pattern))

        struct DiskFull: Error {}
        await #expect(throws: DiskFull.self) {
            _ = try await relay.stream(owner: owner, clientPath: Source.path, itemID: big, type: .data) { _ in throw DiskFull() }
        }
        await expectError(.unavailable, containing: "no longer there") {
            _ = try await relay.stream(owner: owner, clientPath: Source.path, itemID: failing, type: .data) { _ in }
        }
        #expect(await relay.count == 0, "streams are not transfers")
        await broker.close()
        await source.connection.close()
    }

    /// A stream whose task is cancelled ends at once as cancelled, whether it is still waiting
    /// for the source's first byte or reading a pipe that stalls mid-transfer: it neither holds
    /// a thread until the timeout (60 s here) nor waits for the source to close the pipe.
    @Test func aCancelledStreamEndsAtOnceWhileTheSourceStalls() async throws {
        let source = try await Source(bus: bus)
        let (relay, broker) = try await relay()
        let owner = source.connection.uniqueName
        let silent = UUID(), stalling = UUID()
        source.promise(silent, .hang)
        source.promise(stalling, .stall(after: 100_000, seconds: 6))

        let clock = ContinuousClock()
        // Still waiting for the first byte: cancelled 300 ms in.
        let waiting = Task {
            try await relay.stream(owner: owner, clientPath: Source.path, itemID: silent, type: .data) { _ in }
        }
        try await Task.sleep(for: .milliseconds(300))
        var cancelledAt = clock.now
        waiting.cancel()
        await expectError(.cancelled, containing: "was cancelled") { _ = try await waiting.value }
        #expect(clock.now - cancelledAt < .seconds(1), "waited \(clock.now - cancelledAt) after the cancellation")

        // Reading: cancelled once the first 100 000 bytes arrived and the source went quiet.
        let received = Mutex(0)
        let (firstBytes, arrived) = AsyncStream<Void>.makeStream()
        let reading = Task {
            try await relay.stream(owner: owner, clientPath: Source.path, itemID: stalling, type: .data) { chunk in
                let total = received.withLock { count in
                    count += chunk.count
                    return count
                }
                if total == 100_000 { arrived.yield() }
            }
        }
        for await _ in firstBytes { break }
        #expect(received.withLock { $0 } == 100_000)
        cancelledAt = clock.now
        reading.cancel()
        await expectError(.cancelled, containing: "was cancelled") { _ = try await reading.value }
        #expect(clock.now - cancelledAt < .seconds(1), "waited \(clock.now - cancelledAt) after the cancellation")
        await broker.close()
        await source.connection.close()
    }
}
