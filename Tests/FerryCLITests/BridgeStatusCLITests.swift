import FerryTestSupport
import Foundation
import Testing

@Suite("ferry bridge status")
struct BridgeStatusCLITests {
    @Test("without a bridge on the bus: one line on stderr and exit status 69")
    func noBridge() async throws {
        try await CLIBroker.with { broker in
            let result = try await broker.ferry("bridge", "status")
            #expect(result.status == 69, "\(result.summary)")
            #expect(result.stdout.isEmpty)
            #expect(result.stderr == "ferry: no ferry-bridge runs on this bus (start it in the graphical session: ferry-bridge)\n")
            let json = try await broker.ferry("bridge", "status", "--json")
            #expect(json.status == 69)
        }
    }
}
