import BrokerCore
import DBus
import FerryBroker
import FerryModel
import FerryTestSupport
import Foundation
import Testing

/// The scene service in this process, driven the way BrokerService drives it, so that the
/// interleavings of a registration and its connection closing can be played in a chosen order.
@Suite("SceneService: registrations that end while they are made")
struct SceneRegistrationTests {
    static let notes = SceneServiceTests.notes

    @Test("a registration whose connection closed (and was already forgotten) before the scene service took it is refused, and the app stays archived")
    func registrationEndedMeanwhile() async throws {
        let fixture = try FerrydFixture()
        let directory = fixture.stateDir.path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { fixture.cleanUp() }
        let connection = try await fixture.connect()
        let store = try SceneStore.open(directory: directory)
        defer { store.close() }
        let registry = AppRegistry(ownUID: getuid(), types: TypeDatabase())
        let scenes = SceneService(connection: connection, registry: registry, store: store, desktop: Desktop(),
                                  ownUID: getuid(), callers: CallerCache(ownUID: getuid()), logger: CapturedLog().logger())
        try await scenes.start()
        let manifest = try FerrydFixture.manifest("Notes")
        // Names the bus never hands out: these "apps" are gone from the start.
        let earlier = Caller(uniqueName: ":9.1", uid: getuid(), pid: nil)
        let later = Caller(uniqueName: ":9.2", uid: getuid(), pid: nil)

        // It registered once and went away: the app is known.
        let first = try await registry.register(appID: Self.notes, manifest: manifest, clientPath: "/org/ferry/Client",
                                                caller: earlier, showsScenes: true)
        try await scenes.appRegistered(first, manifest: manifest)
        _ = await registry.connectionClosed(earlier.uniqueName)
        await scenes.appDisconnected(uniqueName: earlier.uniqueName)

        // It registers again and its connection closes at once; the broker's watch handles the
        // closing (registry, then scenes) before RegisterApp reaches the scene service.
        let second = try await registry.register(appID: Self.notes, manifest: manifest, clientPath: "/org/ferry/Client",
                                                 caller: later, showsScenes: true)
        _ = await registry.connectionClosed(later.uniqueName)
        await scenes.appDisconnected(uniqueName: later.uniqueName)
        let refused = await #expect(throws: FerryModelError.self) {
            try await scenes.appRegistered(second, manifest: manifest)
        }
        #expect(refused?.code == .unavailable)

        // So the app is not running: a new scene for it is archived, not a failed call to a
        // connection that is gone.
        let cli = try await fixture.connect()
        let reply = try await cli.call(destination: connection.uniqueName, path: SceneService.path,
                                       interface: SceneService.interfaceName, member: "RequestActivation",
                                       body: [.string(Self.notes), .string(""), [String: DBusValue]().dbusValue],
                                       timeout: .seconds(20))
        let id = try reply[1].get(String.self)
        #expect(await scenes.allSessions.map(\.persistentIdentifier) == [id])
        #expect(await scenes.allSessions.first?.activationState == .unattached)
        await cli.close()
        await connection.close()
    }
}
