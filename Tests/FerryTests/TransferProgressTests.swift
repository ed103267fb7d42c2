import DBus
import Ferry
import FerryModel
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// Promised reads across two processes (issue #21 item 2): the source is `promise-source`, a
/// process of its own on the private bus; the reader is this test. The reader's progress advances
/// while the bytes arrive, cancelling the reader reaches the source's loader, and streamed
/// representations reach the reader whole without the source holding them.
@Suite("Ferry: progress and cancellation of promised reads across processes", .serialized)
struct TransferProgressTests {
    static let size = 48 << 20

    /// Byte `index` of the payload, as `promise-source` makes it.
    static func pattern(_ index: Int) -> UInt8 { UInt8(truncatingIfNeeded: index &* 7 ^ index >> 13) }

    static func payload(_ count: Int) -> [UInt8] { (0..<count).map(pattern) }

    /// The whole payload, made once: building 48 MiB byte by byte in a debug build takes seconds.
    static let fullPayload = payload(size)

    /// Whether `bytes` is the whole payload, compared with memcmp (an element-wise `==` over
    /// 48 MiB is slow in a debug build).
    static func isFullPayload(_ bytes: [UInt8]) -> Bool {
        bytes.count == fullPayload.count && bytes.withUnsafeBytes { read in
            fullPayload.withUnsafeBytes { memcmp(read.baseAddress!, $0.baseAddress!, read.count) == 0 }
        }
    }

    /// Starts `promise-source` promising `form` on the fixture's general pasteboard.
    static func source(_ fixture: ClientFixture, _ form: String, size: Int = size, delayMS: Int = 0,
                       file: URL? = nil) async throws -> ServiceProcess {
        var arguments = [fixture.bus.address, form, "\(size)", "\(delayMS)"]
        if let file { arguments.append(file.path) }
        return try await ServiceProcess(try BuiltProducts.executable("promise-source"), arguments,
                                        environment: ProcessInfo.processInfo.environment)
    }

    /// The fractions a progress went through, in order.
    final class Fractions: Sendable {
        final class Seen: Sendable {
            let values = Mutex<[Double]>([])
        }

        private let seen: Seen
        let progress: ItemProvider.Progress

        init() {
            let seen = Seen()
            self.seen = seen
            progress = ItemProvider.Progress { completed, total in
                guard total > 0 else { return }
                seen.values.withLock { $0.append(Double(completed) / Double(total)) }
            }
        }

        var values: [Double] { seen.values.withLock { $0 } }
    }

    /// Waits until `condition` holds, at most `timeout`; returns how long it took, nil on timeout.
    static func waitUntil(_ timeout: Duration, _ condition: () -> Bool) async throws -> Duration? {
        let start = ContinuousClock.now
        while !condition() {
            if ContinuousClock.now - start > timeout { return nil }
            try await Task.sleep(for: .milliseconds(5))
        }
        return ContinuousClock.now - start
    }

