import DBus
import Ferry
import FerryTestSupport
import Foundation
import Testing

/// The library exports exactly the published org.ferry.Client1.
@Suite("Ferry: org.ferry.Client1 matches its interface XML")
struct ClientContractTests {
    @Test("Introspect of a registered client's /org/ferry/Client equals org.ferry.Client1.xml; Version is 8")
    func introspectionMatchesContract() async throws {
        try await ClientFixture.with { fixture in
            let client = try await fixture.registeredClient()
            let peer = try await fixture.connection()
            let xml = try await peer.call(destination: client.connection.uniqueName, path: FerryClient.clientPath,
                                          interface: "org.freedesktop.DBus.Introspectable", member: "Introspect",
                                          body: [], timeout: .seconds(10))[0].get(String.self)
            let published = try String(contentsOf: TestPaths.packageRoot
                .appendingPathComponent("services/interfaces/org.ferry.Client1.xml"), encoding: .utf8)
            let contract = try InterfaceShape.of(published, interface: "org.ferry.Client1")
            // Version, ProvideRepresentation, ProvideBytes, the ten scene, the eight drag and the four sharing methods
            #expect(contract.count == 25)
            #expect(try InterfaceShape.of(xml, interface: "org.ferry.Client1") == contract)
            let version = try await peer.call(destination: client.connection.uniqueName, path: FerryClient.clientPath,
                                              interface: "org.freedesktop.DBus.Properties", member: "Get",
                                              body: ["org.ferry.Client1", "Version"], timeout: .seconds(10))
            #expect(version[0].unwrappingVariants == .uint32(8))
            await peer.close()
            await client.close()
        }
    }

    @Test("the generated command-line manifest names org.ferry.cli.<pid> and registers")
    func commandLineRegistration() async throws {
        try await ClientFixture.with { fixture in
            let client = try await fixture.registeredClient()
            #expect(client.appID == "org.ferry.cli.\(getpid())")
            #expect(client.isRegistered)
            await client.close()
        }
    }
}
