import DBus
import Ferry
import FerryModel
import FerryTestSupport
import Synchronization
import Testing

/// `FerryClient.sceneSessions()` reads a well-formed listing straight from the reply's bytes and
/// names what is wrong with any other, from a stand-in broker on a private bus of its own.
@Suite("Ferry: a malformed ListSessions reply is a named error")
struct MalformedListingTests {
    /// What the stand-in answers next.
    final class Answer: Sendable {
        let values = Mutex<[DBusValue]>([])
    }

    private static func session(_ entries: [String: DBusValue]) -> DBusValue {
        var dictionary: [String: DBusValue] = ["persistentIdentifier": .string("0123456789abcdef"),
                                               "bundleIdentifier": .string("org.ferry.test.listing"),
                                               "role": .string("windowApplication"), "state": .int32(-1)]
        dictionary.merge(entries) { $1 }
        return dictionary.dbusValue
    }

    /// A stand-in broker on a bus of its own whose `ListSessions` answers `answer`'s values,
    /// declared as `signature`; and a client of that bus.
    private static func standIn(answering answer: Answer, as signature: Signature) async throws
        -> (bus: PrivateBus, broker: Connection, client: FerryClient) {
        let bus = try PrivateBus()
        let broker = try await Connection(address: bus.address)
        try broker.export(Interface("org.ferry.Scenes1") {
            Method("ListSessions", in: ["options": "a{sv}"], out: ["sessions": signature]) { _ in answer.values.withLock { $0 } }
        }, at: "/org/ferry/Scenes")
        #expect(try await broker.requestName("org.ferry.Broker", flags: [.doNotQueue]) == .primaryOwner)
        return (bus, broker, try await FerryClient.connect(address: bus.address))
    }

    @Test("a listing is read typed; a wrong value names its entry and key; another shape is read or named")
    func malformedListings() async throws {
        let answer = Answer()
        let (bus, broker, client) = try await Self.standIn(answering: answer, as: "aa{sv}")
        let good = Self.session(["title": .string("Notes"), "stackIndex": .uint32(2), "screen": .uint32(1)])
        answer.values.withLock { $0 = [.array(of: "a{sv}", [good, good])] }
        let sessions = try await client.sceneSessions()
        #expect(sessions.map(\.session.title) == ["Notes", "Notes"])
        #expect(sessions.map(\.stackIndex) == [2, 2] && sessions.map(\.screen) == [1, 1])

        let badFrame = Self.session(["frame": .string("wide")])
        answer.values.withLock { $0 = [.array(of: "a{sv}", [good, badFrame])] }
        let wrongValue = await #expect(throws: FerryError.self) { _ = try await client.sceneSessions() }
        #expect(wrongValue?.code == .bus)
        #expect(wrongValue?.message.hasPrefix("the broker's reply: sessions[1].frame: ") == true, "\(String(describing: wrongValue))")
        await client.close()
        await broker.close()
        withExtendedLifetime(bus) {}

        // An `av` of dictionaries is read through the value path; a string is named.
        let other = Answer()
        let (otherBus, otherBroker, otherClient) = try await Self.standIn(answering: other, as: "av")
        other.values.withLock { $0 = [.array(of: .variant, [.variant(good)])] }
        #expect(try await otherClient.sceneSessions().map(\.session.title) == ["Notes"])
        other.values.withLock { $0 = [.array(of: .variant, [.variant(.string("x"))])] }
        let notDictionaries = await #expect(throws: FerryError.self) { _ = try await otherClient.sceneSessions() }
        #expect(notDictionaries?.code == .bus)
        #expect(notDictionaries?.message.hasPrefix("the broker's reply: sessions[0]: expected a dictionary") == true,
                "\(String(describing: notDictionaries))")
        await otherClient.close()
        await otherBroker.close()
        withExtendedLifetime(otherBus) {}
    }
}
