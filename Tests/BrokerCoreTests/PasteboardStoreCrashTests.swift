import BrokerCore
import FerryModel
import FerryTestSupport
import Foundation
import Testing

@Suite struct PasteboardStoreCrashTests {
    /// A writer killed with SIGKILL right after acknowledging write k loses nothing it acknowledged,
    /// also when it writes without the WAL fsync (as remote items are written): that only gives
    /// up a power failure, and the history's dropped blobs still go only after a durable commit.
    @Test(arguments: [(3, true), (12, true), (12, false)])
    func acknowledgedWritesSurviveKillNine(_ k: Int, durable: Bool) async throws {
        let fixture = try StoreFixture()
        let writer = try await ServiceProcess(try BuiltProducts.executable("store-crash-writer"),
                                              (durable ? [] : ["--not-durable"]) + [fixture.directory],
                                              environment: ProcessInfo.processInfo.environment)
        try #require(await eventually(.seconds(30), every: .milliseconds(1)) { writer.standardOutput.contains("DONE \(k) ") },
                     "the writer did not reach write \(k): \(writer.standardError)")
        writer.send(SIGKILL)
        #expect(await writer.waitForExit() == 128 + SIGKILL)
        let acknowledged = writer.standardOutput.split(separator: "\n").filter { $0.hasPrefix("DONE ") }
        let last = try #require(acknowledged.last.flatMap { Int($0.split(separator: " ")[1]) })
        #expect(last >= k)

        let store = try fixture.open()
        #expect(try store.checkIntegrity().isEmpty)
        let changeCount = try store.changeCount(of: "general")
        // Every acknowledged write is there; at most one more committed before it could print.
        #expect(changeCount == UInt64(last) || changeCount == UInt64(last) + 1)
        let current = Int(changeCount)
        #expect(try firstText(store) == "write \(current)")
        let items = try store.items(in: "general")
        #expect(try bytes(store, items[0].id, .data) == Data(repeating: UInt8(truncatingIfNeeded: current), count: 200 * 1024))
        let history = try store.history()
        #expect(try history.map { try firstText(of: $0, store) } == (max(1, current - 10)..<current).reversed().map { "write \($0)" })
        // Every blob file is referenced: the current item's and one per history entry.
        #expect(try fixture.blobFiles().count == 1 + history.count)
    }
}
