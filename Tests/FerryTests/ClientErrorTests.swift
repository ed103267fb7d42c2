import DBus
import Ferry
import FerryModel
import FerryTestSupport
import Foundation
import Testing

/// Errors a user of the library (the CLI) turns into exit statuses.
@Suite("Ferry: errors")
struct ClientErrorTests {
    @Test("with nobody owning org.ferry.Broker, calls fail with .noBroker")
    func noBroker() async throws {
        try await ClientFixture.with(withBroker: false) { fixture in
            let client = try await fixture.client()
            let read = await #expect(throws: FerryError.self) { _ = try await client.general.string }
            #expect(read?.code == .noBroker)
            let names = await #expect(throws: FerryError.self) { _ = try await client.pasteboardNames() }
            #expect(names?.code == .noBroker)
            #expect(names?.dbusErrorName?.hasPrefix("org.freedesktop.DBus.Error.") == true)
            await client.close()
        }
    }

    @Test("an unreachable bus is .noBroker")
    func unreachableBus() async throws {
        let error = await #expect(throws: FerryError.self) {
            _ = try await FerryClient.connect(address: "unix:path=/nonexistent/ferry-test-bus")
        }
        #expect(error?.code == .noBroker)
    }

    @Test("a broker error keeps its org.ferry.Error name and maps to its code")
    func brokerErrorsMap() async throws {
        try await ClientFixture.with { fixture in
            let client = try await fixture.client()
            try await client.general.clear()
            let error = await #expect(throws: FerryError.self) { _ = try await client.general.read(item: 0, type: .plainText) }
            #expect(error?.code == .notFound)
            #expect(error?.dbusErrorName == "org.ferry.Error.NotFound")
            let removal = await #expect(throws: FerryError.self) { try await client.removePasteboard(named: "never-made") }
            #expect(removal?.code == .notFound)
            await client.close()
        }
    }
}
