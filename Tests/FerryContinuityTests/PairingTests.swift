import FerryContinuity
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// Pairing end to end (issue #22 item 5): a real nats-server, real buses and ferryds, and the
/// real `ferry continuity` commands. A new device starts with no secret at all: its ferryd makes
/// its creds, the test plays the engine's admin (adds the public key, reloads), then the device
/// makes the user's key (init) or gets it from a paired device (join + approve).
@Suite("Continuity: pairing", .serialized)
struct PairingTests {
    /// Runs `body` with an engine and ALICE's laptop (paired: the fixture gave it the key);
    /// stops everything, also on failure.
    func withLaptop(_ body: (ContinuityEngine, Device, Cleanup) async throws -> Void) async throws {
        let engine = try await ContinuityEngine()
        let cleanup = Cleanup()
        do {
            let laptop = try await Device("laptop", engine: engine)
            cleanup.add(laptop)
            #expect(try await eventually { try await status(laptop)["state"] as? String == "paired" },
                    "the laptop (the fixture gave it the key) never connected")
            try await body(engine, laptop, cleanup)
        } catch {
            await cleanup.run()
            await engine.stop()
            throw error
        }
        await cleanup.run()
        await engine.stop()
    }

    /// The devices and CLI processes a test started, stopped by PID at the end.
    final class Cleanup: Sendable {
        private let devices = Mutex<[Device]>([])
        private let processes = Mutex<[RunningCLI]>([])
        func add(_ device: Device) { devices.withLock { $0.append(device) } }
        func add(_ process: RunningCLI) { processes.withLock { $0.append(process) } }
        func run() async {
            for process in processes.withLock({ $0 }) { process.child.kill() }
            let devices = devices.withLock { $0 }
            await offThePool { for device in devices { device.stop() } }
        }
    }

    /// A new device `name` whose ferryd makes its creds in `folder`; the engine's admin then
    /// lists its public key, and it connects unpaired.
    func newDevice(_ name: String, engine: ContinuityEngine, cleanup: Cleanup, extra: [String] = []) async throws -> (Device, URL) {
        let folder = engine.directory.appendingPathComponent("config-\(name)/ferry")
        let device = try await Device(name, engine: engine, arguments: engine.newDeviceArguments(name, folder: folder), extra: extra)
        cleanup.add(device)
        let key = try #require(try await status(device)["publicKey"] as? String)
        try engine.addDevice(name, publicKey: key)
        #expect(try await eventually(.seconds(20)) { try await status(device)["state"] as? String == "unpaired" },
                "the device never connected after the engine listed its key")
        return (device, folder)
    }

    func status(_ device: Device) async throws -> [String: Any] {
        let result = try await device.ferry("continuity", "status", "--json")
        guard result.succeeded, let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else {
            throw EngineSetupError("ferry continuity status --json: \(result.status) \(result.stderr)")
        }
        return object
    }

    func mode(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    /// `ferry continuity join` running in the background on `device`, its code once printed (its
    /// standard input `input`, or held open until `answer(_:)` with `holdingInput`).
    func startJoin(_ device: Device, cleanup: Cleanup, _ arguments: [String] = ["--yes"], input: String? = nil,
                   holdingInput: Bool = false) async throws -> (RunningCLI, String)
    {
        let join = try RunningCLI(device, ["continuity", "join"] + arguments, input: input, holdingInput: holdingInput)
        cleanup.add(join)
        var code: String?
        _ = await eventually {
            code = join.output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
                .first { $0.count == 9 && $0.dropFirst(4).first == "-" }
            return code != nil || !join.child.isRunning
        }
        return (join, try #require(code, "join printed no code: \(join.output) \(join.errors)"))
    }

    @Test("a device without creds makes them (0600 in a 0700 folder beside continuity.conf) and shows its public key; unpaired it shares nothing")
    func newDeviceMakesItsSeed() async throws {
        try await withLaptop { engine, laptop, cleanup in
            let config = engine.directory.appendingPathComponent("xdg-tablet")
            let tablet = try await Device("tablet", engine: engine,
                                          arguments: ["--continuity", engine.url, "--continuity-ca", engine.caFile, "--device", "tablet"],
                                          environment: ["XDG_CONFIG_HOME": config.path])
            cleanup.add(tablet)
            let seed = config.appendingPathComponent("ferry/continuity.nk").path
            var shown = try await status(tablet)
            #expect(shown["state"] as? String == "waiting", "the engine does not list the key yet: \(shown)")
            #expect(shown["device"] as? String == "tablet")
            #expect(shown["engine"] as? String == engine.url)
            let key = try #require(shown["publicKey"] as? String)
            #expect(key.hasPrefix("U") && key.count == 56)
            #expect(try NKey.publicKey(ofSeedFile: seed) == key, "the status shows the key of the seed ferryd wrote")
            #expect(try mode(seed) == 0o600)
            #expect(try mode(config.appendingPathComponent("ferry").path) == 0o700)

            let human = try await tablet.ferry("continuity", "status")
            #expect(human.stdout.contains("state:      waiting for the engine\n"), "\(human.stdout)")
            #expect(human.stdout.contains("public key: \(key)\n"))

            try engine.addDevice("tablet", publicKey: key)
            #expect(try await eventually(.seconds(20)) { try await status(tablet)["state"] as? String == "unpaired" })
            shown = try await status(tablet)
            #expect(shown["publicKey"] as? String == key, "the seed is kept, not made again")
            #expect(!FileManager.default.fileExists(atPath: config.appendingPathComponent("ferry/continuity.key").path))

            // Unpaired: connected, but the laptop's copy does not arrive.
            #expect(try await laptop.ferry("copy", "--text", "not for the unpaired").succeeded)
            await provingNothingHappens(for: .seconds(1))
            #expect(try await !tablet.ferry("types").stdout.contains("remote laptop"))
        }
    }

    @Test("init makes the key on an unpaired device and it shares at once; a second init refuses and keeps the key")
    func initMakesTheKey() async throws {
        try await withLaptop { engine, _, cleanup in
            let (tablet, folder) = try await newDevice("tablet", engine: engine, cleanup: cleanup)
            let keyFile = folder.appendingPathComponent("continuity.key").path
            let made = try await tablet.ferry("continuity", "init")
            #expect(made.succeeded, "\(made.stderr)")
            #expect(try await status(tablet)["state"] as? String == "paired")
            #expect(try mode(keyFile) == 0o600)
            let key = try String(contentsOfFile: keyFile, encoding: .utf8)
            #expect(key.count == 65 && key.utf8.dropLast().allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })

            let again = try await tablet.ferry("continuity", "init")
            #expect(again.status == 3, "\(again.stderr)")
            #expect(again.stderr.contains("has the user's key already"), "\(again.stderr)")
            #expect(try String(contentsOfFile: keyFile, encoding: .utf8) == key)

            // No restart: its next copy is announced in the engine's bucket.
            let watcher = try engine.link(as: "laptop")
            defer { watcher.close() }
            let seen = Mutex<Set<String>>([])
            let watch = try watcher.bucket("ferry_pb", ttl: .seconds(120)).watchAll { key, _ in seen.withLock { _ = $0.insert(key) } }
            defer { watch.stop() }
            #expect(try await tablet.ferry("copy", "--text", "from the new tablet").succeeded)
            #expect(await eventually { seen.withLock { $0.contains("tablet") } }, "the tablet never announced its copy")
        }
    }

    @Test("join + approve with the same number on both: the key arrives, and a copy on the laptop pastes byte for byte on the tablet")
    func joinAndApprove() async throws {
        try await withLaptop { engine, laptop, cleanup in
            let (tablet, folder) = try await newDevice("tablet", engine: engine, cleanup: cleanup)
            let (join, code) = try await startJoin(tablet, cleanup: cleanup)
            let approve = try await laptop.ferry("continuity", "approve", code.lowercased(), "--yes")
            #expect(approve.succeeded, "\(approve.stderr)")
            #expect(await join.child.waitForExit(timeout: .seconds(10)) == 0, "\(join.output) \(join.errors)")
            let numbers = [approve.stdout, join.output].map { output in
                output.split(separator: "\n").first { $0.hasPrefix("Number: ") }.map(String.init)
            }
            #expect(numbers[0] != nil && numbers[0] == numbers[1], "both show the same number: \(numbers)")
            #expect(approve.stdout.contains("tablet joined."))
            #expect(join.output.contains("Paired with laptop"))

            let keyFile = folder.appendingPathComponent("continuity.key").path
            #expect(try mode(keyFile) == 0o600)
            let alice = try String(contentsOfFile: engine.keys["ALICE"]!, encoding: .utf8)
            #expect(try String(contentsOfFile: keyFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
                    == alice.trimmingCharacters(in: .whitespacesAndNewlines))
            #expect(try await status(tablet)["state"] as? String == "paired")

            var generator = SplitMix64(seed: 5)
            let payload = Data((0..<100_000).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
            let file = engine.directory.appendingPathComponent("photo.bin")
            try payload.write(to: file)
            #expect(try await laptop.ferry("copy", "--type", "public.data", file.path).succeeded)
            #expect(try await eventually { try await tablet.ferry("types").stdout.contains("remote laptop") })
            let pasted = try await tablet.ferry("paste", "--force")
            #expect(pasted.succeeded, "\(pasted.stderr)")
            #expect(pasted.standardOutput == payload, "\(pasted.standardOutput.count) bytes pasted of \(payload.count)")

            // Single use: the code no longer finds anyone.
            let reused = try await laptop.ferry("continuity", "approve", code, "--yes")
            #expect(reused.status == 2, "\(reused.stderr)")
        }
    }

    @Test("a no on the joining device ends the pairing on both with a named error, and nothing is written")
    func declinedWritesNothing() async throws {
        try await withLaptop { engine, laptop, cleanup in
            let (tablet, folder) = try await newDevice("tablet", engine: engine, cleanup: cleanup)
            let (join, code) = try await startJoin(tablet, cleanup: cleanup, [], input: "n\n")
            let approve = try await laptop.ferry("continuity", "approve", code, "--yes")
            #expect(approve.status == 4, "\(approve.stdout) \(approve.stderr)")
            #expect(approve.stderr.contains("numbers differ"), "\(approve.stderr)")
            #expect(await join.child.waitForExit(timeout: .seconds(10)) == 4, "\(join.output) \(join.errors)")
            #expect(join.errors.contains("numbers differ"), "\(join.errors)")
            #expect(join.output.contains("Number: "), "it was asked: \(join.output)")
            #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("continuity.key").path))
            #expect(try await status(tablet)["state"] as? String == "unpaired")
        }
    }

    @Test("a no on the approving device ends it on both; the joiner writes nothing")
    func declinedByApprover() async throws {
        try await withLaptop { engine, laptop, cleanup in
            let (tablet, folder) = try await newDevice("tablet", engine: engine, cleanup: cleanup)
            let (join, code) = try await startJoin(tablet, cleanup: cleanup)
            let approve = try await laptop.ferry(["continuity", "approve", code], input: Data("no\n".utf8))
            #expect(approve.status == 4, "\(approve.stdout) \(approve.stderr)")
            #expect(await join.child.waitForExit(timeout: .seconds(10)) == 4, "\(join.output) \(join.errors)")
            #expect(join.errors.contains("laptop"), "the joiner names who ended it: \(join.errors)")
            #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("continuity.key").path))
            #expect(try await status(tablet)["state"] as? String == "unpaired")
        }
    }

    @Test("a yes typed after the approving device said no gets that no, naming the device, not a stale-stage error")
    func yesAfterTheApproversNo() async throws {
        try await withLaptop { engine, laptop, cleanup in
            let (tablet, folder) = try await newDevice("tablet", engine: engine, cleanup: cleanup)
            let (join, code) = try await startJoin(tablet, cleanup: cleanup, [], holdingInput: true)
            let approve = try RunningCLI(laptop, ["continuity", "approve", code], holdingInput: true)
            cleanup.add(approve)
            // Both devices show the number; both users are asked, neither has answered.
            #expect(await eventually { join.output.contains("[y/N]") && approve.output.contains("[y/N]") },
                    "\(join.output) \(join.errors) \(approve.output) \(approve.errors)")
            approve.answer("no\n")
            #expect(await approve.child.waitForExit(timeout: .seconds(10)) == 4, "\(approve.output) \(approve.errors)")
            #expect(try await eventually {
                (try await status(tablet)["pairing"] as? [String: Any])?["stage"] as? String == "failed"
            }, "the approver's no never reached the joining device")
            // Only now does the joining user answer: Confirm meets a pairing that has already failed.
            join.answer("y\n")
            #expect(await join.child.waitForExit(timeout: .seconds(10)) == 4, "\(join.output) \(join.errors)")
            #expect(join.errors.contains("laptop"), "the joiner names who ended it: \(join.errors)")
            #expect(!join.errors.contains("not showing a number"), "\(join.errors)")
            #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("continuity.key").path))
        }
    }

    @Test("a wrong code answers NotFound at once; an expired code fails the join with Timeout and finds nobody after")
    func wrongAndExpiredCodes() async throws {
        try await withLaptop { engine, laptop, cleanup in
            let started = ContinuousClock.now
            let wrong = try await laptop.ferry("continuity", "approve", "ZZZZ-ZZZZ", "--yes")
            #expect(wrong.status == 2, "\(wrong.stderr)")
            #expect(wrong.stderr.contains("no device waits with code ZZZZ-ZZZZ"), "\(wrong.stderr)")
            #expect(ContinuousClock.now - started < .seconds(3), "no responders is immediate")
            let malformed = try await laptop.ferry("continuity", "approve", "hello", "--yes")
            #expect(malformed.status == 64, "\(malformed.stderr)")

            let (tablet, folder) = try await newDevice("tablet", engine: engine, cleanup: cleanup, extra: ["--pairing-lifetime", "2"])
            let (join, code) = try await startJoin(tablet, cleanup: cleanup)
            #expect(await join.child.waitForExit(timeout: .seconds(10)) == 5, "\(join.output) \(join.errors)")
            #expect(join.errors.contains("expired"), "\(join.errors)")
            let late = try await laptop.ferry("continuity", "approve", code, "--yes")
            #expect(late.status == 2, "\(late.stderr)")
            #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("continuity.key").path))
        }
    }

    func deviceNames(_ device: Device) async throws -> [String] {
        let result = try await device.ferry("continuity", "devices", "--json")
        guard result.succeeded, let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
              let devices = object["devices"] as? [[String: Any]] else {
            throw EngineSetupError("ferry continuity devices --json: \(result.status) \(result.stderr)")
        }
        return devices.compactMap { $0["device"] as? String }.sorted()
    }

    @Test("devices lists who paired whom; revoke rotates the key: the others adopt it, the revoked device no longer sees new copies and its copies are ignored")
    func revokeRotatesTheKey() async throws {
        try await withLaptop { engine, laptop, cleanup in
            let desktop = try await Device("desktop", engine: engine)
            cleanup.add(desktop)
            let (tablet, _) = try await newDevice("tablet", engine: engine, cleanup: cleanup)
            let (join, code) = try await startJoin(tablet, cleanup: cleanup)
            #expect(try await laptop.ferry("continuity", "approve", code, "--yes").succeeded)
            #expect(await join.child.waitForExit(timeout: .seconds(10)) == 0, "\(join.output) \(join.errors)")
            #expect(try await eventually { try await deviceNames(laptop) == ["desktop", "laptop", "tablet"] },
                    "the laptop never listed every paired device")
            let listed = try await laptop.ferry("continuity", "devices").stdout
            #expect(listed.split(separator: "\n").contains { $0.hasPrefix("tablet ") && $0.contains(" laptop ") },
                    "the tablet was paired by the laptop: \(listed)")

            let revoked = try await laptop.ferry("continuity", "revoke", "tablet")
            #expect(revoked.succeeded, "\(revoked.stderr)")
            #expect(revoked.stdout == "Revoked tablet; new key for: desktop and this one.\n", "\(revoked.stdout)")
            #expect(try await eventually { try await deviceNames(laptop) == ["desktop", "laptop"] },
                    "the revoked device's record, sealed with the old key, no longer opens")

            // The desktop adopted the new key: the laptop's next copy reaches it.
            #expect(try await laptop.ferry("copy", "--text", "after the revoke").succeeded)
            #expect(try await eventually { try await desktop.ferry("paste").stdout == "after the revoke" },
                    "the desktop never read the copy sealed with the new key")
            // The tablet holds only the old key: the copy never shows there, and its own copies are ignored.
            await provingNothingHappens(for: .seconds(1))
            #expect(try await tablet.ferry("paste").stdout != "after the revoke")
            #expect(try await !tablet.ferry("types").stdout.contains("remote laptop"))
            #expect(try await tablet.ferry("copy", "--text", "from the revoked tablet").succeeded)
            await provingNothingHappens(for: .seconds(1))
            #expect(try await laptop.ferry("paste").stdout == "after the revoke")
            #expect(try await desktop.ferry("paste").stdout == "after the revoke")

            let unknown = try await laptop.ferry("continuity", "revoke", "phone")
            #expect(unknown.status == 2, "\(unknown.stderr)")
        }
    }

    @Test("on a ferryd without continuity, status says off and the pairing commands answer Unavailable")
    func offDevice() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-off-\(getpid())-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: state) }
        let daemon = try await ServiceProcess(try BuiltProducts.executable("ferryd"), ["--bus", bus.address, "--state-dir", state.path],
                                              environment: bus.environment().merging(["XDG_CONFIG_HOME": state.path]) { $1 })
        defer { daemon.stop() }
        let environment = bus.environment()
        let status = try await ChildProcess.run(try BuiltProducts.executable("ferry"), ["continuity", "status"], environment: environment)
        #expect(status.stdout == "state:      off\n", "\(status.stdout) \(status.stderr)")
        let join = try await ChildProcess.run(try BuiltProducts.executable("ferry"), ["continuity", "join"], environment: environment)
        #expect(join.status == 4, "\(join.stderr)")
        #expect(join.stderr.contains("continuity is off"), "\(join.stderr)")
    }
}

