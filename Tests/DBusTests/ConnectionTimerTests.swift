import FerryTestSupport
import Foundation
import Synchronization
import Testing
@testable import DBus

/// `Connection.schedule(after:_:)`: timers kept by the connection's loop.
@Suite("Timers on a connection's thread")
struct ConnectionTimerTests {
    @Test("a timer fires once, on the connection's thread, after its delay; a cancelled one never fires")
    func firesOrIsCancelled() async throws {
        let connection = try await Connection(address: try PrivateBus.shared().address)
        let fired = Mutex<[(String, Bool, ContinuousClock.Instant)]>([])
        let loop = connection.loop
        let start = ContinuousClock.now
        let kept = connection.schedule(after: .milliseconds(50)) {
            fired.withLock { $0.append(("kept", loop.onOwnerThread, .now)) }
        }
        let cancelled = connection.schedule(after: .milliseconds(50)) {
            fired.withLock { $0.append(("cancelled", loop.onOwnerThread, .now)) }
        }
        cancelled.cancel()
        // Cancelled on the connection's thread, where nothing else can slip in between.
        let onThread = await withTaskExecutorPreference(connection.taskExecutor) {
            let timer = connection.schedule(after: .milliseconds(20)) {
                fired.withLock { $0.append(("cancelled on the thread", true, .now)) }
            }
            timer.cancel()
            return loop.onOwnerThread
        }
        #expect(onThread)
        try await Task.sleep(for: .milliseconds(300))
        let record = fired.withLock { $0 }
        #expect(record.map(\.0) == ["kept"])
        #expect(record.first?.1 == true, "fired on the connection's thread")
        #expect(record.first.map { $0.2 - start >= .milliseconds(50) } == true, "not before its delay")
        kept.cancel()  // after it fired: nothing happens
        await connection.close()
    }
}