    /// A `/proc/<pid>/status` field in KiB.
    static func memory(_ pid: Int32, _ field: String) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix(field + ":") })
        return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
    }

    /// Makes the kernel forget `pid`'s peak resident size (VmHWM starts again from VmRSS).
    static func resetPeak(_ pid: Int32) throws {
        try "5".write(toFile: "/proc/\(pid)/clear_refs", atomically: false, encoding: .utf8)
    }

    @Test("a 48 MiB promised read reports many fractions between 0 and 1 before it completes")
    func progressAdvancesWhileBytesArrive() async throws {
        try await ClientFixture.with { fixture in
            let source = try await Self.source(fixture, "loader")
            defer { source.stop() }
            let reader = try await fixture.client()
            let read = try await reader.general.read(type: .data, userAction: true)
            #expect(read.size == Int64(Self.size))
            let fractions = Fractions()
            let bytes = try await read.bytes(progress: fractions.progress)
            #expect(bytes.count == Self.size)
            #expect(Self.isFullPayload(bytes))
            let values = fractions.values
            let between = Set(values.filter { $0 > 0 && $0 < 1 })
            #expect(between.count >= 5, "fractions seen: \(values)")
            #expect(values == values.sorted(), "progress went backwards: \(values)")
            #expect(fractions.progress.fractionCompleted == 1)
            #expect(fractions.progress.totalUnitCount == Int64(Self.size))
            await reader.close()
        }
    }

    @Test("cancelling the reader mid-transfer cancels the source's sequence within 2 s; the source serves the next paste")
    func cancellingTheReaderReachesTheSequence() async throws {
        try await ClientFixture.with { fixture in
            // 48 chunks 40 ms apart: about 2 s to stream, so the cancellation lands mid-way.
            let source = try await Self.source(fixture, "sequence", delayMS: 40)
            defer { source.stop() }
            let reader = try await fixture.client()
            let read = try await reader.general.read(type: .data, userAction: true)
            let fractions = Fractions()
            let reading = Task { try await read.bytes(progress: fractions.progress) }
            let started = try await Self.waitUntil(.seconds(20)) { fractions.progress.completedUnitCount >= 4 << 20 }
            #expect(started != nil, "no 4 MiB arrived")
            reading.cancel()
            let cancelledAt = ContinuousClock.now
            await #expect(throws: FerryError.self) { _ = try await reading.value }
            #expect(ContinuousClock.now - cancelledAt < .seconds(1), "the reader did not stop promptly")
            #expect(fractions.progress.completedUnitCount < Int64(Self.size))
            let seen = try await Self.waitUntil(.seconds(2)) { source.standardOutput.contains("CANCELLED sequence") }
            #expect(seen != nil, "the source's sequence did not see the cancellation: \(source.standardOutput)")

            // The source is still there and serves the whole payload again.
            #expect(source.isRunning)
            let again = try await reader.general.read(type: .data, userAction: true)
            #expect(Self.isFullPayload(try await again.bytes()))
            await reader.close()
        }
    }

    @Test("cancelling a reader waiting for a slow loader cancels the loader's task within 2 s")
    func cancellingTheReaderReachesTheLoader() async throws {
        try await ClientFixture.with { fixture in
            // The loader builds 48 MiB in steps 100 ms apart (about 5 s) before anything is written.
            let source = try await Self.source(fixture, "loader", delayMS: 100)
            defer { source.stop() }
            let reader = try await fixture.client()
            let read = try await reader.general.read(type: .data, userAction: true)
            let reading = Task { try await read.bytes() }
            try await Task.sleep(for: .milliseconds(300))
            reading.cancel()
            do {
                _ = try await reading.value
                Issue.record("the cancelled read returned bytes")
            } catch {
                #expect((error as? FerryError)?.code == .cancelled, "\(error)")
            }
            let seen = try await Self.waitUntil(.seconds(2)) { source.standardOutput.contains("CANCELLED loader") }
            #expect(seen != nil, "the source's loader did not see the cancellation: \(source.standardOutput)")
            // The loader's progress was cancelled along with its task.
            #expect(source.standardOutput.contains("progress.isCancelled=true"))
            #expect(source.isRunning)
            await reader.close()
        }
    }

    @Test("streamed representations (an AsyncSequence, a FileHandle) arrive byte-identical without the source holding them",
          arguments: ["sequence", "handle"])
    func streamingKeepsTheSourceSmall(_ form: String) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-stream-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("payload.bin")
        try Data(Self.fullPayload).write(to: file)
        try await ClientFixture.with { fixture in
            let streaming = try await Self.source(fixture, form, file: file)
            defer { streaming.stop() }
            let reader = try await fixture.client()
            let grown = try await Self.peakGrowth(of: streaming, reading: reader)
            // The whole payload would be 49152 KiB; a streamed one passes through in 1 MiB chunks.
            #expect(grown < 16 << 10, "\(form): the source's peak resident size grew by \(grown) KiB")
            await reader.close()
        }
    }

    @Test("the resident-size measurement sees a loader that builds the whole payload")
    func loaderGrowsTheSource() async throws {
        try await ClientFixture.with { fixture in
            let loader = try await Self.source(fixture, "loader")
            defer { loader.stop() }
            let reader = try await fixture.client()
            let grown = try await Self.peakGrowth(of: loader, reading: reader)
            #expect(grown >= 40 << 10, "a 48 MiB loader grew the source by only \(grown) KiB")
            await reader.close()
        }
    }

    /// Reads the payload from `source` (checking it byte for byte) and returns how far the
    /// source's peak resident size rose above its resident size before the read, in KiB.
    static func peakGrowth(of source: ServiceProcess, reading reader: FerryClient) async throws -> Int {
        try resetPeak(source.pid)
        let before = try memory(source.pid, "VmRSS")
        let read = try await reader.general.read(type: .data, userAction: true)
        let bytes = try await read.bytes()
        #expect(bytes.count == size)
        #expect(isFullPayload(bytes))
        return try memory(source.pid, "VmHWM") - before
    }
}
