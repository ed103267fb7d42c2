import DBus
import FerryTestSupport
import Foundation
import Testing

/// `Broker1.Pasteboard` with `create` false looks a pasteboard up without creating it.
@Suite("ferryd: Broker1.Pasteboard create option")
struct PasteboardLookupTests {
    @Test("create=false: NotFound for a missing pasteboard and nothing created; the path of an existing one")
    func lookUpWithoutCreating() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let client = try await fixture.connect()
        let lookUp: [DBusValue] = [.string("typo"), .variantDictionary(["create": .boolean(false)])]
        let missing = await FerrydFixture.failure { _ = try await FerrydFixture.call(client, "Pasteboard", lookUp) }
        #expect(missing?.name == "org.ferry.Error.NotFound", "\(String(describing: missing))")
        #expect(try await FerrydFixture.call(client, "ListPasteboards") == [.array(element: .string, elements: [.string("general")])])

        let created = try await FerrydFixture.call(client, "Pasteboard", [.string("typo"), .variantDictionary([:])])
        #expect(try await FerrydFixture.call(client, "Pasteboard", lookUp) == created)
        #expect(try await FerrydFixture.call(client, "Pasteboard", [.string("general"), .variantDictionary(["create": .boolean(false)])])
                == [.objectPath("/org/ferry/Pasteboard/general")])
        let badOption = await FerrydFixture.failure {
            _ = try await FerrydFixture.call(client, "Pasteboard", [.string("x"), .variantDictionary(["create": .string("no")])])
        }
        #expect(badOption?.name == "org.ferry.Error.InvalidArgument", "\(String(describing: badOption))")
        await client.close()
    }
}
