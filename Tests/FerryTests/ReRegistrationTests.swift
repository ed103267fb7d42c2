import DBus
import Ferry
import FerryModel
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// A registered app outlives its broker: when a new ferryd takes `org.ferry.Broker`, the client
/// registers again by itself and can promise data to it.
@Suite("Ferry: registration survives a broker restart")
struct ReRegistrationTests {
    @Test("ferryd killed and restarted: the app is listed again and its new promises are served")
    func registersWithTheNewBroker() async throws {
        let bus = try PrivateBus()
        let stateDir = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-rereg-\(UUID().uuidString)")
        func startBroker() async throws -> ServiceProcess {
            try await ServiceProcess.ferryd(on: bus, stateDir: stateDir)
        }
        let first = try await startBroker()
        let app = try await FerryClient.connect(address: bus.address)
        try await app.registerCommandLineTool()
        let appID = try #require(app.appID)
        let observer = try await Connection(address: bus.address)
        func listedAppIDs() async throws -> [String] {
            let apps = try await observer.call(destination: "org.ferry.Broker", path: "/org/ferry/Broker",
                                               interface: "org.ferry.Broker1", member: "ListApps", timeout: .seconds(10))
            return try apps[0].get([VariantDictionary].self).compactMap { try $0["app-id"]?.get(String.self) }
        }
        #expect(try await listedAppIDs() == [appID])

        first.send(SIGKILL)
        _ = await first.waitForExit()
        let second = try await startBroker()
        defer { second.stop() }
        var listed: [String] = []
        _ = try await eventually(every: .milliseconds(10)) {
            listed = try await listedAppIDs()
            return listed == [appID]
        }
        #expect(listed == [appID])

        // Registered again, so a loader is promised (not loaded now) and served on demand.
        var provider = ItemProvider()
        let served = Mutex(0)
        provider.registerDataRepresentation(for: .utf8PlainText) { _ in
            served.withLock { $0 += 1 }
            return Data("after the restart".utf8)
        }
        try await app.general.setItemProviders([provider])
        let reader = try await FerryClient.connect(address: bus.address)
        #expect(try await reader.general.items.first?.promisedTypes == [.utf8PlainText])
        #expect(try await reader.general.string == "after the restart")
        #expect(served.withLock { $0 } == 1)

        await reader.close()
        await app.close()
        await observer.close()
        try? FileManager.default.removeItem(at: stateDir)
    }

    @Test("a share of the old broker has ended for good: its session never reaches the new broker's share of the same number")
    func aShareDoesNotOutliveItsBroker() async throws {
        let bus = try PrivateBus()
        let stateDir = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-reshare-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: stateDir) }
        let first = try await ServiceProcess.ferryd(on: bus, stateDir: stateDir)
        let tool = try await FerryClient.connect(address: bus.address)
        var text = ItemProvider()
        text.registerDataRepresentation(for: .utf8PlainText, data: Data("hello".utf8))
        let old = try await tool.beginShare([text])

        first.send(SIGKILL)
        _ = await first.waitForExit()
        let second = try await ServiceProcess.ferryd(on: bus, stateDir: stateDir)
        defer { second.stop() }
        let new = try await tool.beginShare([text])
        #expect(new.id == old.id)  // share numbers start again with each broker

        await #expect { try await old.activities() } throws: { ($0 as? FerryError)?.code == .notFound }
        await #expect { try await old.perform(.copy) } throws: { ($0 as? FerryError)?.code == .notFound }
        await #expect { try await old.end() } throws: { ($0 as? FerryError)?.code == .notFound }
        // The new share was not ended or performed by the old session's calls.
        #expect(try await new.activities().map(\.type) == [.copy, .saveToFolder])
        try await new.end()
        await tool.close()
    }
}
