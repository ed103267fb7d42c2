import FerryContinuity
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// Universal Clipboard end to end: a real nats-server (TLS, two accounts, nkey users), two
/// private buses with a ferryd each, and the real `ferry` CLI.
@Suite("Continuity: Universal Clipboard over NATS", .serialized)
struct UniversalClipboardTests {
    /// Runs `body` with an engine and ALICE's laptop and desktop; stops them all, also on failure.
    func withDevices(_ body: (ContinuityEngine, Device, Device) async throws -> Void) async throws {
        try await ContinuityEngine.withLaptopAndDesktop(body)
    }

    /// Whether `ferry types` on `device` lists a remote item from `source`.
    func showsRemote(_ device: Device, from source: String) async throws -> Bool {
        try await device.ferry("types").stdout.contains("remote \(source)")
    }

    @Test("a copy on the laptop shows as remote on the desktop and pastes byte for byte")
    func smallCopy() async throws {
        try await withDevices { _, laptop, desktop in
            #expect(try await laptop.ferry("copy", "--text", "hello from the laptop").succeeded)
            #expect(try await eventually { try await showsRemote(desktop, from: "laptop") },
                    "the desktop never listed the laptop's copy as remote")
            let types = try await desktop.ferry("types").stdout
            #expect(types.contains("promised"), "a remote item's bytes stay on its source: \(types)")
            let pasted = try await desktop.ferry("paste")
            #expect(pasted.succeeded, "\(pasted.stderr)")
            #expect(pasted.stdout == "hello from the laptop")
            // The laptop's own pasteboard is its local copy, not a remote echo.
            #expect(try await !showsRemote(laptop, from: "desktop"))
            #expect(try await laptop.ferry("paste").stdout == "hello from the laptop")
        }
    }

    @Test("a newer local copy wins over an older remote one, and a newer remote one over an older local one")
    func newerWins() async throws {
        try await withDevices { (_, laptop, desktop) async throws in
            #expect(try await laptop.ferry("copy", "--text", "first, laptop").succeeded)
            #expect(try await eventually { try await desktop.ferry("paste").stdout == "first, laptop" })
            #expect(try await desktop.ferry("copy", "--text", "second, desktop").succeeded)
            #expect(try await eventually { try await laptop.ferry("paste").stdout == "second, desktop" })
            // The desktop's own copy stays: the laptop's older announcement does not come back.
            await provingNothingHappens(for: .milliseconds(300))
            #expect(try await desktop.ferry("paste").stdout == "second, desktop")
            #expect(try await !showsRemote(desktop, from: "laptop"))
        }
    }

    @Test("64 MiB pastes byte for byte, streamed: the reader has bytes before the source has served the last chunk")
    func largeStreamed() async throws {
        try await withDevices { engine, laptop, desktop in
            var generator = SplitMix64(seed: 22)
            var data = Data(count: 64 << 20)
            data.withUnsafeMutableBytes { raw in
                let words = raw.bindMemory(to: UInt64.self)
                for index in words.indices { words[index] = generator.next() }
            }
            let file = engine.directory.appendingPathComponent("big.bin")
            try data.write(to: file)
            #expect(try await laptop.ferry("copy", "--type", "public.data", file.path).succeeded)
            #expect(try await eventually { try await showsRemote(desktop, from: "laptop") })

            let started = ContinuousClock.now
            let paste = try RunningProcess(try BuiltProducts.executable("ferry"), ["paste", "--force"],
                                           environment: desktop.bus.environment())
            let (pasted, firstBytesAt) = drain(paste.standardOutput)
            let total = ContinuousClock.now - started
            #expect(await paste.waitForExit(timeout: .seconds(10)) == 0)
            #expect(pasted.count == data.count)
            #expect(firstDifference(pasted, data) == nil)
            let first = try #require(firstBytesAt.map { $0 - started }, "nothing came out")
            #expect(first < total * 0.5, "the first bytes (\(first)) came long before the end (\(total))")
        }
    }

    /// Everything from `fd` to end of file, and when its first bytes came.
    func drain(_ fd: Int32) -> (Data, ContinuousClock.Instant?) {
        var data = Data()
        var first: ContinuousClock.Instant?
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return (data, first) }
            if first == nil { first = .now }
            data.append(contentsOf: buffer[0..<n])
        }
    }

    @Test("localOnly and sensitive never reach the engine: not on any subject of the account, not in its store")
    func neverLeaves() async throws {
        try await withDevices { engine, laptop, desktop in
            // A catch-all subscriber in ALICE's account (the desktop's credentials may see
            // inboxes and announcements; a raw `>` needs its own user, so the test watches
            // every subject the devices use).
            let spy = try engine.link(as: "desktop")
            defer { spy.close() }
            let seen = Mutex<[UInt8]>([])
            for subject in ["_INBOX.>", "$KV.ferry_pb.>"] {
                try spy.subscribe(subject) { bytes, _ in seen.withLock { $0 += bytes } }
            }
            #expect(try await laptop.ferry("copy", "--text", "public baseline").succeeded)
            #expect(try await eventually { try await desktop.ferry("paste").stdout == "public baseline" })

            let markers = ["LOCALONLY-4c1f", "SENSITIVE-93ab"]
            #expect(try await laptop.ferry("copy", "--local-only", "--text", markers[0]).succeeded)
            #expect(try await laptop.ferry("copy", "--sensitive", "--text", markers[1]).succeeded)
            // The laptop says it copied something that stays there: the baseline, which it no
            // longer serves, goes from the desktop, and nothing takes its place.
            #expect(try await eventually { try await desktop.ferry("types").stdout.isEmpty },
                    "the laptop's older item stayed on the desktop after a local-only copy")
            let after = try await desktop.ferry("paste")
            #expect(!markers.contains { after.stdout.contains($0) || after.stderr.contains($0) })
            for marker in markers {
                let bytes = Array(marker.utf8)
                let found = seen.withLock { all in
                    all.count >= bytes.count && (0...(all.count - bytes.count)).contains { all[$0..<($0 + bytes.count)].elementsEqual(bytes) }
                }
                #expect(!found, "\(marker) crossed the engine")
                #expect(!engine.storeContains(Data(marker.utf8)), "\(marker) is in the engine's store")
            }
            // Even the public copy is sealed: its plaintext is in neither.
            #expect(!engine.storeContains(Data("public baseline".utf8)))
        }
    }

    @Test("expiry travels with the item: gone on the desktop at its time, even with the engine stopped")
    func expiryWithEngineStopped() async throws {
        try await withDevices { (engine, laptop, desktop) async throws in
            #expect(try await laptop.ferry("copy", "--expires", "3", "--text", "brief").succeeded)
            #expect(try await eventually { try await showsRemote(desktop, from: "laptop") })
            await engine.stopServer()
            #expect(try await eventually(.seconds(8)) { try await desktop.ferry("types").stdout.isEmpty },
                    "the expired remote item stayed on the desktop")
        }
    }

    @Test("the source killed mid-transfer: the paste fails at once naming the source device, no hang")
    func sourceKilled() async throws {
        try await withDevices { engine, laptop, desktop in
            let file = engine.directory.appendingPathComponent("mid.bin")
            try Data(repeating: 0x5A, count: 48 << 20).write(to: file)
            #expect(try await laptop.ferry("copy", "--type", "public.data", file.path).succeeded)
            #expect(try await eventually { try await showsRemote(desktop, from: "laptop") })
            let paste = try RunningProcess(try BuiltProducts.executable("ferry"), ["paste", "--force"],
                                           environment: desktop.bus.environment())
            var first = [UInt8](repeating: 0, count: 65536)
            #expect(read(paste.standardOutput, &first, first.count) > 0, "no bytes before the kill")
            laptop.daemon?.send(SIGKILL)
            let started = ContinuousClock.now
            let (_, _) = drain(paste.standardOutput)
            let status = await paste.waitForExit(timeout: .seconds(10))
            #expect(status != nil && status != 0, "the paste neither hung nor pretended to succeed")
            #expect(ContinuousClock.now - started < .seconds(5))
            let message = errorText(of: paste.standardError)
            #expect(message.contains("laptop"), "the error names the source device: \(message)")
        }
    }

    @Test("the source frozen before a paste: Timeout after the chunk timeout; killed: it fails at once; both name the source")
    func sourceSilentOrGone() async throws {
        try await withDevices { _, laptop, desktop in
            #expect(try await laptop.ferry("copy", "--text", "asked for too late").succeeded)
            #expect(try await eventually { try await showsRemote(desktop, from: "laptop") })

            laptop.daemon?.send(SIGSTOP)
            var started = ContinuousClock.now
            let frozen = try await desktop.ferry("paste")
            let waited = ContinuousClock.now - started
            laptop.daemon?.send(SIGCONT)
            #expect(frozen.status != 0 && frozen.stdout.isEmpty, "a frozen source's paste succeeded: \(frozen.stdout)")
            #expect(frozen.stderr.contains("laptop") && frozen.stderr.contains("did not answer"), "\(frozen.stderr)")
            #expect(waited >= .seconds(2.5) && waited < .seconds(8), "a partition fails after the chunk timeout (3 s), not \(waited)")

            laptop.daemon?.send(SIGKILL)
            _ = await laptop.daemon?.waitForExit(timeout: .seconds(5))
            started = ContinuousClock.now
            let gone = try await desktop.ferry("paste")
            #expect(gone.status != 0 && gone.stdout.isEmpty, "a killed source's paste succeeded: \(gone.stdout)")
            #expect(gone.stderr.contains("laptop") && gone.stderr.contains("gone"), "\(gone.stderr)")
            #expect(ContinuousClock.now - started < .seconds(2), "no responders is told at once")
        }
    }

    @Test("the engine stopped: local copies still work and remote items go; restarted: the laptop's copy is back")
    func engineRestart() async throws {
        try await withDevices { engine, laptop, desktop in
            #expect(try await laptop.ferry("copy", "--text", "before the outage").succeeded)
            #expect(try await eventually { try await showsRemote(desktop, from: "laptop") })
            await engine.stopServer()
            #expect(try await eventually { try await !showsRemote(desktop, from: "laptop") },
                    "the remote item stayed while the engine was gone")
            #expect(try await desktop.ferry("copy", "--text", "local while offline").succeeded)
            #expect(try await desktop.ferry("paste").stdout == "local while offline")
            #expect(try await laptop.ferry("copy", "--text", "laptop while offline").succeeded)
            #expect(try await laptop.ferry("paste").stdout == "laptop while offline")
            try await engine.start()
            #expect(try await eventually(.seconds(20)) { try await desktop.ferry("paste").stdout == "laptop while offline" },
                    "after the reconnect the laptop's newest copy did not come back")
        }
    }

    @Test("another user's device sees nothing, and a device cannot announce as another")
    func accountsAndPermissions() async throws {
        try await withDevices { engine, laptop, desktop in
            let phone = try await Device("phone", engine: engine)
            defer { phone.stop() }
            #expect(try await laptop.ferry("copy", "--text", "alice only").succeeded)
            #expect(try await eventually { try await showsRemote(desktop, from: "laptop") })
            await provingNothingHappens(for: .milliseconds(500))
            #expect(try await phone.ferry("types").stdout.isEmpty, "BOB's phone saw ALICE's copy")

            // The desktop's credentials cannot put under the laptop's key.
            let forger = try engine.link(as: "desktop")
            defer { forger.close() }
            let bucket = try forger.bucket("ferry_pb", ttl: .seconds(120))
            #expect(throws: EngineError.self, "the engine accepted an announcement as another device") {
                try bucket.put("laptop", Array("forged".utf8))
            }
            #expect(try await desktop.ferry("paste").stdout == "alice only")
        }
    }
}
