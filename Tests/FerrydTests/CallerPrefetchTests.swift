import BrokerCore
import DBus
@testable import FerryBroker
import FerryTestSupport
import Foundation
import Testing

/// The broker asks the bus who a connection is as soon as it appears, before its first call
/// (`CallerCache.prefetch`), and forgets it when it leaves.
@Suite("Callers asked about ahead of their first call")
struct CallerPrefetchTests {
    @Test("a connection that appears is known before it calls, and forgotten when it leaves")
    func knownBeforeItCalls() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let (running, serving) = try await fixture.startBroker()
        let callers = running.pasteboards.callers
        let client = try await fixture.connect()
        let name = client.uniqueName.rawValue
        // The client never calls the broker.
        #expect(await eventually { callers.known(name) != nil }, "the broker did not ask about \(name)")
        let caller = try #require(callers.known(name))
        #expect(caller.uid == getuid())
        #expect(caller.pid == UInt32(getpid()))
        await client.close()
        #expect(await eventually { callers.known(name) == nil }, "the broker kept \(name) after it left")
        running.stop(reason: "the test ended")
        await serving.value
    }

    @Test("an answer that comes after the connection left is not kept; a name already gone is not kept")
    func lateAnswersAreDropped() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let asker = try await Connection(address: bus.address)
        let cache = CallerCache(ownUID: getuid())

        let leaving = try await Connection(address: bus.address)
        let leavingName = leaving.uniqueName
        cache.prefetch(leavingName, on: asker)
        // Gone before the bus's answer can have been filed (it needs a round trip).
        cache.forget(leavingName.rawValue)
        // A later answer on the same connection comes after the first one.
        _ = try await asker.credentials(of: asker.uniqueName)
        await provingNothingHappens(for: .milliseconds(50))
        #expect(cache.known(leavingName.rawValue) == nil)

        await leaving.close()
        #expect(try await eventually { try await asker.owner(of: leavingName) == nil })
        cache.prefetch(leavingName, on: asker)
        _ = try await asker.credentials(of: asker.uniqueName)
        await provingNothingHappens(for: .milliseconds(50))
        #expect(cache.known(leavingName.rawValue) == nil)
        await asker.close()
    }
}
