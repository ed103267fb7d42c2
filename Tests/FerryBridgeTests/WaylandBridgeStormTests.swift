import FerryTestSupport
import Foundation
import Testing

/// ferry-bridge on headless sway under many desktop copies: one Ferry change per copy, no
/// re-import of its own offer, memory that does not grow with the number of copies.
@Suite("ferry-bridge on Wayland: one change per copy, a storm of 1,000 copies")
struct WaylandBridgeStormTests {
    @Test("exactly one ferry watch line per wl-copy, none for the bridge's own offers")
    func oneWatchLinePerCopy() async throws {
        try await WaylandBridgeSession.with { session in
            let output = "\(session.sway.directory)/watch.out"
            _ = try session.sway.spawn(["\(session.stage)/ferry", "watch"],
                                       extraEnvironment: session.ferryEnvironment, standardOutput: output)
            func lines() -> [Substring] {
                ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").split(separator: "\n")
            }
            #expect(await eventually { lines().count == 1 }, "ferry watch printed no first line")
            for copy in 1...3 {
                #expect(try await session.wlCopy("watched \(copy)").succeeded)
                #expect(try await eventually { try await session.ferry("paste").stdout == "watched \(copy)" })
                #expect(try await session.waitForCompleteImport(atLeast: UInt64(copy)))
            }
            // ferry copy exports; the desktop's view of it must not come back as a change.
            #expect(try await session.ferry("copy", "--text", "from ferry").succeeded)
            #expect(try await eventually { try await session.wlPaste("-n").stdout == "from ferry" })
            await provingNothingHappens(for: .seconds(1))
            let seen = lines()
            #expect(seen.count == 5, "\(seen)")
            #expect(seen.dropFirst().allSatisfy { $0.contains("public.utf8-plain-text") }, "\(seen)")
        }
    }

    @Test("1,000 quick wl-copy runs: exactly 1,000 Ferry changes, the last copy in Ferry, bridge RSS flat")
    func storm() async throws {
        try await WaylandBridgeSession.with { session in
            let start = try #require(try await session.changeCount())
            // One shell for the whole loop, so it runs at the desktop's pace, not runuser's.
            func copies(_ range: ClosedRange<Int>) async throws {
                let loop = try await session.shell(
                    "i=\(range.lowerBound); while [ $i -le \(range.upperBound) ]; do wl-copy \"storm $i\" || exit 1; i=$((i+1)); done",
                    timeout: .seconds(120))
                #expect(loop.succeeded, "\(loop.standardError)")
                let settled = try await eventually(.seconds(30)) {
                    try await session.changeCount() == start + UInt64(range.upperBound)
                }
                let count = try await session.changeCount()
                #expect(settled, "not one change per copy: change \(count ?? 0) after \(range.upperBound) copies from \(start)")
                #expect(try await session.ferry("paste").stdout == "storm \(range.upperBound)")
            }
            try await copies(1...100)
            let early = try session.bridgeResidentKilobytes()
            let began = ContinuousClock.now
            try await copies(101...1000)
            let took = ContinuousClock.now - began
            let late = try session.bridgeResidentKilobytes()
            await provingNothingHappens(for: .seconds(1))
            #expect(try await session.changeCount() == start + 1000, "a change after the storm ended")
            #expect(try await session.waitForCompleteImport(atLeast: start + 1000))
            #expect(try await session.wlPaste("-n").stdout == "storm 1000")
            print("storm: 900 copies in \(took); bridge VmRSS \(early) kB after 100, \(late) kB after 1000")
            #expect(late <= early + 16 * 1024, "bridge RSS grew from \(early) kB to \(late) kB")
        }
    }
}
