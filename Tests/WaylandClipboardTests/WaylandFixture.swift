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
                for try await event in backend.events { log.state.withLock { $0.events.append(event) } }
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
        sway.stop()
    }

    /// Everything reported so far.
    var events: [DesktopEvent] { log.state.withLock { $0.events } }
    /// How the event stream ended, once it has.
    var end: (any Error)? { log.state.withLock { $0.end } }

    /// Waits until an event after the first `after` ones matches; returns it and its index.
    @discardableResult
    func waitFor(after: Int = 0, timeout: Duration = .seconds(10), _ what: String,
                 _ matches: (DesktopEvent) -> Bool) async throws -> (event: DesktopEvent, index: Int) {
        let deadline = ContinuousClock.now + timeout
        while true {
            let all = events
            if let index = all.indices.dropFirst(after).first(where: { matches(all[$0]) }) {
                return (all[index], index)
            }
            if ContinuousClock.now > deadline {
                throw FixtureError("no \(what) within \(timeout); events: \(all)")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
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
    let state = Mutex<(events: [DesktopEvent], end: (any Error)?)>(([], nil))
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
