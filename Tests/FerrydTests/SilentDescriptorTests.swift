import DBus
import FerryTestSupport
import Foundation
import Testing

/// Writes whose descriptors never deliver: they wait without a thread and delay nobody else.
@Suite("Descriptors that never deliver", .serialized)
struct SilentDescriptorTests {
    @Test("50 silent descriptors from one client take no thread each, and another client's pasteboard work stays quick")
    func silentDescriptorsStarveNobody() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let attacker = try await fixture.connect()
        let victim = try await fixture.connect()
        // Warm up both connections and the broker's threads.
        try await FerrydFixture.setItems(victim, [FerrydFixture.item([FerrydFixture.representation("public.utf8-plain-text", "warm")])])
        let baseline = try #require(Self.threads(of: daemon.pid))
        let descriptors = try #require(Self.openDescriptors(of: daemon.pid))

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-silent-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var writers: [FileDescriptor] = []
        var calls: [Task<Void, Never>] = []
        for index in 0..<50 {
            let silent: FileDescriptor
            switch index % 3 {
            case 0:
                let pipe = try FileDescriptor.pipe()
                writers.append(pipe.write)  // kept open, never written
                silent = pipe.read
            case 1:
                let path = folder.appendingPathComponent("fifo\(index)").path
                #expect(mkfifo(path, 0o600) == 0)
                silent = FileDescriptor(taking: open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC))  // no writer, ever
            default:
                var pair: [Int32] = [-1, -1]
                #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
                writers.append(FileDescriptor(taking: pair[1]))  // kept open, never written
                silent = FileDescriptor(taking: pair[0])
            }
            let item = FerrydFixture.item([FerrydFixture.representation("public.data", fd: silent)])
            calls.append(Task { _ = try? await FerrydFixture.setItems(attacker, [item], timeout: .seconds(60)) })
        }
        defer { calls.forEach { $0.cancel() } }
        // The 50 calls have reached the broker once it holds their 50 descriptors.
        #expect(await eventually { (Self.openDescriptors(of: daemon.pid) ?? 0) >= descriptors + 50 },
                "ferryd never held the 50 silent descriptors")

        let start = ContinuousClock.now
        let path = try await FerrydFixture.call(victim, "Pasteboard", [.string("victim"), .variantDictionary([:])])[0].get(ObjectPath.self)
        try await FerrydFixture.setItems(victim, [FerrydFixture.item([FerrydFixture.representation("public.utf8-plain-text", "mine")])],
                                         at: path)
        let items = try await FerrydFixture.items(victim, at: path)
        let read = try await FerrydFixture.read(victim, 0, "public.utf8-plain-text", at: path)
        let elapsed = ContinuousClock.now - start
        #expect(items.count == 1)
        #expect(read.deliveredType == "public.utf8-plain-text")
        #expect(elapsed < .seconds(3), "another client's create, write, list and read took \(elapsed)")

        let during = try #require(Self.threads(of: daemon.pid))
        #expect(during < baseline + 10, "ferryd went from \(baseline) to \(during) threads")
        #expect(daemon.isRunning)
        _ = writers
    }

    @Test("a silent descriptor still times out with org.ferry.Error.Timeout")
    func silentDescriptorTimesOut() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start(["--descriptor-timeout", "1"])
        defer { daemon.stop() }
        let connection = try await fixture.connect()
        let pipe = try FileDescriptor.pipe()
        let item = FerrydFixture.item([FerrydFixture.representation("public.data", fd: pipe.read)])
        let start = ContinuousClock.now
        let failure = await FerrydFixture.failure { try await FerrydFixture.setItems(connection, [item]) }
        #expect(failure?.name == "org.ferry.Error.Timeout", "\(String(describing: failure))")
        #expect(ContinuousClock.now - start < .seconds(5))
        _ = pipe.write
    }

    /// How many descriptors process `pid` has open (the entries of /proc/PID/fd).
    static func openDescriptors(of pid: Int32) -> Int? {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd"))?.count
    }

    /// The `Threads:` line of /proc/PID/status.
    static func threads(of pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("Threads:") {
            return Int(line.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }
}

/// What one SetItems may carry in all, so one caller's huge write cannot hold everyone up.
@Suite("One write's size in all", .serialized)
struct WriteSizeLimitTests {
    typealias F = FerrydFixture

    static func items(_ count: Int, representations: Int, bytes: Int) -> [DBusValue] {
        let data = [UInt8](repeating: 0x61, count: bytes)
        return (0..<count).map { _ in
            F.item((0..<representations).map { F.representation("com.example.limit\($0)", data) })
        }
    }

    @Test("more than 4096 representations or 48 MiB inline in one write is TooLarge, answered quickly; nothing is written")
    func limitsInAll() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        defer { daemon.stop() }
        let writer = try await fixture.connect()
        let before = try await F.setItems(writer, [F.item([F.representation("public.utf8-plain-text", "kept")])]).changeCount

        let start = ContinuousClock.now
        let many = await F.failure { try await F.setItems(writer, Self.items(1000, representations: 5, bytes: 16)) }
        #expect(many?.name == "org.ferry.Error.TooLarge", "\(String(describing: many))")
        #expect(many?.message.contains("4096 representations") == true)
        #expect(ContinuousClock.now - start < .seconds(10))

        let heavy = await F.failure { try await F.setItems(writer, Self.items(50, representations: 1, bytes: 1 << 20)) }
        #expect(heavy?.name == "org.ferry.Error.TooLarge", "\(String(describing: heavy))")
        #expect(heavy?.message.contains("inline") == true)

        let items = try await F.items(writer)
        #expect(items.count == 1, "nothing was written")
        #expect(try F.types(items[0]) == ["public.utf8-plain-text"])
        let after = try await F.setItems(writer, [F.item([F.representation("public.utf8-plain-text", "next")])]).changeCount
        #expect(after == before + 1, "the refused writes did not change the pasteboard")

        // Right at the limits is fine.
        try await F.setItems(writer, Self.items(64, representations: 64, bytes: 16))
        #expect(try await F.items(writer).count == 64)
        #expect(daemon.isRunning)
    }
}
