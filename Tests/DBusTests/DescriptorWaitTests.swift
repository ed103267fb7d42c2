@testable import DBus
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// `Connection.waitForDescriptor`: a descriptor polled on the connection's thread beside its
/// socket, resumed when ready, cancelled at once, failed when the connection closes.
@Suite("Waiting for a descriptor on the connection's thread")
struct DescriptorWaitTests {
    /// A pipe's two ends, closed by `close()`.
    struct Pipe {
        let read: Int32, write: Int32

        init() throws {
            var ends: [Int32] = [0, 0]
            guard pipe(&ends) == 0 else { throw POSIXError(.EMFILE) }
            (read, write) = (ends[0], ends[1])
        }

        func close() {
            Glibc.close(read)
            Glibc.close(write)
        }
    }

    /// Whether something happened, set from another task.
    final class Flag: Sendable {
        private let value = Atomic<Bool>(false)
        var isSet: Bool { value.load(ordering: .relaxed) }
        func set() { value.store(true, ordering: .relaxed) }
    }

    @Test("a pipe is resumed once written, not before, and on the connection's thread when waited for from its executor")
    func readable() async throws {
        let f = try await CallFixture()
        let pipe = try Pipe()
        defer { pipe.close() }
        let resumed = Flag()
        let client = f.client
        let waiting = Task {
            try await withTaskExecutorPreference(client.taskExecutor) {
                let revents = try await client.waitForDescriptor(pipe.read, events: Int16(POLLIN))
                resumed.set()
                return (revents, client.loop.onOwnerThread)
            }
        }
        try await Task.sleep(for: .milliseconds(150))
        #expect(!resumed.isSet, "nothing was written yet")
        // The connection keeps serving calls while the wait is polled.
        #expect(try await f.call("Add", [.int32(2), .int32(3)]) == [.int32(5)])
        #expect(write(pipe.write, "x", 1) == 1)
        let (revents, onOwnerThread) = try await waiting.value
        #expect(revents & Int16(POLLIN) != 0)
        #expect(onOwnerThread, "resumed on the connection's thread")
        await f.close()
    }

    @Test("a write end reports its reader's hang-up to a wait for no events")
    func hangUp() async throws {
        let f = try await CallFixture()
        let pipe = try Pipe()
        let client = f.client
        let waiting = Task { try await client.waitForDescriptor(pipe.write, events: 0) }
        try await Task.sleep(for: .milliseconds(50))
        Glibc.close(pipe.read)
        let revents = try await waiting.value
        #expect(revents & Int16(POLLERR | POLLHUP) != 0)
        Glibc.close(pipe.write)
        await f.close()
    }

    @Test("several waits are resumed each when its own descriptor is ready")
    func independentWaits() async throws {
        let f = try await CallFixture()
        let pipes = try (0..<3).map { _ in try Pipe() }
        defer { pipes.forEach { $0.close() } }
        let client = f.client
        let tasks = pipes.map { pipe in Task { try await client.waitForDescriptor(pipe.read, events: Int16(POLLIN)) } }
        try await Task.sleep(for: .milliseconds(50))
        #expect(write(pipes[1].write, "x", 1) == 1)
        #expect(try await tasks[1].value & Int16(POLLIN) != 0)
        try await Task.sleep(for: .milliseconds(50))
        #expect(write(pipes[2].write, "x", 1) == 1)
        #expect(write(pipes[0].write, "x", 1) == 1)
        #expect(try await tasks[2].value & Int16(POLLIN) != 0)
        #expect(try await tasks[0].value & Int16(POLLIN) != 0)
        await f.close()
    }

    @Test("cancelling a wait, or a task cancelled before it waits, throws CancellationError at once")
    func cancellation() async throws {
        let f = try await CallFixture()
        let pipe = try Pipe()
        defer { pipe.close() }
        let client = f.client
        let start = ContinuousClock.now
        let waiting = Task {
            try await withTaskExecutorPreference(client.taskExecutor) {
                try await client.waitForDescriptor(pipe.read, events: Int16(POLLIN))
            }
        }
        try await Task.sleep(for: .milliseconds(100))
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        let cancelledFirst = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await client.waitForDescriptor(pipe.read, events: Int16(POLLIN))
        }
        await #expect(throws: CancellationError.self) { try await cancelledFirst.value }
        #expect(ContinuousClock.now - start < .seconds(2))
        // A byte written now wakes nobody, and the connection still serves calls.
        #expect(write(pipe.write, "x", 1) == 1)
        #expect(try await f.call("Add", [.int32(1), .int32(1)]) == [.int32(2)])
        await f.close()
    }

    @Test("closing the connection fails the waits in progress, and later waits, with Disconnected")
    func closing() async throws {
        let f = try await CallFixture()
        let pipe = try Pipe()
        defer { pipe.close() }
        let client = f.client
        let waiting = Task { try await client.waitForDescriptor(pipe.read, events: Int16(POLLIN)) }
        try await Task.sleep(for: .milliseconds(50))
        await f.close()
        let error = await #expect(throws: DBusError.self) { try await waiting.value }
        #expect(error?.name == .disconnected)
        let later = await #expect(throws: DBusError.self) {
            try await client.waitForDescriptor(pipe.read, events: Int16(POLLIN))
        }
        #expect(later?.name == .disconnected)
    }
}
