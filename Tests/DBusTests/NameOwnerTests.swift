import DBus
import Foundation
import FerryTestSupport
import Testing

@Suite("Bus name ownership")
struct NameOwnerTests {
    @Test("requestName flags: primary owner, queue, exists, replacement, already owner")
    func requestNameFlags() async throws {
        let bus = try PrivateBus.shared()
        let a = try await Connection(address: bus.address)
        let b = try await Connection(address: bus.address)
        let name: BusName = "org.ferry.Test.Names.Flags"

        #expect(try await a.requestName(name, flags: .allowReplacement) == .primaryOwner)
        #expect(try await a.requestName(name, flags: .allowReplacement) == .alreadyOwner)
        #expect(try await a.owner(of: name) == a.uniqueName)
        #expect(try await b.requestName(name, flags: .doNotQueue) == .exists)
        #expect(try await b.requestName(name, flags: .replaceExisting) == .primaryOwner)
        #expect(try await b.owner(of: name) == b.uniqueName)
        // a was replaced and, having queued implicitly, waits behind b.
        #expect(try await b.releaseName(name) == .released)
        #expect(try await a.owner(of: name) == a.uniqueName)
        #expect(try await b.requestName(name) == .inQueue)
        #expect(try await b.releaseName(name) == .released)
        #expect(try await a.releaseName(name) == .released)
        #expect(try await a.owner(of: name) == nil)
        #expect(try await a.releaseName(name) == .nonExistent)
        await a.close()
        await b.close()
    }

    @Test("Requesting an invalid name is a named error")
    func invalidName() async throws {
        let bus = try PrivateBus.shared()
        let a = try await Connection(address: bus.address)
        // A unique name cannot be requested: the bus refuses it.
        await #expect(throws: DBusError.self) { try await a.requestName(":1.9999") }
        let bad = "not a name"
        #expect(throws: DBusError.self) { try BusName(bad) }
        await a.close()
    }

    @Test("NameOwnerChanged reports a name vanishing when its owner's connection closes")
    func ownerChangedOnClose() async throws {
        let bus = try PrivateBus.shared()
        let watcher = try await Connection(address: bus.address)
        let owner = try await Connection(address: bus.address)
        let name: BusName = "org.ferry.Test.Names.Vanish"
        let changes = try await watcher.nameOwnerChanges(for: name)
        #expect(try await owner.requestName(name) == .primaryOwner)
        let ownerName = owner.uniqueName

        var iterator = changes.makeAsyncIterator()
        let gained = try await iterator.next()
        #expect(gained == NameOwnerChange(name: name, oldOwner: nil, newOwner: ownerName))

        async let vanished = watcher.waitForNameToVanish(name, timeout: .seconds(5))
        await owner.close()
        let lost = try await iterator.next()
        #expect(lost == NameOwnerChange(name: name, oldOwner: ownerName, newOwner: nil))
        #expect(try await vanished)
        // An unowned name has vanished already.
        #expect(try await watcher.waitForNameToVanish("org.ferry.Test.Names.Never", timeout: .seconds(1)))
        await watcher.close()
    }
}
