import DBus
import FerryTestSupport
import Foundation
import Synchronization
import Testing

@Suite("Closing a connection gracefully")
struct ConnectionCloseTests {
    @Test("a handler running when the service closes still gets its reply out")
    func handlerInFlightReplies() async throws {
        let f = try await CallFixture()
        let started = Mutex(false)
        try f.service.export(Interface("org.ferry.Test.Slow") {
            Method("Hold", out: ["done": "b"]) { _ in
                started.withLock { $0 = true }
                try await Task.sleep(for: .milliseconds(300))
                return [true]
            }
        }, at: "/org/ferry/Test/Slow")
        let call = Task {
            try await f.client.call(destination: f.service.uniqueName, path: "/org/ferry/Test/Slow",
                                    interface: "org.ferry.Test.Slow", member: "Hold", timeout: .seconds(30))
        }
        #expect(await eventually(every: .milliseconds(5)) { started.withLock { $0 } })
        await f.service.close()
        #expect(try await call.value == [true], "the reply left before the connection closed")
        #expect(!f.service.isConnected)
        await f.client.close()
    }

    @Test("a handler that never finishes holds close() no longer than the grace period")
    func gracePeriodBoundsClose() async throws {
        let f = try await CallFixture()
        let call = Task { try await f.call("Sleep", [.uint32(10_000)], timeout: .seconds(30)) }
        try await Task.sleep(for: .milliseconds(100))
        // Whether or not the handler has started yet, close() returns within the grace period.
        let start = ContinuousClock.now
        await f.service.close(gracePeriod: .milliseconds(300))
        #expect(ContinuousClock.now - start < .seconds(3))
        await #expect(throws: DBusError.self) { try await call.value }
        await f.client.close()
    }
}
