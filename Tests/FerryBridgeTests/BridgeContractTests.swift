import DBus
import FerryBridge
import FerryTestSupport
import Foundation
import Testing

/// `org.ferry.Bridge1` as ferry-bridge serves it (BridgeService) is exactly the published XML,
/// and its Status survives the trip through the bus.
@Suite("FerryBridge: org.ferry.Bridge1 is the contract")
struct BridgeContractTests {
    static func sampleStatus() -> BridgeStatus {
        var clipboard = BridgeStatus.Selection()
        clipboard.owner = .desktop
        clipboard.offeredTypes = ["UTF8_STRING", "image/png"]
        clipboard.lastImport = BridgeStatus.Transfer(time: Date(timeIntervalSince1970: 1_790_000_000), changeCount: 7,
                                                     isComplete: true)
        var primary = BridgeStatus.Selection()
        primary.owner = .ferry
        primary.offeredTypes = ["text/plain"]
        primary.lastExport = BridgeStatus.Transfer(time: Date(timeIntervalSince1970: 1_790_000_100), changeCount: 3,
                                                   isComplete: true, isSensitive: false)
        return BridgeStatus(protocolName: "x11-xfixes", display: ":57", isClipboardManager: true, clipboard: clipboard,
                            primary: primary, budgets: .defaults)
    }

    @Test("Introspect matches services/interfaces/org.ferry.Bridge1.xml; Version 1; Status round-trips")
    func contract() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let service = try await Connection(address: bus.address)
        let status = Self.sampleStatus()
        try await BridgeService.publish(on: service) { status }
        let client = try await Connection(address: bus.address)
        let xml = try await client.call(destination: BridgeStatus.busName, path: BridgeStatus.objectPath,
                                        interface: "org.freedesktop.DBus.Introspectable", member: "Introspect",
                                        body: [], timeout: .seconds(10))[0].get(String.self)
        let published = try String(contentsOf: TestPaths.packageRoot
            .appendingPathComponent("services/interfaces/org.ferry.Bridge1.xml"), encoding: .utf8)
        let served = try InterfaceShape.of(xml, interface: "org.ferry.Bridge1")
        let contract = try InterfaceShape.of(published, interface: "org.ferry.Bridge1")
        #expect(contract.count == 2)
        #expect(served == contract)
        let comments = published.components(separatedBy: "<!--").dropFirst().map { $0.components(separatedBy: "-->")[0] }
        #expect(comments.count == 3)
        #expect(!comments.contains { $0.contains("--") }, "XML comments must not contain --")

        let version = try await client.call(destination: BridgeStatus.busName, path: BridgeStatus.objectPath,
                                            interface: "org.freedesktop.DBus.Properties", member: "Get",
                                            body: [.string("org.ferry.Bridge1"), "Version"], timeout: .seconds(10))
        #expect(version[0].unwrappingVariants == .uint32(1))
        let fetched = try await BridgeStatus.fetch(over: client)
        #expect(fetched == status)
        await client.close()
        await service.close()
    }

    @Test("a second bridge on the same bus is refused with a clear error")
    func oneBridgePerBus() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let first = try await Connection(address: bus.address)
        try await BridgeService.publish(on: first) { Self.sampleStatus() }
        let second = try await Connection(address: bus.address)
        await #expect(throws: BridgeError.self) {
            try await BridgeService.publish(on: second) { Self.sampleStatus() }
        }
        #expect(try await BridgeStatus.fetch(over: second) == Self.sampleStatus())
        await first.close()
        await second.close()
    }

    @Test("no bridge: fetch answers nil")
    func noBridge() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let client = try await Connection(address: bus.address)
        #expect(try await BridgeStatus.fetch(over: client) == nil)
        await client.close()
    }
}
