import DesktopClipboard
import Foundation
import FerryTestSupport
import Synchronization
import Testing
import X11Clipboard

/// The backend as owner reading a file handed over in place of a serve pipe
/// (`serve(from:for:)`), read by real X11 clients: the bridge's path for bytes ferryd holds.
@Suite struct X11FileServeTests {
    @Test func filesHandedOverReachSeveralReadersAtOnceByteForByte() async throws {
        let session = try X11Session()
        let big = try TempFile(randomBytes(20_000_000, seed: 11))
        let small = try TempFile(Data("held by ferryd ✓".utf8))
        let server = FileServer(session.backend, files: ["image/png": big.path, "UTF8_STRING": small.path])
        try await session.backend.own(.clipboard, types: ["image/png", "UTF8_STRING"], serve: server.serve)
        // Three INCR transfers (20 MB is more than one property holds) and one property at once,
        // each its own state machine reading its own descriptor of the file.
        async let first = session.xclipPaste("image/png")
        async let second = session.xclipPaste("image/png")
        async let third = session.xclipPaste("image/png")
        async let text = session.xclipPaste("UTF8_STRING")
        for pasted in try await [first, second, third] {
            #expect(pasted.succeeded)
            #expect(pasted.standardOutput.count == big.data.count)
            #expect(pasted.standardOutput == big.data)
        }
        #expect(try await text.stdout == "held by ferryd ✓")
        #expect(server.handOvers == [true, true, true, true], "every file should have gone to the backend")
        // Each answer closed its file when it ended.
        #expect(await eventually { big.openDescriptors == 0 && small.openDescriptors == 0 })
        await session.close()
    }

    @Test func aPipeAStrangerOrAStartedWriteIsRefusedAndTheWriterServesAsBefore() async throws {
        let session = try X11Session()
        let file = try TempFile(randomBytes(6_000_000, seed: 12))
        let checks = Findings()
        let backend = session.backend
        let serve: @Sendable (String, Int32) -> Void = { _, descriptor in
            Task {
                var found: [String] = []
                // A pipe is not a file: refused, nothing closed.
                var ends: [Int32] = [-1, -1]
                _ = pipe(&ends)
                if await backend.serve(from: ends[0], for: descriptor) { found.append("took a pipe") }
                if fcntl(ends[0], F_GETFD) == -1 || fcntl(descriptor, F_GETFD) == -1 {
                    found.append("closed on refusal")
                }
                // A descriptor that is no serve pipe's: refused.
                let opened = open(file.path, O_RDONLY | O_CLOEXEC)
                if await backend.serve(from: opened, for: ends[1]) { found.append("took a stranger") }
                if fcntl(opened, F_GETFD) == -1 || fcntl(ends[1], F_GETFD) == -1 { found.append("closed a stranger") }
                ends.forEach { close($0) }
                // Once the writer has begun, the file would lose or repeat bytes: refused.
                let bytes = file.data
                let head = bytes.prefix(1000).withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                if head != 1000 { found.append("short write") }
                if await backend.serve(from: opened, for: descriptor) { found.append("took a started pipe") }
                close(opened)
                checks.record(found)
                Thread.detachNewThread {
                    bytes.dropFirst(1000).withUnsafeBytes { raw in
                        var offset = 0
                        while offset < raw.count {
                            let n = write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                            if n < 0 && errno == EINTR { continue }
                            if n <= 0 { break }
                            offset += n
                        }
                    }
                    close(descriptor)
                }
            }
        }
        try await session.backend.own(.clipboard, types: ["image/png"], serve: serve)
        let pasted = try await session.xclipPaste("image/png")
        #expect(pasted.succeeded)
        #expect(pasted.standardOutput == file.data)
        #expect(checks.recorded == [])
        await session.close()
    }

    @Test func aReaderThatHangsInIncrIsDroppedAfter5sAndItsFileClosedWhileAnotherReads() async throws {
        let session = try X11Session()
        let big = try TempFile(randomBytes(20_000_000, seed: 13))
        let server = FileServer(session.backend, files: ["image/png": big.path])
        try await session.backend.own(.clipboard, types: ["image/png"], serve: server.serve)
        // A reader that deletes the first chunk, then takes nothing more.
        let script = TestPaths.fixtures.appendingPathComponent("desktop/incr-stall-request.py").path
        let hung = try await ServiceProcess("/usr/bin/python3", [script, "image/png"], environment: session.env)
        defer { hung.stop() }
        #expect(hung.standardOutput.hasPrefix("READY incr "), "\(hung.standardOutput)")
        let started = ContinuousClock.now
        let other = try await session.xclipPaste("image/png")
        #expect(other.standardOutput == big.data)
        #expect(ContinuousClock.now - started < .seconds(5), "the second reader waited on the hung one")
        #expect(server.handOvers == [true, true])
        // The hung reader's answer still holds its file until the 5 s pass, then lets it go.
        #expect(big.openDescriptors == 1)
        #expect(await eventually(.seconds(12)) { big.openDescriptors == 0 })
        await session.close()
    }
}

/// What a serve function found wrong, recorded once it has looked.
final class Findings: Sendable {
    private let list = Mutex<[String]?>(nil)

    func record(_ findings: [String]) { list.withLock { $0 = findings } }

    /// Nil until recorded.
    var recorded: [String]? { list.withLock { $0 } }
}

/// A file of known bytes in the temporary directory, removed when released.
final class TempFile: Sendable {
    let path: String
    let data: Data

    init(_ data: Data) throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("x11-serve-\(UUID().uuidString)").path
        self.data = data
        try data.write(to: URL(fileURLWithPath: path))
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// How many descriptors of this process refer to the file now.
    var openDescriptors: Int {
        let files = FileManager.default
        let entries = (try? files.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return entries.filter { (try? files.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == path }.count
    }
}

/// A serve function that hands the backend a fresh descriptor of `files[type]` for each request,
/// as the bridge does with ferryd's, and records whether the backend took it.
final class FileServer: Sendable {
    private let backend: X11ClipboardBackend
    private let files: [String: String]
    private let taken = Mutex<[Bool]>([])

    init(_ backend: X11ClipboardBackend, files: [String: String]) {
        self.backend = backend
        self.files = files
    }

    /// Whether the backend took each file, in the order the requests came.
    var handOvers: [Bool] { taken.withLock { $0 } }

    var serve: @Sendable (String, Int32) -> Void {
        { [self] type, descriptor in
            Task {
                let file = open(files[type] ?? "/nonexistent", O_RDONLY | O_CLOEXEC)
                let took = file >= 0 ? await backend.serve(from: file, for: descriptor) : false
                taken.withLock { $0.append(took) }
                if !took {
                    if file >= 0 { close(file) }
                    close(descriptor)
                }
            }
        }
    }
}
