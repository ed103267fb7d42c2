import DesktopClipboard
import Foundation
import FerryTestSupport
import Synchronization
import Testing
import X11Clipboard

/// Everything the backend reported, recorded by a task that iterates `events`.
final class EventLog: Sendable {
    private final class Record: Sendable {
        let state = Mutex<(events: [DesktopEvent], end: (any Error)?, finished: Bool)>(([], nil, false))
    }
    private let record = Record()

    init(_ backend: X11ClipboardBackend) {
        let record = self.record
        Task {
            do {
                for try await event in backend.events { record.state.withLock { $0.events.append(event) } }
                record.state.withLock { $0.finished = true }
            } catch {
                record.state.withLock { $0.end = error; $0.finished = true }
            }
        }
    }

    /// Everything so far.
    var events: [DesktopEvent] { record.state.withLock { $0.events } }

    /// How the stream ended, once it did.
    var ending: (finished: Bool, error: (any Error)?) { record.state.withLock { ($0.finished, $0.end) } }

    /// Waits for the first event after the first `skipping` that `matches`.
    func next(after skipping: Int = 0, timeout: Duration = .seconds(10),
              _ matches: (DesktopEvent) -> Bool) async -> DesktopEvent? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let found = events.dropFirst(skipping).first(where: matches) { return found }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    /// The next offer on `selection` after the first `skipping` events.
    func offer(on selection: DesktopSelection, after skipping: Int = 0,
               timeout: Duration = .seconds(10)) async -> DesktopOffer? {
        let event = await next(after: skipping, timeout: timeout) {
            if case .offered(let offer) = $0, offer.selection == selection { return true }
            return false
        }
        if case .offered(let offer) = event { return offer }
        return nil
    }
}

/// A running X server with a backend on it.
struct X11Session {
    let display: XvfbDisplay
    let backend: X11ClipboardBackend
    let log: EventLog

    init(clipboardManager: Bool = true) throws {
        display = try XvfbDisplay()
        backend = try X11ClipboardBackend(display: display.name, clipboardManager: clipboardManager)
        log = EventLog(backend)
    }

    var env: [String: String] { display.environment() }

    /// Ends the backend and the server.
    func close() async {
        await backend.shutdown()
        display.stop()
    }

    /// Reads `type` of `offer` through a pipe, the way the bridge does.
    func receive(_ type: String, from offer: DesktopOffer, timeout: Duration = .seconds(5)) async throws -> (Data, ReceiveOutcome) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw X11TestError("pipe failed") }
        ends.forEach(setCloseOnExec)
        let reader = ends[0]
        let collected = Mutex<Data?>(nil)
        Thread.detachNewThread {
            collected.withLock { $0 = readToEnd(reader) }
            Foundation.close(reader)
        }
        let outcome = try await backend.receive(type, from: offer, into: ends[1], timeout: timeout)
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if let data = collected.withLock({ $0 }) { return (data, outcome) }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw X11TestError("the reader saw no end of file")
    }

    /// Starts `xclip` in the foreground owning `selection` with `data` as `type`.
    func xclipCopy(_ data: Data, type: String = "UTF8_STRING", selection: String = "clipboard") throws -> RunningProcess {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("x11-\(UUID().uuidString)")
        try data.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let input = open(file.path, O_RDONLY | O_CLOEXEC)
        defer { Foundation.close(input) }
        return try RunningProcess("xclip", ["-quiet", "-selection", selection, "-t", type, "-i"],
                                  environment: env, standardInput: input)
    }

    /// Starts `xsel` in the foreground owning `selection` (`-b` or `-p`) with `text`.
    func xselCopy(_ text: String, selection: String = "-b") throws -> RunningProcess {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("x11-\(UUID().uuidString)")
        try Data(text.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let input = open(file.path, O_RDONLY | O_CLOEXEC)
        defer { Foundation.close(input) }
        return try RunningProcess("xsel", ["--nodetach", selection, "-i"], environment: env, standardInput: input)
    }

    /// Runs `xclip -o` for `type` and returns what it printed.
    func xclipPaste(_ type: String, selection: String = "clipboard", timeout: Duration = .seconds(30)) async throws -> ChildProcessResult {
        try await ChildProcess.run("xclip", ["-o", "-selection", selection, "-t", type], environment: env, timeout: timeout)
    }
}

/// `count` bytes from a fixed seed.
func randomBytes(_ count: Int, seed: UInt64 = 17) -> Data {
    var generator = SplitMix64(seed: seed)
    var data = Data(count: count)
    data.withUnsafeMutableBytes { raw in
        let words = raw.bindMemory(to: UInt64.self)
        for i in 0..<words.count { words[i] = generator.next() }
        for i in (words.count * 8)..<count { raw[i] = UInt8(truncatingIfNeeded: generator.next()) }
    }
    return data
}

/// A serve function that writes `payloads[type]` into the descriptor on a thread of its own and
/// records whether every write succeeded.
final class Server: Sendable {
    let payloads: [String: Data]
    private let results = Mutex<[(type: String, complete: Bool)]>([])

    /// The first serve writes this many bytes, then waits for `resumeFirst()`.
    private let pauseFirstAfter: Int?
    private let pause = Mutex<(reached: Bool, resumed: Bool)>((false, false))

    init(_ payloads: [String: Data], pauseFirstAfter: Int? = nil) {
        self.payloads = payloads
        self.pauseFirstAfter = pauseFirstAfter
    }

    /// Whether the first serve wrote its first part and waits.
    var firstPaused: Bool { pause.withLock { $0.reached } }

    /// Lets the first serve write the rest.
    func resumeFirst() { pause.withLock { $0.resumed = true } }

    private let calls = Mutex(0)

    var outcomes: [(type: String, complete: Bool)] { results.withLock { $0 } }

    /// How many times the backend asked for bytes.
    var servedCount: Int { calls.withLock { $0 } }

    var serve: @Sendable (String, Int32) -> Void {
        { [self] type, fd in
            let data = payloads[type] ?? Data()
            let call = calls.withLock { $0 += 1; return $0 }
            let pauseAt = call == 1 ? pauseFirstAfter : nil
            Thread.detachNewThread {
                var complete = true
                data.withUnsafeBytes { raw in
                    var offset = 0
                    while offset < raw.count {
                        if let pauseAt, offset >= pauseAt, !self.pause.withLock({ $0.resumed }) {
                            self.pause.withLock { $0.reached = true }
                            usleep(1000)
                            continue
                        }
                        let end = pauseAt.map { offset < $0 ? $0 : raw.count } ?? raw.count
                        let n = write(fd, raw.baseAddress! + offset, end - offset)
                        if n < 0 && errno == EINTR { continue }
                        if n <= 0 { complete = false; break }
                        offset += n
                    }
                }
                Foundation.close(fd)
                self.results.withLock { $0.append((type, complete)) }
            }
        }
    }
}

/// A test step that could not run.
struct X11TestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Everything `fd` yields until end of file (or an error), EINTR retried.
func readToEnd(_ fd: Int32) -> Data {
    var data = Data()
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let n = read(fd, &chunk, chunk.count)
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { return data }
        data.append(contentsOf: chunk[0..<n])
    }
}
