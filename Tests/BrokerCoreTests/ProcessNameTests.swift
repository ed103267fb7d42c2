@testable import BrokerCore
import FerryTestSupport
import Foundation
import Testing

/// The process name in a paste record: read from `/proc/PID/comm` every time (a process may
/// rename itself), through a file opened once per process.
@Suite("Paste records: process names")
struct ProcessNameTests {
    @Test("a renamed process is read under its new name; an ended one has none")
    func namesFollowTheProcess() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-comm-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let go = directory.appendingPathComponent("go").path
        // Renames itself (PR_SET_NAME), then again once `go` exists, then waits to be stopped.
        let script = """
            import ctypes, os, time
            libc = ctypes.CDLL(None)
            libc.prctl(15, b"ferry-first", 0, 0, 0)
            while not os.path.exists(\(String(reflecting: go))): time.sleep(0.01)
            libc.prctl(15, b"ferry-second", 0, 0, 0)
            time.sleep(60)
            """
        let child = try RunningProcess("python3", ["-c", script], environment: ProcessInfo.processInfo.environment)
        let pid = UInt32(child.pid)
        #expect(await eventually { PasteRecord.processName(pid: pid) == "ferry-first" })
        _ = FileManager.default.createFile(atPath: go, contents: nil)
        #expect(await eventually { PasteRecord.processName(pid: pid) == "ferry-second" })
        child.terminate(grace: .seconds(1))
        #expect(await eventually { PasteRecord.processName(pid: pid) == nil })
        #expect(PasteRecord.processName(pid: 0) == nil && PasteRecord.processName(pid: nil) == nil)
    }

    @Test("at most the limit of files stay open; a process whose file was closed is opened again")
    func filesAreBounded() throws {
        let files = ProcessNameFiles(limit: 2)
        // This process's threads have /proc entries of their own: three pids that all exist.
        let threads = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").compactMap(UInt32.init)
        try #require(threads.count >= 3, "the test process has \(threads.count) threads")
        let names = threads.prefix(3).map { files.name(of: $0) }
        #expect(names.allSatisfy { $0 != nil })
        #expect(files.openCount == 2)
        #expect(files.name(of: threads[0]) == names[0], "the first, closed to make room, is opened again")
        #expect(files.openCount == 2)
        #expect(files.name(of: UInt32.max - 1) == nil && files.openCount == 2, "no such process: nothing kept")
    }
}
