import BrokerCore
import FerryBroker
import FerryModel
import FerryTestSupport
import Foundation
import Testing

/// The registration policy as plain functions and an actor, without a bus.
@Suite("AppRegistry: registration policy without a bus")
struct AppRegistryTests {
    static let me = Caller(uniqueName: ":1.7", uid: 1000, pid: 42)
    static func manifest(_ app: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: TestPaths.fixtures.appendingPathComponent("Apps/\(app)/Info.plist")))
    }

    @Test("a caller of another uid is refused before anything else")
    func otherUserRefused() async throws {
        let registry = AppRegistry(ownUID: 1000, types: TypeDatabase())
        let stranger = Caller(uniqueName: ":1.9", uid: 0, pid: 1)
        let error = await #expect(throws: FerryModelError.self) {
            _ = try await registry.register(appID: "org.ferry.notes", manifest: try Self.manifest("Notes"),
                                            clientPath: "/c", caller: stranger)
        }
        #expect(error?.code == .permissionDenied)
        #expect(await registry.registeredApps.isEmpty)
    }

    @Test("one app per connection, one connection per app; re-registering replaces; vanishing removes")
    func ownership() async throws {
        let registry = AppRegistry(ownUID: 1000, types: TypeDatabase())
        let notes = try Self.manifest("Notes")
        _ = try await registry.register(appID: "org.ferry.notes", manifest: notes, clientPath: "/a", caller: Self.me)
        let again = try await registry.register(appID: "org.ferry.notes", manifest: notes, clientPath: "/b", caller: Self.me)
        #expect(again.clientPath == "/b")
        #expect(await registry.registeredApps.count == 1)

        let other = Caller(uniqueName: ":1.8", uid: 1000, pid: 43)
        let taken = await #expect(throws: FerryModelError.self) {
            _ = try await registry.register(appID: "org.ferry.notes", manifest: notes, clientPath: "/c", caller: other)
        }
        #expect(taken?.code == .permissionDenied)
        let second = await #expect(throws: FerryModelError.self) {
            _ = try await registry.register(appID: "org.ferry.gallery", manifest: try Self.manifest("Gallery"),
                                            clientPath: "/c", caller: Self.me)
        }
        #expect(second?.code == .invalidArgument)

        #expect(await registry.connectionClosed(":1.7")?.appID == "org.ferry.notes")
        #expect(await registry.registeredApps.isEmpty)
        let none = await #expect(throws: FerryModelError.self) { _ = try await registry.unregister(Self.me) }
        #expect(none?.code == .notFound)
    }

    @Test("the manifest: size limit, key path of a malformed entry, app id must be the bundle id")
    func manifestChecks() throws {
        let huge = #expect(throws: FerryModelError.self) {
            _ = try AppRegistry.parseManifest([UInt8](repeating: 32, count: AppRegistry.maximumManifestSize + 1),
                                              appID: "org.ferry.notes")
        }
        #expect(huge?.code == .tooLarge)
        let broken = [UInt8](try Data(contentsOf: TestPaths.fixtures
            .appendingPathComponent("Apps/Broken/configuration-name-not-string.plist")))
        let malformed = #expect(throws: FerryModelError.self) {
            _ = try AppRegistry.parseManifest(broken, appID: "org.ferry.broken.name")
        }
        #expect(malformed?.code == .invalidArgument)
        #expect(malformed?.keyPath?.hasSuffix("UIWindowSceneSessionRoleApplication[1].UISceneConfigurationName") == true)
        let wrongID = #expect(throws: FerryModelError.self) {
            _ = try AppRegistry.parseManifest(try Self.manifest("Notes"), appID: "org.ferry.gallery")
        }
        #expect(wrongID?.code == .invalidArgument)
    }

    @Test("registering Notes declares its exported type org.ferry.notes.note in the type database")
    func exportedTypesRegistered() async throws {
        let types = TypeDatabase()
        #expect(types.type(withIdentifier: "org.ferry.notes.note").map(types.isDeclared) != true)
        let registry = AppRegistry(ownUID: 1000, types: types)
        _ = try await registry.register(appID: "org.ferry.notes", manifest: try Self.manifest("Notes"),
                                        clientPath: "/a", caller: Self.me)
        let note = try #require(types.type(withIdentifier: "org.ferry.notes.note"))
        #expect(types.isDeclared(note))
        #expect(types.conforms(note, to: try #require(types.type(withIdentifier: "public.plain-text"))))
    }
}
