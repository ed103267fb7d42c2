import DBus
import FerryTestSupport
import Foundation
import Testing

/// Bad registrations get named errors; the daemon keeps running.
@Suite("ferryd: named errors from org.ferry.Broker1")
struct BrokerErrorTests {
    @Test("wrong app id, malformed and oversized manifests, a taken app id, no registration, wrong types")
    func namedErrors() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let first = try await fixture.connect(), second = try await fixture.connect()
        let notes = try FerrydFixture.manifest("Notes")

        let wrongID = await FerrydFixture.failure { try await FerrydFixture.register(first, "org.ferry.other", manifest: notes) }
        #expect(wrongID?.name == "org.ferry.Error.InvalidArgument")
        #expect(wrongID?.message.contains("org.ferry.notes") == true)

        let broken = [UInt8](try Data(contentsOf: TestPaths.fixtures
            .appendingPathComponent("Apps/Broken/configuration-name-not-string.plist")))
        let malformed = await FerrydFixture.failure {
            try await FerrydFixture.register(first, "org.ferry.broken.name", manifest: broken)
        }
        #expect(malformed?.name == "org.ferry.Error.InvalidArgument")
        #expect(malformed?.message.contains(
            "UIApplicationSceneManifest.UISceneConfigurations.UIWindowSceneSessionRoleApplication[1]") == true)

        let huge = await FerrydFixture.failure {
            try await FerrydFixture.register(first, "org.ferry.notes", manifest: notes + [UInt8](repeating: 32, count: 1 << 20))
        }
        #expect(huge?.name == "org.ferry.Error.TooLarge")

        let none = await FerrydFixture.failure { _ = try await FerrydFixture.call(first, "UnregisterApp") }
        #expect(none?.name == "org.ferry.Error.NotFound")

        try await FerrydFixture.register(first, "org.ferry.notes", manifest: notes)
        let taken = await FerrydFixture.failure { try await FerrydFixture.register(second, "org.ferry.notes", manifest: notes) }
        #expect(taken?.name == "org.ferry.Error.PermissionDenied")
        #expect(taken?.message.contains(first.uniqueName.rawValue) == true)

        let other = await FerrydFixture.failure {
            try await FerrydFixture.register(first, "org.ferry.gallery", manifest: try FerrydFixture.manifest("Gallery"))
        }
        #expect(other?.name == "org.ferry.Error.InvalidArgument")

        let send = try await ChildProcess.run("dbus-send", [
            "--bus=\(fixture.bus.address)", "--print-reply", "--dest=org.ferry.Broker", "/org/ferry/Broker",
            "org.ferry.Broker1.RegisterApp", "int32:5", "string:x",
        ], environment: fixture.bus.environment())
        #expect(!send.succeeded)
        #expect(send.stderr.contains("org.freedesktop.DBus.Error.InvalidArgs"))

        #expect(daemon.isRunning)
        #expect(try await FerrydFixture.call(second, "ListApps").count == 1)
        await first.close()
        await second.close()
    }
}