/// A `ferry` command running in the background, its output collected as it comes.
final class RunningCLI: Sendable {
    let child: RunningProcess
    private let collected = Collected()

    final class Collected: Sendable {
        let text = Mutex<(out: String, err: String)>(("", ""))
    }

    /// The write end of standard input while the test holds it open (``answer(_:)``).
    private let heldInput = Mutex<Int32?>(nil)

    /// Starts `ferry arguments` on `device`. `input` is its standard input, written at once and
    /// closed; with `holdingInput`, standard input stays open and empty until ``answer(_:)``.
    init(_ device: Device, _ arguments: [String], input: String? = nil, holdingInput: Bool = false) throws {
        var stdin: Int32?
        var fds: [Int32] = [-1, -1]
        if input != nil || holdingInput {
            guard pipe(&fds) == 0 else { throw EngineSetupError("pipe failed") }
            _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
            stdin = fds[0]
        }
        if let input { Self.write(input, to: fds[1]) }
        if holdingInput {
            heldInput.withLock { $0 = fds[1] }
        } else if stdin != nil {
            close(fds[1])
        }
        child = try RunningProcess(try BuiltProducts.executable("ferry"), arguments, environment: device.bus.environment(),
                               standardInput: stdin)
        if let stdin { close(stdin) }
        let collected = collected
        for (fd, isError) in [(child.standardOutput, false), (child.standardError, true)] {
            Thread.detachNewThread {
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                    if n < 0 && errno == EINTR { continue }
                    if n <= 0 { return }
                    let text = String(decoding: buffer[0..<n], as: UTF8.self)
                    collected.text.withLock { if isError { $0.err += text } else { $0.out += text } }
                }
            }
        }
    }

    var output: String { collected.text.withLock { $0.out } }
    var errors: String { collected.text.withLock { $0.err } }

    /// Writes `text` to the standard input held open, and closes it.
    func answer(_ text: String) {
        guard let fd = heldInput.withLock({ held in defer { held = nil }; return held }) else { return }
        Self.write(text, to: fd)
        close(fd)
    }

    private static func write(_ text: String, to fd: Int32) {
        _ = text.utf8CString.withUnsafeBufferPointer { Glibc.write(fd, $0.baseAddress, $0.count - 1) }
    }

    deinit {
        if let fd = heldInput.withLock({ $0 }) { close(fd) }
    }
}
