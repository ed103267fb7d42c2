import DBus
import Ferry
import FerryModel
import FerryTestSupport
import Foundation
import Testing

/// `PasteboardRead.bytes()` on a promised stream: FinishTransfer is sent while the pipe is read.
/// The failure cases must stay failures.
@Suite("Ferry: reading a promised stream")
struct PromisedStreamTests {
    /// A registered client whose `org.ferry.Client1` is replaced by one that writes `written`
    /// bytes and then replies `reply` (a size, or an error), with one promised item announcing
    /// `announced` bytes.
    static func fakeSource(_ fixture: ClientFixture, announced: Int64?, written: Int,
                           reply: Result<UInt64, DBusError>) async throws -> FerryClient {
        let writer = try await fixture.registeredClient()
        var provider = ItemProvider()
        provider.registerDataRepresentation(for: .data, estimatedSize: announced) { _ in Data() }
        try await writer.general.setItemProviders([provider])
        _ = writer.connection.unexport(FerryClient.clientPath, interface: "org.ferry.Client1")
        try writer.connection.export(Interface("org.ferry.Client1") {
            Property("Version", "u", get: { _ in .uint32(4) })
            Method("ProvideRepresentation", in: ["item_id": "s", "type": "s", "fd": "h", "options": "a{sv}"],
                   out: ["size": "t"]) { call in
                let (_, _, fd) = try call.arguments(String.self, String.self, FileDescriptor.self)
                try fd.write(all: [UInt8](repeating: 7, count: written))
                fd.close()
                return [.uint64(try reply.get())]
            }
        }, at: FerryClient.clientPath)
        return writer
    }

    @Test("a source that fails after writing, or whose count differs from what arrived, fails the read",
          arguments: [Int64(5000), nil])
    func unconfirmedBytesFail(announced: Int64?) async throws {
        try await ClientFixture.with { fixture in
            let reader = try await fixture.client()
            let cases: [(written: Int, reply: Result<UInt64, DBusError>)] = [
                (1000, .failure(DBusError(ErrorName("org.ferry.Error.Unavailable"), "the disk went away"))),
                (1000, .success(24)),  // more bytes than it says
                (10, .success(24)),  // fewer
            ]
            for (written, reply) in cases {
                let writer = try await Self.fakeSource(fixture, announced: announced, written: written, reply: reply)
                // A small promise's failure may fail the read itself (the broker waited for the
                // source); a count that differs always comes as a stream, whose check fails.
                let error = await #expect(throws: FerryError.self, "\(written) bytes, reply \(reply)") {
                    let read = try await reader.general.read(item: 0, type: .data)
                    if case .success = reply { #expect(read.transfer != nil) }
                    _ = try await read.bytes()
                }
                #expect(error?.code == .unavailable)
                await writer.close()
            }
            await reader.close()
        }
    }

    @Test("a source that announces a few bytes but writes more than the pipe holds is read in full")
    func underestimatedSourceDoesNotDeadlock() async throws {
        try await ClientFixture.with { fixture in
            let writer = try await fixture.registeredClient(), reader = try await fixture.client()
            let big = pngLikeBytes(3 << 20, seed: 3)
            var provider = ItemProvider()
            provider.registerDataRepresentation(for: .png, estimatedSize: 16) { _ in big }
            try await writer.general.setItemProviders([provider])
            let start = ContinuousClock.now
            #expect(try await firstDifference(reader.general.data(forType: .png) ?? Data(), big) == nil)
            #expect(ContinuousClock.now - start < .seconds(20), "no wait for the relay's timeout")
            await writer.close()
            await reader.close()
        }
    }

    @Test("a reader that fails while the source still writes throws at once, closes the pipe, and the source keeps serving",
          arguments: [Int64(10), nil])
    func failingReaderLeavesNothingBehind(announced: Int64?) async throws {
        try await ClientFixture.with { fixture in
            let writer = try await fixture.registeredClient(), reader = try await fixture.client()
            let big = pngLikeBytes(3 << 20, seed: 5)
            var provider = ItemProvider()
            provider.registerDataRepresentation(for: .png, estimatedSize: announced) { _ in big }
            try await writer.general.setItemProviders([provider])

            let read = try await reader.general.read(item: 0, type: .png)
            let start = ContinuousClock.now
            let error = await #expect(throws: FerryError.self) { _ = try await read.bytes(limit: 1000) }
            #expect(error?.code == .tooLarge)
            // A pending FinishTransfer kept waiting would hold the pipe open, the source blocked
            // on it, until the relay's 60 s timeout.
            #expect(ContinuousClock.now - start < .seconds(20))
            guard case .stream(let fd, _) = read.content else { Issue.record("not a stream"); return }
            #expect(!fd.isOpen, "the pipe is closed")
            #expect(try await firstDifference(reader.general.data(forType: .png) ?? Data(), big) == nil)
            await writer.close()
            await reader.close()
        }
    }
}
