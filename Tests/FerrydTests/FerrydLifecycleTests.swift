import DBus
import FerryTestSupport
import Foundation
import Testing

/// Start-up, replacement, shutdown and D-Bus activation of the real daemon.
@Suite("ferryd: lifecycle and activation")
struct FerrydLifecycleTests {
    @Test("SIGTERM: exit status 0 within 5 s and the name is released")
    func sigterm() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let daemon = try await fixture.start()
        let client = try await fixture.connect()
        #expect(try await client.owner(of: FerrydFixture.broker) != nil)
        daemon.send(SIGTERM)
        #expect(await daemon.waitForExit(timeout: .seconds(5)) == 0)
        #expect(try await client.owner(of: FerrydFixture.broker) == nil)
        #expect(daemon.standardError.contains("shutting down: asked to stop (SIGTERM, SIGINT or SIGHUP)"))
        await client.close()
    }

    @Test("log lines start with the UTC time, except under systemd's journal; SIGHUP and SIGINT shut down too")
    func logLinesAndOtherSignals() async throws {
        let stamped = try Regex(#"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z ferryd: owns org\.ferry\.Broker as :"#)
        for (journal, signal) in [(false, SIGHUP), (true, SIGINT)] {
            let fixture = try FerrydFixture()
            defer { fixture.cleanUp() }
            let daemon = try await ServiceProcess(
                try BuiltProducts.executable("ferryd"), ["--bus", fixture.bus.address, "--state-dir", fixture.stateDir.path],
                environment: fixture.bus.environment(adding: journal ? ["JOURNAL_STREAM": "8:12345"] : [:]))
            defer { daemon.stop() }
            daemon.send(signal)
            #expect(await daemon.waitForExit(timeout: .seconds(5)) == 0, "\(daemon.standardError)")
            // Its standard error is read by another thread: give the last lines time to arrive.
            _ = await eventually(.seconds(2)) { daemon.standardError.contains("ferryd: stopped") }
            let lines = daemon.standardError.split(separator: "\n").map(String.init)
            let owns = try #require(lines.first { $0.contains("ferryd: owns org.ferry.Broker") }, "\(lines)")
            if journal {
                #expect(owns.hasPrefix("ferryd: owns org.ferry.Broker as :"), "\(owns)")
            } else {
                #expect(owns.contains(stamped), "\(owns)")
            }
            #expect(lines.contains { $0.hasSuffix("ferryd: shutting down: asked to stop (SIGTERM, SIGINT or SIGHUP)") }, "\(lines)")
            #expect(lines.last?.hasSuffix("ferryd: stopped") == true, "\(lines)")
        }
    }

    @Test("log levels: events by default, debug detail only with --verbose, nothing but warnings with --quiet")
    func logLevels() async throws {
        for flag in [nil, "--verbose", "--quiet"] {
            let fixture = try FerrydFixture()
            try FileManager.default.createDirectory(at: fixture.stateDir, withIntermediateDirectories: true)
            defer { fixture.cleanUp() }
            let policy = fixture.stateDir.appendingPathComponent("paste-policy").path
            try Data("alow org.example.Spy\n".utf8).write(to: URL(fileURLWithPath: policy))
            // Not a ServiceProcess: --quiet prints no READY. Its standard error is read once it has exited.
            let daemon = try RunningProcess(try BuiltProducts.executable("ferryd"),
                                            ["--bus", fixture.bus.address, "--state-dir", fixture.stateDir.path, "--policy", policy]
                                                + (flag.map { [$0] } ?? []),
                                            environment: fixture.bus.environment())
            defer { daemon.kill() }
            let notes = try await fixture.connect()
            #expect(try await eventually { try await notes.owner(of: FerrydFixture.broker) != nil })
            try await FerrydFixture.register(notes, "org.ferry.notes", manifest: try FerrydFixture.manifest("Notes"))
            try await ShareBus.register(notes, [])
            // A read consults the paste policy, whose file is malformed (the pasteboard is empty).
            _ = try? await notes.call(destination: FerrydFixture.broker, path: "/org/ferry/Pasteboard/general",
                                      interface: "org.ferry.Pasteboard1", member: "Read",
                                      body: [.uint32(0), .string("public.utf8-plain-text"), VariantDictionary().dbusValue])
            await notes.close()
            daemon.send(SIGTERM)
            #expect(await daemon.waitForExit(timeout: .seconds(10)) == 0)
            let text = String(decoding: daemon.readToEnd().standardError, as: UTF8.self)
            let mode = flag ?? "default"
            #expect(text.contains("ferryd: warning: paste policy: \(policy):1: expected `allow`, `deny` or `ask`, found \"alow\""),
                    "\(mode): \(text)")
            #expect(text.contains("ferryd: registered org.ferry.notes pid=") == (flag != "--quiet"), "\(mode): \(text)")
            #expect(text.contains("ferryd: org.ferry.notes registered no activities") == (flag == "--verbose"), "\(mode): \(text)")
        }
    }

    @Test("a second ferryd without --replace exits 1 with one line; --replace takes over and the old one exits 0")
    func secondDaemonAndReplace() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let first = try await fixture.start()
        defer { first.stop() }
        let client = try await fixture.connect()
        let firstOwner = try #require(try await client.owner(of: FerrydFixture.broker))

        let otherState = fixture.stateDir.appendingPathComponent("second")
        let refused = try await fixture.run(stateDir: otherState)
        #expect(refused.status == 1)
        let lines = refused.stderr.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(lines.first?.contains("org.ferry.Broker is already owned by \(firstOwner.rawValue)") == true)
        #expect(first.isRunning)
        #expect(try await client.owner(of: FerrydFixture.broker) == firstOwner)

        let second = try await fixture.start(["--replace"], stateDir: otherState)
        defer { second.stop() }
        #expect(await first.waitForExit(timeout: .seconds(5)) == 0)
        let newOwner = try await client.owner(of: FerrydFixture.broker)
        #expect(newOwner != nil && newOwner != firstOwner)
        #expect(second.isRunning)
        #expect(first.standardError.contains("lost org.ferry.Broker"))
        await client.close()
    }

    @Test("two daemons on one state directory: the second, on another bus, exits 1 naming the lock")
    func stateDirectoryLock() async throws {
        let fixture = try FerrydFixture()
        defer { fixture.cleanUp() }
        let first = try await fixture.start()
        defer { first.stop() }
        // On the same bus --replace takes over (FerrydTakeoverTests); on another it cannot.
        let other = try FerrydFixture(bus: PrivateBus())
        defer { other.bus.stop() }
        let refused = try await other.run(["--replace"], stateDir: fixture.stateDir)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("in use by another store"))
        #expect(refused.stderr.contains("\(fixture.stateDir.path)/ferry.lock"))
        #expect(refused.stderr.split(separator: "\n").count == 1)
        #expect(first.isRunning)
    }

    @Test("bad command-line input exits 64")
    func badArguments() async throws {
        let result = try await ChildProcess.run(try BuiltProducts.executable("ferryd"), ["--no-such-flag"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("no-such-flag"))
    }

    @Test("D-Bus activation: a call to org.ferry.Broker starts ferryd, which answers")
    func activation() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ferryd-activation-\(UUID().uuidString)")
        let services = dir.appendingPathComponent("services")
        try FileManager.default.createDirectory(at: services, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = try String(contentsOf: TestPaths.fixtures.appendingPathComponent("dbus/session.conf"), encoding: .utf8)
            .replacingOccurrences(of: "</busconfig>", with: "  <servicedir>\(services.path)</servicedir>\n</busconfig>")
        let configURL = dir.appendingPathComponent("session.conf")
        try config.write(to: configURL, atomically: true, encoding: .utf8)
        try """
            [D-BUS Service]
            Name=org.ferry.Broker
            Exec=\(try BuiltProducts.executable("ferryd")) --state-dir \(dir.appendingPathComponent("state").path)
            """.write(to: services.appendingPathComponent("org.ferry.Broker.service"), atomically: true, encoding: .utf8)

        let bus = try PrivateBus(config: configURL)
        defer { bus.stop() }
        let client = try await Connection(address: bus.address)
        #expect(try await client.owner(of: FerrydFixture.broker) == nil)
        let reply = try await FerrydFixture.call(client, "ListApps")
        #expect(reply == [.array(of: "a{sv}", [])])
        let owner = try #require(try await client.owner(of: FerrydFixture.broker))
        let pid = try #require(try await client.credentials(of: owner).pid)
        kill(pid_t(pid), SIGTERM)
        #expect(try await client.waitForNameToVanish(FerrydFixture.broker, timeout: .seconds(5)))
        await client.close()
    }
}
