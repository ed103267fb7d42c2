import Ferry
import FerryContinuity
import FerryModel
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// Relaying promises end to end: an app on the laptop promises a representation (the `Ferry`
/// library's loader, or `ferry copy --lazy`), the desktop pastes it, and the laptop's app is asked
/// for the bytes then, once per paste, while they stream over the real engine.
@Suite("Continuity: relaying promised representations", .serialized)
struct RelayedPromiseTests {
    /// Runs `body` with an engine and ALICE's laptop and desktop; stops them all, also on failure.
    func withDevices(_ body: (ContinuityEngine, Device, Device) async throws -> Void) async throws {
        try await ContinuityEngine.withLaptopAndDesktop(body)
    }

    /// An app on `device`'s bus, registered, so that its loaders stay promises.
    func app(on device: Device) async throws -> FerryClient {
        let client = try await FerryClient.connect(address: device.bus.address)
        try await client.registerCommandLineTool()
        return client
    }

    /// Deterministic bytes that no text type would claim.
    static func noise(_ count: Int, seed: UInt64) -> Data {
        var generator = SplitMix64(seed: seed)
        var data = Data(count: count)
        data.withUnsafeMutableBytes { raw in
            let words = raw.bindMemory(to: UInt64.self)
            for index in words.indices { words[index] = generator.next() }
        }
        return data
    }

    @Test("a promise on the laptop pastes byte for byte on the desktop; its app is asked once per paste, not per chunk")
    func promisedPastesOncePerPull() async throws {
        try await withDevices { _, laptop, desktop in
            let writer = try await app(on: laptop)
            let calls = Mutex(0)
            let data = Self.noise(3 << 20, seed: 2201)  // six chunks of 512 KiB
            var provider = ItemProvider()
            provider.registerDataRepresentation(for: .data, estimatedSize: Int64(data.count)) { _ in
                calls.withLock { $0 += 1 }
                return data
            }
            try await writer.general.setItemProviders([provider])
            #expect(try await eventually { try await desktop.ferry("types").stdout.contains("remote laptop") },
                    "the laptop's promise was never announced")
            #expect(calls.withLock { $0 } == 0, "announcing asked the app for the bytes")

            let first = try await desktop.ferry("paste", "--force")
            #expect(first.succeeded, "\(first.stderr)")
            #expect(first.standardOutput.count == data.count)
            #expect(firstDifference(first.standardOutput, data) == nil)
            #expect(calls.withLock { $0 } == 1, "the app was asked \(calls.withLock { $0 }) times for one six-chunk paste")

            let second = try await desktop.ferry("paste", "--force")
            #expect(second.succeeded, "\(second.stderr)")
            #expect(firstDifference(second.standardOutput, data) == nil)
            #expect(calls.withLock { $0 } == 2, "a second paste is a second ask, as on the laptop itself")
            await writer.close()
        }
    }

    @Test("a lazy copy's app killed mid-pull: the desktop's paste fails at once with Unavailable naming the laptop")
    func appKilledMidPull() async throws {
        try await withDevices { engine, laptop, desktop in
            let file = engine.directory.appendingPathComponent("lazy.bin")
            try Self.noise(48 << 20, seed: 2202).write(to: file)
            let copy = try RunningProcess(try BuiltProducts.executable("ferry"),
                                          ["copy", "--lazy", "--type", "public.data", file.path],
                                          environment: laptop.bus.environment())
            defer { copy.terminate(grace: .seconds(1)) }
            #expect(try await eventually { try await desktop.ferry("types").stdout.contains("remote laptop") },
                    "the lazy copy was never announced")

            let paste = try RunningProcess(try BuiltProducts.executable("ferry"), ["paste", "--force"],
                                           environment: desktop.bus.environment())
            var first = [UInt8](repeating: 0, count: 65536)
            #expect(read(paste.standardOutput, &first, first.count) > 0, "no bytes before the app went")
            // The reader pauses: the laptop holds the app back (a few MiB ahead), so it is still
            // writing the 48 MiB when it dies.
            copy.send(SIGKILL)
            let started = ContinuousClock.now
            var rest = 0
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let n = read(paste.standardOutput, &buffer, buffer.count)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                rest += n
            }
            let status = await paste.waitForExit(timeout: .seconds(15))
            #expect(status == 4, "a vanished app is Unavailable (exit 4), as for a local paste; got \(String(describing: status))")
            #expect(rest + first.count < 48 << 20, "all 48 MiB arrived: the app was not killed mid-pull")
            #expect(ContinuousClock.now - started < .seconds(10))
            let message = errorText(of: paste.standardError)
            #expect(message.contains("laptop"), "the error names the source device: \(message)")
        }
    }

    @Test("a local-only promise is never announced nor asked for, and an ownApp promise stays behind")
    func localOnlyPromiseStays() async throws {
        try await withDevices { engine, laptop, desktop in
            let spy = try engine.link(as: "desktop")
            defer { spy.close() }
            let seen = Mutex<[UInt8]>([])
            for subject in ["_INBOX.>", "$KV.ferry_pb.>"] {
                try spy.subscribe(subject) { bytes, _ in seen.withLock { $0 += bytes } }
            }
            let writer = try await app(on: laptop)
            let calls = Mutex(0)
            let marker = "LAZY-LOCALONLY-77e0"
            func promise(_ text: String, _ visibility: ItemProvider.Visibility = .all, type: ContentType = .utf8PlainText) -> ItemProvider {
                var provider = ItemProvider()
                provider.registerDataRepresentation(for: type, visibility: visibility) { _ in
                    calls.withLock { $0 += 1 }
                    return Data(text.utf8)
                }
                return provider
            }
            // Public text and an ownApp HTML of one item: only the text crosses.
            var mixed = promise("shared lazily")
            mixed.registerDataRepresentation(for: .html, visibility: .ownApp) { _ in
                calls.withLock { $0 += 1 }
                return Data("<p>\(marker)-own</p>".utf8)
            }
            try await writer.general.setItemProviders([mixed])
            #expect(try await eventually { try await desktop.ferry("paste").stdout == "shared lazily" })
            let types = try await desktop.ferry("types").stdout
            #expect(!types.contains("html"), "an ownApp promise was announced: \(types)")
            #expect(calls.withLock { $0 } == 1)

            try await writer.general.setItemProviders([promise(marker)], localOnly: true)
            #expect(try await eventually { try await desktop.ferry("types").stdout.isEmpty },
                    "the laptop's older item stayed on the desktop after a local-only promise")
            await provingNothingHappens(for: .milliseconds(500))
            #expect(calls.withLock { $0 } == 1, "the local-only promise's app was asked for its bytes")
            let bytes = Array(marker.utf8)
            let crossed = seen.withLock { all in
                all.count >= bytes.count && (0...(all.count - bytes.count)).contains { all[$0..<($0 + bytes.count)].elementsEqual(bytes) }
            }
            #expect(!crossed, "the marker crossed the engine")
            await writer.close()
        }
    }
}
