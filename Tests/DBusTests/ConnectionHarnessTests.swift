import DBus
import Foundation
import FerryTestSupport
import Testing

/// The test harness itself: private buses and child processes.
@Suite("Test harness")
struct ConnectionHarnessTests {
    @Test("Private buses are isolated from each other and stop cleanly")
    func privateBuses() async throws {
        let one = try PrivateBus(), two = try PrivateBus()
        #expect(one.address != two.address)
        #expect(one.address.hasPrefix("unix:path=\(one.directory.path)"))
        #expect(one.environment()["DBUS_SESSION_BUS_ADDRESS"] == one.address)
        let a = try await Connection(address: one.address)
        let b = try await Connection(address: two.address)
        #expect(try await a.requestName("org.ferry.Test.Harness") == .primaryOwner)
        #expect(try await b.owner(of: "org.ferry.Test.Harness") == nil)
        await a.close()
        await b.close()
        one.stop()
        one.stop()
        await #expect(throws: DBusError.self) { _ = try await Connection(address: one.address) }
        #expect(!FileManager.default.fileExists(atPath: one.directory.path))
    }

    @Test("Child processes: status, output, standard input, time limit, no session bus address")
    func childProcesses() async throws {
        let result = try await ChildProcess.run("/bin/sh", ["-c", "echo out; echo err >&2; exit 3"])
        #expect(result.status == 3 && !result.succeeded)
        #expect(result.stdout == "out\n")
        #expect(result.stderr == "err\n")

        let echoed = try await ChildProcess.run("cat", standardInput: Data("piped".utf8))
        #expect(echoed.succeeded && echoed.stdout == "piped")

        let env = try await ChildProcess.run("/bin/sh", ["-c", "echo ${DBUS_SESSION_BUS_ADDRESS:-unset}"])
        #expect(env.stdout == "unset\n")

        let start = ContinuousClock.now
        let slow = try await ChildProcess.run("sleep", ["30"], timeout: .milliseconds(200))
        #expect(slow.timedOut && !slow.succeeded)
        #expect(ContinuousClock.now - start < .seconds(5))

        await #expect(throws: ChildProcessError.self) { _ = try await ChildProcess.run("ferry-no-such-tool") }
    }

    @Test("Built products are found beside the test bundle")
    func builtProducts() throws {
        let dir = BuiltProducts.directory
        let contents = try FileManager.default.contentsOfDirectory(atPath: dir.path)
        #expect(contents.contains { $0.hasSuffix(".xctest") }, "\(dir.path)")
        #expect(throws: ChildProcessError.self) { _ = try BuiltProducts.executable("ferry-no-such-tool") }
    }
}
