@testable import ferry
import FerryTerminal
import FerryTestSupport
import Foundation
import Testing

@Suite("ferry internals: exit statuses, byte copying")
struct FerryCLIUnitTests {
    @Test("every org.ferry.Error code and the bus's own errors map to the documented status")
    func exitStatuses() {
        #expect(FerryTerminal.ExitStatus.of(errorName: "org.ferry.Error.NotFound") == .notFound)
        #expect(FerryTerminal.ExitStatus.of(errorName: "org.ferry.Error.PermissionDenied") == .permissionDenied)
        #expect(FerryTerminal.ExitStatus.of(errorName: "org.ferry.Error.Unavailable") == .unavailable)
        #expect(FerryTerminal.ExitStatus.of(errorName: "org.ferry.Error.Timeout") == .timeout)
        #expect(FerryTerminal.ExitStatus.of(errorName: "org.ferry.Error.InvalidArgument") == .usage)
        #expect(FerryTerminal.ExitStatus.of(errorName: "org.ferry.Error.TooLarge") == .failure)
        #expect(FerryTerminal.ExitStatus.of(errorName: "org.freedesktop.DBus.Error.ServiceUnknown") == .noBroker)
        #expect(FerryTerminal.ExitStatus.of(errorName: "org.freedesktop.DBus.Error.Spawn.ChildExited") == .noBroker)
        #expect(FerryTerminal.ExitStatus.of(errorName: "org.freedesktop.DBus.Error.NoReply") == .timeout)
        #expect(FerryTerminal.ExitStatus.of(errorName: "org.freedesktop.DBus.Error.Failed") == .failure)
        #expect(FerryTerminal.ExitStatus.allCases.map(\.rawValue) == [0, 1, 2, 3, 4, 5, 64, 69])
    }

    @Test("a promised stream that sends nothing for the timeout fails with status 5; bytes then end of file copy through")
    func inactivity() throws {
        var fds: [Int32] = [-1, -1], out: [Int32] = [-1, -1]
        #expect(pipe(&fds) == 0 && pipe(&out) == 0)
        // Children other tests spawn meanwhile must not keep a write end open (no end of file then).
        (fds + out).forEach(setCloseOnExec)
        defer { (fds + out).forEach { close($0) } }
        let copier = ByteCopier(source: fds[0], sourceName: "the source app", destination: OutputFile(fd: out[1], name: "a pipe"),
                                inactivityTimeout: .milliseconds(200), progress: nil)
        let started = ContinuousClock.now
        #expect(throws: CLIFailure.self) { try copier.run() }
        #expect(ContinuousClock.now - started >= .milliseconds(200))
        do {
            _ = try copier.run()
        } catch let failure as CLIFailure {
            #expect(failure.status == .timeout)
        }
        #expect(write(fds[1], "abc", 3) == 3)
        close(fds[1]); fds[1] = -1
        // A --timeout far beyond what poll(2) takes waits at most that, instead of trapping.
        var patient = copier
        patient.inactivityTimeout = .seconds(10_000_000_000_000_000)
        #expect(try patient.run() == 3)
        var buffer = [UInt8](repeating: 0, count: 8)
        #expect(read(out[0], &buffer, 8) == 3)
    }

    @Test("timestamps are ISO 8601 in UTC with milliseconds; sizes read like ls -h")
    func formatting() {
        #expect(timestamp(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(timestamp(Date(timeIntervalSince1970: 1_795_343_689.5)) == "2026-11-22T10:34:49.500Z")
        #expect(timestamp(Date(timeIntervalSince1970: 951_782_400)) == "2000-02-29T00:00:00.000Z")
        #expect(ProgressBar.size(512) == "512 B")
        #expect(ProgressBar.size(12_345) == "12.1 KiB")
        #expect(ProgressBar.size(20 << 20) == "20.0 MiB")
    }
}
