import DBus
import FerryTestSupport
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing

/// The running daemon serves exactly the published interface XML.
@Suite("ferryd: the interface XML is the contract")
struct BrokerContractTests {
    /// One interface reduced to what a client depends on (names, types, directions, access).
    static func shape(of xml: String, interface name: String) throws -> [String] {
        let document = try XMLDocument(xmlString: xml, options: [])
        let interfaces = try document.nodes(forXPath: "//interface[@name='\(name)']")
        try #require(interfaces.count == 1, "one <interface name=\"\(name)\">")
        let interface = try #require(interfaces.first as? XMLElement)
        var lines: [String] = []
        for member in interface.children ?? [] {
            guard let member = member as? XMLElement, let kind = member.name,
                  ["method", "signal", "property"].contains(kind) else { continue }
            let memberName = member.attribute(forName: "name")?.stringValue ?? "?"
            if kind == "property" {
                let type = member.attribute(forName: "type")?.stringValue ?? "?"
                let access = member.attribute(forName: "access")?.stringValue ?? "?"
                lines.append("property \(memberName) \(type) \(access)")
                continue
            }
            let args = member.elements(forName: "arg").map { arg in
                let direction = arg.attribute(forName: "direction")?.stringValue ?? (kind == "method" ? "in" : "out")
                return "\(direction) \(arg.attribute(forName: "type")?.stringValue ?? "?") \(arg.attribute(forName: "name")?.stringValue ?? "")"
            }
            lines.append("\(kind) \(memberName)(\(args.joined(separator: ", ")))")
        }
        return lines.sorted()
    }

    @Test("Introspect of /org/ferry/Broker matches services/interfaces/org.ferry.Broker1.xml; Version is 1")
    func introspectionMatchesContract() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let client = try await fixture.connect()
        let xml = try await client.call(destination: FerrydFixture.broker, path: FerrydFixture.path,
                                        interface: "org.freedesktop.DBus.Introspectable", member: "Introspect",
                                        body: [], timeout: .seconds(10))[0].get(String.self)
        let published = try String(contentsOf: TestPaths.packageRoot
            .appendingPathComponent("services/interfaces/org.ferry.Broker1.xml"), encoding: .utf8)
        let served = try Self.shape(of: xml, interface: "org.ferry.Broker1")
        let contract = try Self.shape(of: published, interface: "org.ferry.Broker1")
        #expect(contract.count == 6)
        #expect(served == contract)

        let version = try await client.call(destination: FerrydFixture.broker, path: FerrydFixture.path,
                                            interface: "org.freedesktop.DBus.Properties", member: "Get",
                                            body: ["org.ferry.Broker1", "Version"], timeout: .seconds(10))
        #expect(version[0].unwrappingVariants == .uint32(1))
        await client.close()
    }
}
