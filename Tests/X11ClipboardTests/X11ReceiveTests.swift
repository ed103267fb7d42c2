import DesktopClipboard
import Foundation
import FerryTestSupport
import Synchronization
import Testing
import X11Clipboard

/// `receive` under stress: silent owners, slow and vanished readers, several at once.
@Suite struct X11ReceiveTests {
    @Test func aSilentOwnerTimesOut() async throws {
        let session = try X11Session()
        let xclip = try session.xclipCopy(Data("never sent".utf8))
        defer { xclip.send(SIGCONT); xclip.kill() }
        let offer = try #require(await session.log.offer(on: .clipboard))
        xclip.send(SIGSTOP)
        let started = ContinuousClock.now
        await #expect(throws: DesktopClipboardError(.timeout, "the owner stayed silent for 1.0 seconds")) {
            _ = try await session.receive("UTF8_STRING", from: offer, timeout: .seconds(1))
        }
        #expect(ContinuousClock.now - started < .seconds(3))
        await session.close()
    }

    @Test func aReplacedOfferIsGone() async throws {
        let session = try X11Session()
        let first = try session.xclipCopy(Data("first".utf8))
        defer { first.kill() }
        let old = try #require(await session.log.offer(on: .clipboard))
        let count = session.log.events.count
        let second = try session.xclipCopy(Data("second".utf8))
        defer { second.kill() }
        let new = try #require(await session.log.offer(on: .clipboard, after: count))
        #expect(new.id > old.id)
        await #expect(throws: DesktopClipboardError(.offerGone, "CLIPBOARD offer #\(old.id) was replaced")) {
            _ = try await session.receive("UTF8_STRING", from: old)
        }
        #expect(try await session.receive("UTF8_STRING", from: new).0 == Data("second".utf8))
        await session.close()
    }

    @Test func aSlowReaderNeverBlocksTheDisplayLoop() async throws {
        let session = try X11Session()
        let payload = randomBytes(20_000_000, seed: 11)
        let xclip = try session.xclipCopy(payload, type: "image/png")
        defer { xclip.kill() }
        let offer = try #require(await session.log.offer(on: .clipboard))
        try await session.backend.own(.primary, types: ["UTF8_STRING"], serve: Server(["UTF8_STRING": Data("quick".utf8)]).serve)

        // A reader that takes nothing for two seconds, then everything.
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        ends.forEach(setCloseOnExec)
        let received = Mutex<Data?>(nil)
        let reader = ends[0]
        Thread.detachNewThread {
            sleep(2)
            received.withLock { $0 = readToEnd(reader) }
            close(reader)
        }
        // The owner is never silent for a second: a reader that is slow does not count against it.
        async let outcome = session.backend.receive("image/png", from: offer, into: ends[1], timeout: .seconds(1))
        // Meanwhile the backend answers another client at once.
        try await Task.sleep(for: .milliseconds(300))
        let started = ContinuousClock.now
        #expect(try await session.xclipPaste("UTF8_STRING", selection: "primary").stdout == "quick")
        #expect(ContinuousClock.now - started < .seconds(1))
        #expect(received.withLock { $0 } == nil, "the reader was not slow after all")
        #expect(try await outcome == .complete(bytes: 20_000_000))
        #expect(await eventually { received.withLock { $0 } != nil })
        #expect(received.withLock { $0 } == payload)
        await session.close()
    }

    @Test func aReaderThatGoesAwayEndsOnlyItsTransfer() async throws {
        let session = try X11Session()
        let payload = randomBytes(20_000_000, seed: 13)
        let xclip = try session.xclipCopy(payload, type: "image/png")
        defer { xclip.kill() }
        let offer = try #require(await session.log.offer(on: .clipboard))
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        ends.forEach(setCloseOnExec)
        close(ends[0])
        await #expect(throws: DesktopClipboardError.self) {
            _ = try await session.backend.receive("image/png", from: offer, into: ends[1], timeout: .seconds(5))
        }
        // The backend lives on: another offer is read whole.
        let count = session.log.events.count
        let text = try session.xclipCopy(Data("after".utf8))
        defer { text.kill() }
        let next = try #require(await session.log.offer(on: .clipboard, after: count))
        #expect(try await session.receive("UTF8_STRING", from: next).0 == Data("after".utf8))
        await session.close()
    }

    @Test func severalReceivesRunAtOnce() async throws {
        let session = try X11Session()
        let script = TestPaths.fixtures.appendingPathComponent("desktop/tk-offer.tcl").path
        let tk = try await ServiceProcess("wish", [script, "UTF8_STRING", "plain text", "text/html", "<p>html</p>",
                                                    "text/uri-list", "file:///tmp/a\r\n"], environment: session.env)
        defer { tk.stop() }
        let offer = try #require(await session.log.offer(on: .clipboard))
        async let plain = session.receive("UTF8_STRING", from: offer)
        async let html = session.receive("text/html", from: offer)
        async let uris = session.receive("text/uri-list", from: offer)
        let results = try await [plain.0, html.0, uris.0]
        #expect(results == [Data("plain text".utf8), Data("<p>html</p>".utf8), Data("file:///tmp/a\r\n".utf8)])
        await session.close()
    }
}
