import DBus
import FerryTestSupport
import Foundation
import Testing

/// What lives only in ferryd's memory — shares' and drags' pasteboards, sensitive writes — has a
/// budget per caller (`--caller-memory-budget`) and in all (`--memory-budget`); past either a
/// write is `TooLarge`, and when a share ends its bytes leave the process (its resident size
/// falls back).
@Suite("ferryd: the memory budget", .serialized)
struct MemoryBudgetTests {
    typealias F = FerrydFixture

    /// The resident size of process `pid`, in bytes (VmRSS).
    static func residentBytes(_ pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
        let kilobytes = try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
        return kilobytes * 1024
    }

    static func item(_ megabytes: Int, seed: UInt8, sensitive: Bool = false) throws -> DBusValue {
        F.item([F.representation("public.data", fd: try F.file(F.pattern(megabytes << 20, seed: seed)))],
               sensitive ? ["sensitive": .boolean(true)] : [:])
    }

    @Test("shares and sensitive items are refused past the caller's and the total budget; ended shares give their memory back")
    func budgetsAndRelease() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start(["--memory-budget", "32M", "--caller-memory-budget", "24M"])
        defer { daemon.stop() }
        let tool = try await fixture.connect()
        let other = try await fixture.connect()
        // A first share and end, so that the baseline includes what any share leaves behind.
        let warmUp = try await ShareBus.share(tool, [try Self.item(1, seed: 1)])
        try await ShareBus.end(tool, warmUp.share)
        let baseline = try Self.residentBytes(daemon.pid)

        let first = try await ShareBus.share(tool, [try Self.item(10, seed: 2)])
        let second = try await ShareBus.share(tool, [try Self.item(10, seed: 3)])
        let third = try await ShareBus.begin(tool)
        let overCaller = await F.failure { try await F.setItems(tool, [try Self.item(10, seed: 4)], at: third.pasteboard) }
        #expect(overCaller?.name == "org.ferry.Error.TooLarge", "\(String(describing: overCaller))")
        #expect(overCaller?.message.contains("memory-budget") == true, "\(String(describing: overCaller))")
        let named = try await F.call(tool, "Pasteboard", [.string("vault"), .variantDictionary([:])])[0].get(ObjectPath.self)
        let sensitiveOverCaller = await F.failure {
            try await F.setItems(tool, [try Self.item(5, seed: 5, sensitive: true)], at: named)
        }
        #expect(sensitiveOverCaller?.name == "org.ferry.Error.TooLarge", "sensitive items count too: \(String(describing: sensitiveOverCaller))")

        // Another caller has room of its own, but not past the total.
        let fourth = try await ShareBus.share(other, [try Self.item(10, seed: 6)])
        let overTotal = await F.failure {
            try await F.setItems(other, [try Self.item(5, seed: 7, sensitive: true)], at: named)
        }
        #expect(overTotal?.name == "org.ferry.Error.TooLarge", "\(String(describing: overTotal))")
        #expect(overTotal?.message.contains("memory-budget") == true, "\(String(describing: overTotal))")
        let peak = try Self.residentBytes(daemon.pid)
        #expect(peak >= baseline + (25 << 20), "30 MiB held: \(baseline) → \(peak)")

        for share in [first.share, second.share, third.share] { try await ShareBus.end(tool, share) }
        try await ShareBus.end(other, fourth.share)
        var after = try Self.residentBytes(daemon.pid)
        _ = try await eventually(every: .milliseconds(100)) {
            after = try Self.residentBytes(daemon.pid)
            return after <= baseline + (8 << 20)
        }
        #expect(after <= baseline + (8 << 20), "resident after the shares ended: \(baseline) → \(peak) → \(after)")

        // The budget is free again.
        let again = try await ShareBus.share(tool, [try Self.item(10, seed: 8)])
        try await F.setItems(tool, [try Self.item(10, seed: 9, sensitive: true)], at: named)
        try await ShareBus.end(tool, again.share)
        await tool.close(gracePeriod: .zero)
        await other.close(gracePeriod: .zero)
    }
}
