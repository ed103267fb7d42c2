import DesktopClipboard
import FerryTestSupport
import Foundation
import Synchronization
import Testing
import WaylandClipboard

/// A headless sway, a backend connected to it from the test process, and everything the backend
/// reported, collected as it happens.
final class WaylandFixture: Sendable {
    let sway: HeadlessSway
    let backend: WaylandClipboardBackend
    private let log = EventLog()
    private let reader: Task<Void, Never>

    init() async throws {
        // A reader that quits early must fail a feeding thread's write, not kill the test process.
        signal(SIGPIPE, SIG_IGN)
        let sway = try await HeadlessSway()
        do {
            backend = try WaylandClipboardBackend(display: sway.socketPath)
        } catch {
            sway.stop()
            throw error
        }
        self.sway = sway
        let backend = backend, log = log
        reader = Task {
            do {
                for try await event in backend.events {
                    let now = realtimeNanoseconds()
                    log.state.withLock { $0.events.append(event); $0.arrivals.append(now) }
                }
                log.state.withLock { $0.end = CancellationError() }
            } catch {
                log.state.withLock { $0.end = error }
            }
        }
    }

    /// Runs `body` with a fresh fixture and always tears it down (backend, then sway and its peers).
    static func with(_ body: (WaylandFixture) async throws -> Void) async throws {
        let fixture = try await WaylandFixture()
        do {
            try await body(fixture)
        } catch {
            await fixture.tearDown()
            throw error
        }
        await fixture.tearDown()
    }

    func tearDown() async {
        await backend.shutdown()
        _ = await reader.value
        await offThePool { [sway] in sway.stop() }
    }

    /// Everything reported so far.
    var events: [DesktopEvent] { log.state.withLock { $0.events } }
    /// When each event arrived in the reading task (`CLOCK_REALTIME` nanoseconds).
    var arrivals: [Int64] { log.state.withLock { $0.arrivals } }
    /// How the event stream ended, once it has.
    var end: (any Error)? { log.state.withLock { $0.end } }

    /// Waits until an event after the first `after` ones matches; returns it and its index.
    @discardableResult
    func waitFor(after: Int = 0, timeout: Duration = .seconds(10), _ what: String,
                 _ matches: (DesktopEvent) -> Bool) async throws -> (event: DesktopEvent, index: Int) {
        var found: (event: DesktopEvent, index: Int)?
        let matched = await eventually(timeout, every: .milliseconds(5)) {
            let all = events
            found = all.indices.dropFirst(after).first { matches(all[$0]) }.map { (all[$0], $0) }
            return found != nil
        }
        guard matched, let found else { throw FixtureError("no \(what) within \(timeout); events: \(events)") }
        return found
    }

    /// Waits for the next foreign offer on `selection` after the first `after` events.
    func offer(on selection: DesktopSelection, after: Int = 0) async throws -> DesktopOffer {
        let found = try await waitFor(after: after, "offer on \(selection)") {
            if case .offered(let offer) = $0, offer.selection == selection { return true }
            return false
        }
        guard case .offered(let offer) = found.event else { fatalError("matched an offer") }
        return offer
    }

    /// Runs a peer as the compositor's user and requires it to succeed.
    @discardableResult
    func peer(_ arguments: [String], standardInput: String? = nil) async throws -> HeadlessSway.PeerResult {
        let result = try await sway.run(arguments, standardInput: standardInput)
        guard result.succeeded else {
            throw FixtureError("\(arguments.joined(separator: " ")) failed (\(result.status)): \(result.standardError)")
        }
        return result
    }

    /// Receives `type` from `offer` through a pipe; returns the outcome and every byte read.
    func receive(_ type: String, from offer: DesktopOffer) async throws -> (ReceiveOutcome, Data) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw FixtureError("pipe failed") }
        let drained = drain(ends[0])
        let outcome: ReceiveOutcome
        do {
            outcome = try await backend.receive(type, from: offer, into: ends[1], timeout: .seconds(5))
        } catch {
            _ = await drained.value
            throw error
        }
        return (outcome, await drained.value)
    }
}

/// What the backend reported, and how its stream ended.
final class EventLog: Sendable {
    /// The events, when each arrived (`CLOCK_REALTIME` nanoseconds), and the stream's end.
    let state = Mutex<(events: [DesktopEvent], arrivals: [Int64], end: (any Error)?)>(([], [], nil))
}

/// Reads `fd` to its end on a thread of its own and closes it.
func drain(_ fd: Int32) -> Task<Data, Never> {
    Task {
        await withCheckedContinuation { (done: CheckedContinuation<Data, Never>) in
            Thread.detachNewThread {
                var data = Data()
                var buffer = [UInt8](repeating: 0, count: 1 << 16)
                while true {
                    let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                    if n < 0 && errno == EINTR { continue }
                    if n <= 0 { break }
                    data.append(contentsOf: buffer[0..<n])
                }
                close(fd)
                done.resume(returning: data)
            }
        }
    }
}

/// Writes `data` into `fd` on a thread of its own and closes it (what a serve closure must do:
/// never block the backend's display thread).
func feed(_ fd: Int32, _ data: Data) {
    Thread.detachNewThread {
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                offset += n
            }
        }
        close(fd)
    }
}

/// `CLOCK_REALTIME` in nanoseconds (comparable with `date +%s%N` in another process).
func realtimeNanoseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
}

/// `count` pseudo-random bytes from a fixed seed.
func randomBytes(_ count: Int, seed: UInt64) -> Data {
    var generator = SplitMix64(seed: seed)
    var data = Data(count: count)
    data.withUnsafeMutableBytes { raw in
        let words = raw.bindMemory(to: UInt64.self)
        for i in words.indices { words[i] = generator.next() }
        for i in (words.count * 8)..<count { raw[i] = UInt8(truncatingIfNeeded: generator.next()) }
    }
    return data
}

struct FixtureError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
