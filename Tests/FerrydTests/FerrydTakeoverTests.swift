import DBus
import FerryTestSupport
import Foundation
import Testing

/// `--replace` on the same state directory, a second bus meeting a held state directory,
/// SIGHUP, and a quiet daemon when the bus starts it.
@Suite("ferryd: take-over, held state, SIGHUP and quiet activation")
struct FerrydTakeoverTests {
    @Test("--replace on the same state directory: the old ferryd ends, the new one serves what the old one stored")
    func replaceSameStateDirectory() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let first = try await fixture.start()
        defer { first.stop() }
        let client = try await fixture.connect()
        let firstOwner = try #require(try await client.owner(of: FerrydFixture.broker))
        _ = try await FerrydFixture.call(client, "Pasteboard", [.string("kept"), .variantDictionary([:])])

        let second = try await fixture.start(["--replace"])
        defer { second.stop() }
        #expect(await first.waitForExit(timeout: .seconds(10)) == 0, "\(first.standardError)")
        #expect(first.standardError.contains("lost org.ferry.Broker"))
        let newOwner = try await client.owner(of: FerrydFixture.broker)
        #expect(newOwner != nil && newOwner != firstOwner)
        #expect(second.isRunning, "\(second.standardError)")
        let names = try await FerrydFixture.call(client, "ListPasteboards")
        #expect(names == [.array(element: .string, elements: [.string("general"), .string("kept")])])
        await client.close()
    }

    @Test("a ferryd on a second bus with the same state directory exits 1 naming the pid and bus that hold it")
    func heldByAnotherBus() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let first = try await fixture.start()
        defer { first.stop() }
        let other = try FerrydFixture(bus: PrivateBus())
        defer { other.bus.stop() }
        for extra in [[], ["--replace"]] {
            let refused = try await other.run(extra, stateDir: fixture.stateDir)
            #expect(refused.status == 1, "\(extra): \(refused.stderr)")
            #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
            #expect(refused.stderr.contains("in use by another store"))
            #expect(refused.stderr.contains("pid \(first.pid)"), "\(refused.stderr)")
            #expect(refused.stderr.contains(fixture.bus.address), "\(refused.stderr)")
            #expect(first.isRunning)
        }
        let otherClient = try await other.connect()
        #expect(try await otherClient.owner(of: FerrydFixture.broker) == nil)
        await otherClient.close()
    }

    @Test("SIGHUP shuts down gracefully: exit 0, the name released, the state kept")
    func sighup() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        let client = try await fixture.connect()
        _ = try await FerrydFixture.call(client, "Pasteboard", [.string("kept"), .variantDictionary([:])])
        daemon.send(SIGHUP)
        #expect(await daemon.waitForExit(timeout: .seconds(5)) == 0)
        #expect(daemon.standardError.contains("shutting down: asked to stop (SIGTERM, SIGINT or SIGHUP)"), "\(daemon.standardError)")
        #expect(try await client.owner(of: FerrydFixture.broker) == nil)

        let again = try await fixture.start()
        defer { again.stop() }
        let names = try await FerrydFixture.call(client, "ListPasteboards")
        #expect(names == [.array(element: .string, elements: [.string("general"), .string("kept")])])
        await client.close()
    }

    @Test("started by the bus (DBUS_STARTER_BUS_TYPE set): no READY and no event log; --verbose brings them back")
    func quietWhenActivated() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let environment = fixture.bus.environment(adding: ["DBUS_STARTER_BUS_TYPE": "session",
                                                           "DBUS_STARTER_ADDRESS": fixture.bus.address])
        let child = try RunningProcess(try BuiltProducts.executable("ferryd"),
                                       ["--bus", fixture.bus.address, "--state-dir", fixture.stateDir.path],
                                       environment: environment)
        let client = try await fixture.connect()
        var owner: BusName?
        _ = try await eventually(.seconds(15)) {
            owner = try await client.owner(of: FerrydFixture.broker)
            return owner != nil || !child.isRunning
        }
        #expect(owner != nil, "the activated ferryd never owned the name")
        _ = try await FerrydFixture.call(client, "Pasteboard", [.string("quiet"), .variantDictionary([:])])
        child.send(SIGTERM)
        #expect(await child.waitForExit(timeout: .seconds(5)) == 0)
        let out = FileHandle(fileDescriptor: child.standardOutput, closeOnDealloc: false).readDataToEndOfFile()
        let err = FileHandle(fileDescriptor: child.standardError, closeOnDealloc: false).readDataToEndOfFile()
        #expect(out.isEmpty, "stdout: \(String(decoding: out, as: UTF8.self))")
        #expect(err.isEmpty, "stderr: \(String(decoding: err, as: UTF8.self))")

        let verbose = try await ServiceProcess(try BuiltProducts.executable("ferryd"),
                                               ["--bus", fixture.bus.address, "--state-dir", fixture.stateDir.path, "--verbose"],
                                               environment: environment)
        defer { verbose.stop() }
        #expect(verbose.standardError.contains("owns org.ferry.Broker"))
        await client.close()
    }
}
