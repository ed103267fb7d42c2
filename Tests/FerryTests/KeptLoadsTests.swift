@testable import Ferry
import Foundation
import Testing

/// The loads `ProvideBytes` keeps for the `ProvideRepresentation` that resumes them.
@Suite("Ferry: loads kept for a resuming ProvideRepresentation")
struct KeptLoadsTests {
    @Test("a kept load is taken once, only for its own item and type; one never taken is cancelled when its time is up")
    func keptOnceThenCancelled() async throws {
        let loads = KeptLoads(lifetime: .milliseconds(100))
        let quick = Task<Data, any Error> { Data("kept".utf8) }
        let token = loads.keep(quick, item: "A", type: "public.utf8-plain-text")
        #expect(loads.take(token, item: "B", type: "public.utf8-plain-text") == nil)
        #expect(loads.take(token, item: "A", type: "public.png") == nil)
        let taken = try #require(loads.take(token, item: "A", type: "public.utf8-plain-text"))
        #expect(try await taken.value == Data("kept".utf8))
        #expect(loads.take(token, item: "A", type: "public.utf8-plain-text") == nil, "taken once")

        let slow = Task<Data, any Error> {
            try await Task.sleep(for: .seconds(30))
            return Data()
        }
        let other = loads.keep(slow, item: "A", type: "public.utf8-plain-text")
        #expect(other != token)
        await #expect(throws: CancellationError.self) { _ = try await slow.value }
        #expect(loads.take(other, item: "A", type: "public.utf8-plain-text") == nil, "forgotten once cancelled")
    }
}
