import DBus
import Foundation
import FerryTestSupport
import Synchronization
import Testing

@Suite("Signals and match rules")
struct SignalMatchTests {
    static let interface: InterfaceName = "org.ferry.Test.Signals"

    @Test("Match rule strings quote values and escape apostrophes")
    func ruleString() throws {
        let rule = MatchRule(sender: "org.ferry.Broker", interface: "org.ferry.Test.Signals", member: "Tick",
                             pathNamespace: "/org/ferry", arguments: [0: "it's", 2: "x,y"], argumentPaths: [1: "/a/"])
        #expect(rule.description == "type='signal',sender='org.ferry.Broker',interface='org.ferry.Test.Signals',"
            + "member='Tick',path_namespace='/org/ferry',arg0='it'\\''s',arg2='x,y',arg1path='/a/'")
        #expect(MatchRule(type: nil).description == "")
        #expect(throws: DBusError.self) { try MatchRule(arguments: [64: "x"]).validate() }
    }

    @Test("A subscription receives matching signals and not others")
    func matchingAndNonMatching() async throws {
        let bus = try PrivateBus.shared()
        let emitter = try await Connection(address: bus.address)
        let listener = try await Connection(address: bus.address)
        let ticks = try await listener.subscribe(to: MatchRule(interface: Self.interface, member: "Tick"))
        let fromKitchen = try await listener.subscribe(to: MatchRule(
            interface: Self.interface, pathNamespace: "/house/kitchen", arguments: [0: "on"]))

        try emitter.emit(path: "/house/hall", interface: Self.interface, member: "Tock", body: [.string("on")])
        try emitter.emit(path: "/house/kitchen/lamp", interface: Self.interface, member: "Switched",
                         body: [.string("off")])
        try emitter.emit(path: "/house/kitchenette", interface: Self.interface, member: "Switched",
                         body: [.string("on")])
        try emitter.emit(path: "/house/kitchen/lamp", interface: Self.interface, member: "Switched",
                         body: [.string("on"), .int32(3)])
        try emitter.emit(path: "/house/hall", interface: Self.interface, member: "Tick", body: [.uint64(7)])

        var tickIterator = ticks.makeAsyncIterator()
        let tick = try #require(try await tickIterator.next())
        #expect(tick.member == "Tick")
        #expect(try tick.body == [.uint64(7)])
        #expect(tick.sender == emitter.uniqueName)

        var kitchenIterator = fromKitchen.makeAsyncIterator()
        let switched = try #require(try await kitchenIterator.next())
        #expect(switched.path == "/house/kitchen/lamp")
        #expect(try switched.body == [.string("on"), .int32(3)])

        // Nothing else arrived on either stream: the next signal each sees is a fresh one.
        try emitter.emit(path: "/house/kitchen", interface: Self.interface, member: "Tick", body: [.string("on")])
        let next = try #require(try await tickIterator.next())
        #expect(next.path == "/house/kitchen")
        let nextKitchen = try #require(try await kitchenIterator.next())
        #expect(nextKitchen.member == "Tick")
        await emitter.close()
        await listener.close()
    }

    @Test("A well-known sender in a rule matches signals from the name's owner only")
    func wellKnownSender() async throws {
        let bus = try PrivateBus.shared()
        let owner = try await Connection(address: bus.address)
        let stranger = try await Connection(address: bus.address)
        let listener = try await Connection(address: bus.address)
        let name: BusName = "org.ferry.Test.Signals.Sender"
        #expect(try await owner.requestName(name) == .primaryOwner)
        let signals = try await listener.subscribe(to: MatchRule(sender: name, interface: Self.interface))
        try stranger.emit(path: "/x", interface: Self.interface, member: "Impostor")
        try owner.emit(path: "/x", interface: Self.interface, member: "Genuine")
        var iterator = signals.makeAsyncIterator()
        let first = try #require(try await iterator.next())
        #expect(first.member == "Genuine")
        await owner.close()
        await stranger.close()
        await listener.close()
    }

    @Test("The lazy sequence subscribes on first next, cancel ends it, and close ends iteration")
    func lifecycle() async throws {
        let bus = try PrivateBus.shared()
        let emitter = try await Connection(address: bus.address)
        let listener = try await Connection(address: bus.address)
        let rule = MatchRule(interface: Self.interface, member: "Beat")
        let done = Mutex(false)
        let received = Task {
            var count = 0
            for try await _ in listener.signals(matching: rule) {
                count += 1
                if count == 3 { break }
            }
            done.withLock { $0 = true }
            return count
        }
        // Keep emitting until the lazy subscription, once active, has caught three.
        for _ in 0..<500 where !done.withLock({ $0 }) {
            try emitter.emit(path: "/beat", interface: Self.interface, member: "Beat")
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(try await received.value == 3)

        // A rule nothing emits: stragglers of the beats above cannot reach it before the cancel.
        let subscription = try await listener.subscribe(to: MatchRule(interface: Self.interface, member: "Quiet"))
        subscription.cancel()
        var ended = subscription.makeAsyncIterator()
        #expect(try await ended.next() == nil)

        let open = try await listener.subscribe(to: rule)
        let waiting = Task { () -> Int in
            var n = 0
            for try await _ in open { n += 1 }
            return n
        }
        try await Task.sleep(for: .milliseconds(50))
        await listener.close()
        // Closing ends the iteration normally (no error); stragglers of the earlier beats may
        // have been counted, so only the clean end is checked.
        _ = try await waiting.value
        await emitter.close()
    }

    @Test("AddMatch is sent when a subscription starts and RemoveMatch when it ends")
    func matchRulesOnTheBus() async throws {
        let bus = try PrivateBus.shared()
        let listener = try await Connection(address: bus.address)
        func rulesOnBus() async throws -> UInt32 {
            let stats = try await listener.call(
                destination: .bus, path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus.Debug.Stats",
                member: "GetConnectionStats", body: [.string(listener.uniqueName.rawValue)],
                returning: [String: DBusValue].self)
            return try stats["MatchRules"]?.unwrappingVariants.get(UInt32.self) ?? 0
        }
        let before = try await rulesOnBus()
        let subscription = try await listener.subscribe(to: MatchRule(interface: Self.interface, member: "Counted"))
        #expect(try await rulesOnBus() == before + 1)
        // A well-known sender adds a second rule that tracks the name's owner.
        let tracked = try await listener.subscribe(to: MatchRule(sender: "org.ferry.Test.Signals.Tracked"))
        #expect(try await rulesOnBus() == before + 3)
        subscription.cancel()
        tracked.cancel()
        var now = try await rulesOnBus()
        _ = try await eventually(.seconds(5), every: .milliseconds(10)) {
            now = try await rulesOnBus()
            return now == before
        }
        #expect(now == before)
        await listener.close()
    }
}
