import DBus
import Foundation
import FerryTestSupport
import Synchronization
import Testing

@Suite("Caller credentials")
struct CredentialsTests {
    @Test("The credentials of a peer are this process's uid and pid")
    func peerCredentials() async throws {
        let bus = try PrivateBus.shared()
        let a = try await Connection(address: bus.address)
        let b = try await Connection(address: bus.address)
        let credentials = try await a.credentials(of: b.uniqueName)
        #expect(credentials.uid == getuid())
        #expect(credentials.pid == UInt32(getpid()))
        #expect(credentials.name == b.uniqueName)
        await #expect(throws: DBusError.self) { try await a.credentials(of: ":1.999999") }
        await a.close()
        await b.close()
    }

    @Test("A handler can resolve its caller's credentials from the call's sender")
    func handlerResolvesCaller() async throws {
        let bus = try PrivateBus.shared()
        let service = try await Connection(address: bus.address)
        let client = try await Connection(address: bus.address)
        try service.export(Interface("org.ferry.Test.Identity") {
            Method("Who", out: ["uid": "u", "pid": "u", "name": "s"]) { call in
                let who = try await call.connection.credentials(of: call.sender)
                return [.uint32(who.uid), .uint32(who.pid ?? 0), .string(call.sender.rawValue)]
            }
        }, at: "/identity")
        let reply = try await client.call(destination: service.uniqueName, path: "/identity",
                                          interface: "org.ferry.Test.Identity", member: "Who")
        #expect(reply == [.uint32(getuid()), .uint32(UInt32(getpid())), .string(client.uniqueName.rawValue)])
        await client.close()
        await service.close()
    }
}
