import DBus
import FerryTestSupport
import Foundation
import Testing

/// The running daemon serves exactly the published interface XML.
@Suite("ferryd: the interface XML is the contract")
struct BrokerContractTests {
    /// Every interface ferryd serves: its XML file, an object that serves it (nil: a scene
    /// session's, made by registering a test app; ``dragSession``: a drag's, begun from that
    /// app's scene), how many members (methods, properties, signals) the file declares, and its
    /// Version.
    static let served: [(file: String, interface: String, path: ObjectPath?, members: Int, version: UInt32)] = [
        ("org.ferry.Broker1.xml", "org.ferry.Broker1", "/org/ferry/Broker", 16, 8),
        ("org.ferry.Pasteboard1.xml", "org.ferry.Pasteboard1", "/org/ferry/Pasteboard/general", 16, 5),
        ("org.ferry.Scenes1.xml", "org.ferry.Scenes1", "/org/ferry/Scenes", 14, 3),
        ("org.ferry.SceneSession1.xml", "org.ferry.SceneSession1", nil, 12, 2),
        ("org.ferry.DragManager1.xml", "org.ferry.DragManager1", "/org/ferry/Drag", 7, 2),
        ("org.ferry.DragSession1.xml", "org.ferry.DragSession1", dragSession, 14, 1),
        ("org.ferry.Sharing1.xml", "org.ferry.Sharing1", "/org/ferry/Sharing", 6, 1),
        ("org.ferry.Continuity1.xml", "org.ferry.Continuity1", "/org/ferry/Continuity", 12, 1),
    ]
    /// The first drag's object.
    static let dragSession: ObjectPath = "/org/ferry/Drag/1"

    @Test("Introspect of each served object matches its services/interfaces/org.ferry.*.xml; Version as documented",
          arguments: served.indices)
    func introspectionMatchesContract(_ index: Int) async throws {
        let (file, name, servedPath, members, expectedVersion) = Self.served[index]
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        var app: FakeSceneApp?
        let path: ObjectPath
        let client = try await fixture.connect()
        if let servedPath, servedPath != Self.dragSession {
            path = servedPath
        } else {
            let started = try await FakeSceneApp.start(fixture, "org.ferry.notes", manifest: try FerrydFixture.manifest("Notes"))
            app = started
            let scene = try await SceneServiceTests.firstSession(started)
            if servedPath == Self.dragSession {
                path = try await DragBus.begin(client, scene: scene, ["items": "initiator"]).session
            } else {
                path = SceneBus.sessionPath(scene)
            }
        }
        let xml = try await client.call(destination: FerrydFixture.broker, path: path,
                                        interface: "org.freedesktop.DBus.Introspectable", member: "Introspect",
                                        body: [], timeout: .seconds(10))[0].get(String.self)
        let published = try String(contentsOf: TestPaths.packageRoot
            .appendingPathComponent("services/interfaces/\(file)"), encoding: .utf8)
        let served = try InterfaceShape.of(xml, interface: name)
        let contract = try InterfaceShape.of(published, interface: name)
        #expect(contract.count == members)
        #expect(served == contract)

        let version = try await client.call(destination: FerrydFixture.broker, path: path,
                                            interface: "org.freedesktop.DBus.Properties", member: "Get",
                                            body: [.string(name), "Version"], timeout: .seconds(10))
        #expect(version[0].unwrappingVariants == .uint32(expectedVersion))
        await app?.quit()
        await client.close()
    }

    @Test("every org.ferry.*.xml ferryd serves is covered (Client1 is served by apps, Bridge1 by ferry-bridge, Direct1 on direct connections: DirectConnectionTests)")
    func everyServedInterfaceIsCovered() throws {
        let files = try FileManager.default.contentsOfDirectory(
            atPath: TestPaths.packageRoot.appendingPathComponent("services/interfaces").path)
        let servedByApps: Set<String> = ["org.ferry.Client1.xml", "org.ferry.Bridge1.xml", "org.ferry.Direct1.xml"]
        #expect(Set(files.filter { $0.hasSuffix(".xml") }).subtracting(servedByApps) == Set(Self.served.map(\.file)))
    }
}
