import DBus
import Ferry
import FerryModel
import FerryTestSupport
import Foundation
import Logging
import ServiceLifecycle
import Testing

/// The client's flush as a `Service` in an app's `ServiceGroup` (issue #19 item 2).
@Suite("FerryClient.FlushService")
struct FlushServiceTests {
    static let logger = Logger(label: "flush-service-test") { _ in SwiftLogNoOpLogHandler() }

    @Test("a graceful shutdown of the group hands the promised data over, and not before")
    func gracefulShutdownFlushes() async throws {
        try await ClientFixture.with { fixture in
            let writer = try await fixture.registeredClient()
            let counter = CallCounter()
            try await writer.general.setItemProviders([PromiseTests.lazyText("flushed by the group", counter: counter)])
            let group = ServiceGroup(services: [writer.flushService()], logger: Self.logger)
            let running = Task { try await group.run() }
            await provingNothingHappens(for: .milliseconds(200))
            #expect(counter.value == 0, "the service flushed before the group shut down")

            await group.triggerGracefulShutdown()
            try await running.value
            #expect(counter.value == 1)
            // Gone without another flush: what the broker holds now came from the service's.
            await writer.connection.close()
            let reader = try await fixture.client()
            #expect(try await reader.general.items.allSatisfy { $0.promisedTypes.isEmpty })
            #expect(try await reader.general.string == "flushed by the group")
            await reader.close()
        }
    }

    @Test("a cancelled group ends the service without a flush")
    func cancelledGroupDoesNotFlush() async throws {
        try await ClientFixture.with { fixture in
            let writer = try await fixture.registeredClient()
            let counter = CallCounter()
            try await writer.general.setItemProviders([PromiseTests.lazyText("not flushed", counter: counter)])
            let group = ServiceGroup(services: [writer.flushService()], logger: Self.logger)
            let running = Task { try await group.run() }
            await provingNothingHappens(for: .milliseconds(100))
            running.cancel()
            try await running.value
            #expect(counter.value == 0)
            #expect(await writer.hasPendingPromises)
            await writer.connection.close()
        }
    }
}
