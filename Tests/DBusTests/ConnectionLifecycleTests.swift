import DBus
import Foundation
import FerryTestSupport
import Testing

@Suite("Connection lifecycle")
struct ConnectionLifecycleTests {
    @Test("Opening registers a unique name; close ends the connection")
    func openAndClose() async throws {
        let bus = try PrivateBus.shared()
        let a = try await Connection(address: bus.address)
        let b = try await Connection(address: bus.address)
        #expect(a.uniqueName.isUnique)
        #expect(a.uniqueName != b.uniqueName)
        #expect(a.isConnected)
        await a.close()
        #expect(!a.isConnected)
        await a.close()
        await b.close()
    }

    @Test("A bad address throws instead of crashing")
    func badAddress() async throws {
        await #expect(throws: DBusError.self) {
            _ = try await Connection(address: "unix:path=/nonexistent/ferry-no-bus")
        }
        await #expect(throws: DBusError.self) {
            _ = try await Connection(address: "bogus-transport:")
        }
    }

    @Test("Opening and closing 50 connections leaks no fds or threads")
    func noLeaks() async throws {
        let bus = try PrivateBus.shared()
        try await Self.expectNoLeaks { try await Connection(address: bus.address) }
    }

    @Test("Opening and closing 50 peer-to-peer connections leaks no fds or threads (a loop kept by its last round's endpoints leaked its eventfd)")
    func noPeerLeaks() async throws {
        try await WireTransportTests.withSocketDirectory { directory in
            let (server, _) = try await WireTransportTests.server(in: directory)
            try await Self.expectNoLeaks { try await Connection(peer: server.address, speakingFor: BusName(":0.0")) }
            await server.close()
        }
    }

    /// Opens and closes 50 connections made by `open`, and records an issue when fds or threads grow.
    static func expectNoLeaks(_ open: () async throws -> Connection) async throws {
        // Warm up once so lazily created runtime threads are not counted.
        try await open().close()
        // Other suites run in parallel and open fds and threads too: a leak shows as growth of ~50
        // (one per connection), so allow up to half of that as noise and retry a noisy round.
        var report = ""
        for _ in 0..<3 {
            let fdsBefore = Self.count("/proc/self/fd"), threadsBefore = Self.count("/proc/self/task")
            for _ in 0..<50 {
                let connection = try await open()
                await connection.close()
            }
            // A stopped owner thread may take a moment to vanish from /proc.
            var fdsAfter = Self.count("/proc/self/fd"), threadsAfter = Self.count("/proc/self/task")
            _ = await eventually(.seconds(1), every: .milliseconds(10)) {
                fdsAfter = Self.count("/proc/self/fd")
                threadsAfter = Self.count("/proc/self/task")
                return threadsAfter < threadsBefore + 25 && fdsAfter < fdsBefore + 25
            }
            report = "fds \(fdsBefore) → \(fdsAfter), threads \(threadsBefore) → \(threadsAfter)"
            if threadsAfter < threadsBefore + 25 && fdsAfter < fdsBefore + 25 { return }
        }
        Issue.record("connections leak: \(report)")
    }

    @Test("Losing the bus fails calls and signal streams with Disconnected")
    func busDies() async throws {
        let bus = try PrivateBus()
        let a = try await Connection(address: bus.address)
        let signals = try await a.subscribe(to: MatchRule(interface: "org.ferry.Test.Lost"))
        bus.stop()
        var iterator = signals.makeAsyncIterator()
        let error = await #expect(throws: DBusError.self) { _ = try await iterator.next() }
        #expect(error?.name == .disconnected)
        let call = await #expect(throws: DBusError.self) { _ = try await a.owner(of: "org.ferry.Nobody") }
        #expect(call?.name == .disconnected)
        #expect(!a.isConnected)
        await a.close()
    }

    static func count(_ dir: String) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: dir).count) ?? -1
    }
}
