@testable import BrokerCore
import FerryTestSupport
import Foundation
import Testing

/// The process name in a paste record: read from `/proc/PID/comm` (a process may rename itself),
/// through a file opened once per process; a reader's at most once a second per connection.
@Suite("Paste records: process names")
struct ProcessNameTests {
    @Test("a renamed process is read under its new name; an ended one has none")
    func namesFollowTheProcess() async throws {
        let (child, rename) = try Self.renamingChild()
        let pid = UInt32(child.pid)
        #expect(await eventually { PasteRecord.processName(pid: pid) == "ferry-first" })
        rename()
        #expect(await eventually { PasteRecord.processName(pid: pid) == "ferry-second" })
        child.terminate(grace: .seconds(1))
        #expect(await eventually { PasteRecord.processName(pid: pid) == nil })
        #expect(PasteRecord.processName(pid: 0) == nil && PasteRecord.processName(pid: nil) == nil)
    }

    @Test("a reader's name is kept for its connection for the name's lifetime, read anew for another or once older")
    func readerNamesLastASecond() async throws {
        let (child, rename) = try Self.renamingChild()
        defer { child.terminate(grace: .seconds(1)) }
        let pid = UInt32(child.pid)
        let files = ProcessNameFiles(limit: 4), observer = ProcessNameFiles(limit: 1)
        #expect(await eventually { observer.name(of: pid) == "ferry-first" })
        #expect(files.name(of: pid, for: ":1.7", maximumAge: .seconds(600)) == "ferry-first")
        rename()
        #expect(await eventually { observer.name(of: pid) == "ferry-second" })
        #expect(files.name(of: pid, for: ":1.7", maximumAge: .seconds(600)) == "ferry-first", "kept for the same connection")
        #expect(files.name(of: pid, for: ":1.8", maximumAge: .seconds(600)) == "ferry-second", "read anew for another")
        #expect(files.name(of: pid, for: ":1.8", maximumAge: .zero) == "ferry-second")
        #expect(files.name(of: pid, for: ":1.7", maximumAge: .seconds(600)) == "ferry-second", "read anew: :1.8 read it last")
        #expect(PasteRecord.readerProcessName(pid: 0, connection: ":1.7") == nil)
    }

    /// A process that names itself `ferry-first` (PR_SET_NAME), then `ferry-second` once
    /// `rename` is called, then waits to be stopped.
    static func renamingChild() throws -> (RunningProcess, rename: @Sendable () -> Void) {
        let go = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-comm-\(UUID().uuidString)").path
        let script = """
            import ctypes, os, time
            libc = ctypes.CDLL(None)
            libc.prctl(15, b"ferry-first", 0, 0, 0)
            while not os.path.exists(\(String(reflecting: go))): time.sleep(0.01)
            os.unlink(\(String(reflecting: go)))
            libc.prctl(15, b"ferry-second", 0, 0, 0)
            time.sleep(60)
            """
        let child = try RunningProcess("python3", ["-c", script], environment: ProcessInfo.processInfo.environment)
        return (child, { _ = FileManager.default.createFile(atPath: go, contents: nil) })
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
