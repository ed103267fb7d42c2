import DBus
import Foundation
import FerryTestSupport
import Synchronization
import Testing

@Suite("Properties interface")
struct PropertyAccessTests {
    static let interfaceName: InterfaceName = "org.ferry.Test.Lamp"
    static let properties: InterfaceName = "org.freedesktop.DBus.Properties"

    /// A lamp with a read-only model, a read-write brightness and a write-only secret.
    final class Lamp: Sendable {
        let brightness = Mutex<UInt32>(10)
        let secret = Mutex<String>("")

        var interface: Interface {
            Interface(PropertyAccessTests.interfaceName) {
                Property("Model", "s", get: { _ in .string("L-1") })
                Property("Brightness", "u",
                         get: { _ in .uint32(self.brightness.withLock { $0 }) },
                         set: { _, value in
                             let level = try value.get(UInt32.self)
                             guard level <= 100 else { throw DBusError(.invalidArgs, "brightness above 100") }
                             self.brightness.withLock { $0 = level }
                         })
                Property("Secret", "s", set: { _, value in self.secret.withLock { $0 = (try? value.get(String.self)) ?? "" } })
            }
        }
    }

    @Test("Get, GetAll and Set with access checks and the standard errors")
    func getGetAllSet() async throws {
        let bus = try PrivateBus.shared()
        let service = try await Connection(address: bus.address)
        let client = try await Connection(address: bus.address)
        let lamp = Lamp()
        try service.export(lamp.interface, at: "/lamp")
        func call(_ member: MemberName, _ body: [DBusValue]) async throws -> [DBusValue] {
            try await client.call(destination: service.uniqueName, path: "/lamp", interface: Self.properties,
                                  member: member, body: body)
        }
        let iface = DBusValue.string(Self.interfaceName.rawValue)

        #expect(try await call("Get", [iface, .string("Model")]) == [.variant(.string("L-1"))])
        #expect(try await call("Get", [.string(""), .string("Brightness")]) == [.variant(.uint32(10))])
        let all = try await call("GetAll", [iface])
        #expect(all == [.dictionary(key: .string, value: .variant, entries: [
            DBusDictionaryEntry(key: .string("Model"), value: .variant(.string("L-1"))),
            DBusDictionaryEntry(key: .string("Brightness"), value: .variant(.uint32(10))),
        ])])

        #expect(try await call("Set", [iface, .string("Brightness"), .variant(.uint32(70))]) == [])
        #expect(lamp.brightness.withLock { $0 } == 70)
        _ = try await call("Set", [iface, .string("Secret"), .variant(.string("hunter2"))])
        #expect(lamp.secret.withLock { $0 } == "hunter2")

        func expectError(_ name: ErrorName, _ member: MemberName, _ body: [DBusValue]) async {
            let error = await #expect(throws: DBusError.self) { try await call(member, body) }
            #expect(error?.name == name, "\(member) \(body)")
        }
        await expectError(.propertyReadOnly, "Set", [iface, .string("Model"), .variant(.string("X"))])
        await expectError(.unknownProperty, "Get", [iface, .string("Colour")])
        await expectError(.unknownInterface, "Get", [.string("org.ferry.Test.Nope"), .string("Model")])
        await expectError(.invalidArgs, "Set", [iface, .string("Brightness"), .variant(.string("bright"))])
        await expectError(.invalidArgs, "Set", [iface, .string("Brightness"), .variant(.uint32(101))])
        await expectError(.accessDenied, "Get", [iface, .string("Secret")])
        await expectError(.invalidArgs, "Get", [iface])
        #expect(lamp.brightness.withLock { $0 } == 70)
        await client.close()
        await service.close()
    }

    @Test("Set emits PropertiesChanged, and emitPropertiesChanged sends changed and invalidated names")
    func propertiesChanged() async throws {
        let bus = try PrivateBus.shared()
        let service = try await Connection(address: bus.address)
        let client = try await Connection(address: bus.address)
        let lamp = Lamp()
        try service.export(lamp.interface, at: "/lamp2")
        let changes = try await client.subscribe(to: MatchRule(
            sender: service.uniqueName, interface: Self.properties, member: "PropertiesChanged", path: "/lamp2"))
        var iterator = changes.makeAsyncIterator()

        _ = try await client.call(destination: service.uniqueName, path: "/lamp2", interface: Self.properties,
                                  member: "Set", body: [.string(Self.interfaceName.rawValue), .string("Brightness"),
                                                        .variant(.uint32(42))])
        let first = try #require(try await iterator.next())
        #expect(try first.body == [
            .string(Self.interfaceName.rawValue),
            .dictionary(key: .string, value: .variant,
                        entries: [DBusDictionaryEntry(key: .string("Brightness"), value: .variant(.uint32(42)))]),
            .array(element: .string, elements: []),
        ])

        try service.emitPropertiesChanged(path: "/lamp2", interface: Self.interfaceName,
                                          changed: ["Model": .string("L-2")], invalidated: ["Secret"])
        let second = try #require(try await iterator.next())
        #expect(try second.body == [
            .string(Self.interfaceName.rawValue),
            .dictionary(key: .string, value: .variant,
                        entries: [DBusDictionaryEntry(key: .string("Model"), value: .variant(.string("L-2")))]),
            .array(element: .string, elements: [.string("Secret")]),
        ])
        await client.close()
        await service.close()
    }
}
