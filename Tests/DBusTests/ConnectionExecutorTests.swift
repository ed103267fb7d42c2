import DBus
import FerryTestSupport
import Foundation
import Testing

/// Calls made from a task running on the connection's own executor (no thread hops): the same
/// behaviour as from the global pool.
@Suite("Calls on the connection's executor")
struct ConnectionExecutorTests {
    /// Runs `body` in a task that prefers `f.client`'s executor.
    func onExecutor<R: Sendable>(_ f: CallFixture, _ body: @escaping @Sendable () async throws -> R) async throws -> R {
        try await withTaskExecutorPreference(f.client.taskExecutor) { try await body() }
    }

    @Test("calls, remote errors and concurrent calls behave as from the pool")
    func callsAndErrors() async throws {
        let f = try await CallFixture()
        let sum = try await onExecutor(f) { try await f.call("Add", [.int32(40), .int32(2)]) }
        #expect(sum == [.int32(42)])
        let error = await #expect(throws: DBusError.self) {
            try await onExecutor(f) { try await f.call("Fail", ["org.ferry.Error.NotFound", "gone"]) }
        }
        #expect(error?.name.rawValue == "org.ferry.Error.NotFound")
        let sums = try await onExecutor(f) {
            try await withThrowingTaskGroup(of: [DBusValue].self) { group in
                for n in 0..<20 { group.addTask { try await f.call("Add", [.int32(Int32(n)), .int32(1)]) } }
                return try await group.reduce(into: Set<[DBusValue]>()) { $0.insert($1) }
            }
        }
        #expect(sums == Set((1...20).map { [DBusValue.int32(Int32($0))] }))
        await f.close()
    }

    @Test("a timeout fails with NoReply")
    func timeout() async throws {
        let f = try await CallFixture()
        let error = await #expect(throws: DBusError.self) {
            try await onExecutor(f) { try await f.call("Sleep", [.uint32(3_000)], timeout: .milliseconds(200)) }
        }
        #expect(error?.name == .noReply)
        await f.close()
    }

    @Test("cancelling a call, or a task cancelled before it calls, never waits for the reply")
    func cancellation() async throws {
        let f = try await CallFixture()
        let start = ContinuousClock.now
        let task = Task { try await onExecutor(f) { try await f.call("Sleep", [.uint32(5_000)]) } }
        try await Task.sleep(for: .milliseconds(100))
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        let cancelledFirst = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await onExecutor(f) { try await f.call("Sleep", [.uint32(5_000)]) }
        }
        await #expect(throws: CancellationError.self) { try await cancelledFirst.value }
        #expect(ContinuousClock.now - start < .seconds(4), "neither waited for the 5 s handler")
        #expect(try await onExecutor(f) { try await f.call("Add", [.int32(3), .int32(4)]) } == [.int32(7)])
        await f.close()
    }

    @Test("closing the connection fails a call in flight with Disconnected")
    func closeWhileInFlight() async throws {
        let f = try await CallFixture()
        let task = Task { try await onExecutor(f) { try await f.call("Sleep", [.uint32(5_000)]) } }
        try await Task.sleep(for: .milliseconds(100))
        await f.client.close()
        let error = await #expect(throws: DBusError.self) { try await task.value }
        #expect(error?.name == .disconnected)
        await f.service.close(gracePeriod: .zero)
    }
}
