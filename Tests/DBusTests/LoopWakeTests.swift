@testable import DBus
import FerryTestSupport
import Synchronization
import Testing

/// A loop thread that hands work to another loop's sleeping thread wakes it when its own round
/// ends (`ConnectionLoop.wakeDeferred`): the work is never left waiting for an unrelated wake-up.
@Suite("Wake-ups one connection's thread owes another")
struct LoopWakeTests {
    @Test("a signal emitted on another connection from a connection-thread handler goes out, 200 times in a row")
    func handOffFromALoopThread() async throws {
        let bus = try PrivateBus.shared()
        let service = try await Connection(address: bus.address)
        let emitter = try await Connection(address: bus.address)
        let client = try await Connection(address: bus.address)
        try service.export(Interface("org.ferry.Test.Relay") {
            // Runs on the service connection's thread; the emitter's thread sleeps in poll.
            Method("Announce", in: ["n": "u"], out: ["on_thread": "b"], execution: .connectionThread) { call in
                try emitter.emit(path: "/org/ferry/Relay", interface: "org.ferry.Test.Relay", member: "Announced",
                                 body: [.uint32(try call.argument(0, as: UInt32.self))])
                return [.boolean(call.connection.loop.onOwnerThread)]
            }
        }, at: "/org/ferry/Relay")
        let announced = try await client.subscribe(to: MatchRule(sender: emitter.uniqueName, interface: "org.ferry.Test.Relay",
                                                                member: "Announced"))
        let received = Mutex<[DBusValue]>([])
        let listener = Task {
            for try await signal in announced {
                let body = try signal.body
                received.withLock { $0 += body }
            }
        }
        for n in UInt32(0)..<200 {
            let reply = try await client.call(destination: service.uniqueName, path: "/org/ferry/Relay",
                                              interface: "org.ferry.Test.Relay", member: "Announce", body: [.uint32(n)],
                                              timeout: .seconds(10))
            #expect(reply == [.boolean(true)], "the handler ran on a loop thread")
            // Each signal comes on its own: the emitter is idle between calls, so only the
            // handler's deferred wake-up can have sent it.
            let arrived = await eventually(.seconds(5), every: .milliseconds(1)) { received.withLock { $0.count } == Int(n) + 1 }
            #expect(arrived, "signal \(n) arrived")
            if !arrived { break }
        }
        #expect(received.withLock { $0 } == (UInt32(0)..<200).map { .uint32($0) })
        listener.cancel()
        await client.close()
        await emitter.close()
        await service.close()
    }
}
