import DesktopClipboard
import FerryTestSupport
import Foundation
import Testing
import WaylandClipboard

/// The Wayland backend against headless sway 1.7 (zwlr_data_control_manager_v1 version 2) with
/// wl-clipboard 2.1 as the other client, both run as the test-only user `ferry-wl`.
@Suite(.serialized)
struct WaylandClipboardBackendTests {
    /// What wl-copy offers for text (it adds the X11 names).
    static let wlCopyTextTypes = ["text/plain", "text/plain;charset=utf-8", "TEXT", "STRING", "UTF8_STRING"]

    @Test func copiedTextIsOfferedWithItsTypesAndReadable() async throws {
        try await WaylandFixture.with { f in
            #expect(f.backend.protocolName == "wlr-data-control-v2")
            #expect(f.backend.supportsPrimary)
            try await f.peer(["wl-copy", "hello from wl-copy"])
            let offer = try await f.offer(on: .clipboard)
            #expect(offer.types == Self.wlCopyTextTypes)
            let (outcome, bytes) = try await f.receive("text/plain;charset=utf-8", from: offer)
            #expect(outcome == .handedToSource)
            #expect(String(decoding: bytes, as: UTF8.self) == "hello from wl-copy")
        }
    }

    @Test func twentyMegabytesFromWlCopyArriveByteForByte() async throws {
        try await WaylandFixture.with { f in
            let payload = randomBytes(20_000_000, seed: 17)
            let file = try f.sway.writeFile("big.png", payload)
            try await f.peer(["wl-copy", "-t", "image/png"], standardInput: file)
            let offer = try await f.offer(on: .clipboard)
            #expect(offer.types == ["image/png"])
            let (_, bytes) = try await f.receive("image/png", from: offer)
            #expect(firstDifference(bytes, payload) == nil)
        }
    }

    @Test func primaryCopyIsOfferedOnPrimary() async throws {
        try await WaylandFixture.with { f in
            try await f.peer(["wl-copy", "-p", "selected words"])
            let offer = try await f.offer(on: .primary)
            #expect(offer.types.contains("text/plain"))
            let (_, bytes) = try await f.receive("text/plain", from: offer)
            #expect(String(decoding: bytes, as: UTF8.self) == "selected words")
            #expect(!f.events.contains { if case .offered(let o) = $0 { o.selection == .clipboard } else { false } })
        }
    }

    @Test func clearingEmptiesTheSelection() async throws {
        try await WaylandFixture.with { f in
            try await f.peer(["wl-copy", "soon gone"])
            _ = try await f.offer(on: .clipboard)
            let before = f.events.count
            try await f.peer(["wl-copy", "--clear"])
            let (event, _) = try await f.waitFor(after: before, "emptied") {
                if case .emptied = $0 { true } else { false }
            }
            guard case .emptied(let selection, let end) = event else { return }
            #expect(selection == .clipboard)
            #expect(end == .unknown)
        }
    }

    @Test func killedSourceEmptiesTheSelectionAndItsOfferIsGone() async throws {
        try await WaylandFixture.with { f in
            try await f.peer(["wl-copy", "owner about to die"])
            let offer = try await f.offer(on: .clipboard)
            let owner = try #require(f.sway.newestProcess(named: "wl-copy"))
            let before = f.events.count
            kill(owner, SIGKILL)
            try await f.waitFor(after: before, "emptied after the owner was killed") {
                if case .emptied(.clipboard, .unknown) = $0 { true } else { false }
            }
            await #expect(throws: DesktopClipboardError.self) {
                _ = try await f.receive("text/plain", from: offer)
            }
            do {
                _ = try await f.receive("text/plain", from: offer)
            } catch let error as DesktopClipboardError {
                #expect(error.code == .offerGone)
            }
        }
    }

    @Test func aReplacedOfferIsGoneAndTheNewOneHasAHigherID() async throws {
        try await WaylandFixture.with { f in
            try await f.peer(["wl-copy", "first"])
            let first = try await f.offer(on: .clipboard)
            let count = f.events.count
            try await f.peer(["wl-copy", "-t", "text/html", "<b>second</b>"])
            let second = try await f.offer(on: .clipboard, after: count)
            #expect(second.id > first.id)
            #expect(second.types.first == "text/html")
            #expect(Set(second.types).count == second.types.count)
            do {
                _ = try await f.receive("text/plain", from: first)
                Issue.record("a replaced offer was read")
            } catch let error as DesktopClipboardError {
                #expect(error.code == .offerGone)
            }
            let (_, bytes) = try await f.receive("text/html", from: second)
            #expect(String(decoding: bytes, as: UTF8.self) == "<b>second</b>")
        }
    }

    @Test func aTypeTheOfferLacksIsRefused() async throws {
        try await WaylandFixture.with { f in
            try await f.peer(["wl-copy", "plain"])
            let offer = try await f.offer(on: .clipboard)
            do {
                _ = try await f.receive("image/png", from: offer)
                Issue.record("an absent type was asked for")
            } catch let error as DesktopClipboardError {
                #expect(error.code == .refused)
            }
        }
    }

    @Test func aTypeNameThatIsNotUTF8IsLeftOut() async throws {
        try await WaylandFixture.with { f in
            try await f.peer(["sh", "-c", #"wl-copy -t "$(printf 'image/\377png')" bytes"#])
            let offer = try await f.offer(on: .clipboard)
            #expect(offer.types.isEmpty, "\(offer.types)")
        }
    }

    @Test func aStormOfCopiesIsReportedOneOfferPerCopy() async throws {
        try await WaylandFixture.with { f in
            let copies = 100
            for round in 0..<copies { try await f.peer(["wl-copy", "storm \(round)"]) }
            let deadline = ContinuousClock.now + .seconds(20)
            var offers: [DesktopOffer] = []
            while ContinuousClock.now < deadline {
                offers = f.events.compactMap { if case .offered(let o) = $0 { o } else { nil } }
                if offers.count >= copies { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            await provingNothingHappens(for: .milliseconds(300))
            #expect(f.events.count == copies, "one event per copy, nothing else: \(f.events.count)")
            #expect(offers.map(\.id) == offers.map(\.id).sorted())
            let last = try #require(offers.last)
            let (_, bytes) = try await f.receive("text/plain", from: last)
            #expect(String(decoding: bytes, as: UTF8.self).hasPrefix("storm "))
        }
    }

    @Test func ownedClipboardIsListedAndServedToWlPasteByteForByte() async throws {
        try await WaylandFixture.with { f in
            let payload = randomBytes(20_000_000, seed: 42)
            let text = Data("Ferry's text".utf8)
            try await f.backend.own(.clipboard, types: ["image/png", "text/plain;charset=utf-8", "text/plain"]) { type, fd in
                feed(fd, type == "image/png" ? payload : text)
            }
            let listed = try await f.peer(["wl-paste", "-l"])
            #expect(listed.stdout.split(separator: "\n") == ["image/png", "text/plain;charset=utf-8", "text/plain"])
            let image = try await f.peer(["wl-paste", "-t", "image/png"])
            #expect(firstDifference(image.standardOutput, payload) == nil)
            let plain = try await f.peer(["wl-paste", "-n", "-t", "text/plain"])
            #expect(plain.standardOutput == text)
            // The backend's own ownership is never reported as an offer.
            await provingNothingHappens(for: .milliseconds(200))
            #expect(!f.events.contains { if case .offered = $0 { true } else { false } })
        }
    }

    @Test func ownedPrimaryIsServedToWlPastePrimary() async throws {
        try await WaylandFixture.with { f in
            try await f.backend.own(.primary, types: ["text/plain"]) { _, fd in feed(fd, Data("middle click".utf8)) }
            let pasted = try await f.peer(["wl-paste", "-p", "-n"])
            #expect(pasted.stdout == "middle click")
            let clipboard = try await f.sway.run(["wl-paste", "-n"])
            #expect(!clipboard.succeeded, "the clipboard stays empty when PRIMARY is owned")
        }
    }

    @Test func anotherCopyEndsOwnershipThenIsOffered() async throws {
        try await WaylandFixture.with { f in
            try await f.backend.own(.clipboard, types: ["text/plain"]) { _, fd in feed(fd, Data("ours".utf8)) }
            try await f.peer(["wl-copy", "theirs"])
            let lost = try await f.waitFor("ownershipLost") {
                if case .ownershipLost(.clipboard) = $0 { true } else { false }
            }
            let offer = try await f.offer(on: .clipboard)
            #expect(offer.types == Self.wlCopyTextTypes)
            #expect(f.events.firstIndex { if case .offered = $0 { true } else { false } }! > lost.index)
            let (_, bytes) = try await f.receive("text/plain", from: offer)
            #expect(String(decoding: bytes, as: UTF8.self) == "theirs")
        }
    }

    @Test func owningAgainReplacesTheSourceWithoutLosingOwnership() async throws {
        try await WaylandFixture.with { f in
            try await f.backend.own(.clipboard, types: ["text/plain"]) { _, fd in feed(fd, Data("one".utf8)) }
            try await f.backend.own(.clipboard, types: ["text/html"]) { _, fd in feed(fd, Data("<i>two</i>".utf8)) }
            let listed = try await f.peer(["wl-paste", "-l"])
            #expect(listed.stdout == "text/html\n")
            let pasted = try await f.peer(["wl-paste", "-n", "-t", "text/html"])
            #expect(pasted.stdout == "<i>two</i>")
            await provingNothingHappens(for: .milliseconds(200))
            #expect(f.events.isEmpty, "replacing its own source is not news: \(f.events)")
        }
    }

    @Test func disowningEmptiesTheSelectionQuietly() async throws {
        try await WaylandFixture.with { f in
            try await f.backend.own(.clipboard, types: ["text/plain"]) { _, fd in feed(fd, Data("brief".utf8)) }
            await f.backend.disown(.clipboard)
            let pasted = try await f.sway.run(["wl-paste", "-l"])
            #expect(!pasted.succeeded, "wl-paste still found \(pasted.stdout)")
            await provingNothingHappens(for: .milliseconds(200))
            #expect(f.events.isEmpty, "\(f.events)")
        }
    }

    @Test func aSecondBackendIsOfferedTheFirstOnesSelectionAtStart() async throws {
        try await WaylandFixture.with { f in
            try await f.backend.own(.clipboard, types: ["text/plain", "text/html"]) { type, fd in
                feed(fd, Data("\(type) from the first backend".utf8))
            }
            let second = try WaylandClipboardBackend(display: f.sway.socketPath)
            var events = second.events.makeAsyncIterator()
            let first = try await events.next()
            guard case .offered(let offer) = first else {
                await second.shutdown()
                Issue.record("the second backend began with \(String(describing: first))")
                return
            }
            #expect(offer.selection == .clipboard)
            #expect(offer.types == ["text/plain", "text/html"])
            var ends: [Int32] = [-1, -1]
            try #require(pipe(&ends) == 0)
            let drained = drain(ends[0])
            _ = try await second.receive("text/html", from: offer, into: ends[1], timeout: .seconds(5))
            #expect(String(decoding: await drained.value, as: UTF8.self) == "text/html from the first backend")
            await second.shutdown()
            #expect(f.events.isEmpty, "the owner reported its own selection: \(f.events)")
        }
    }

    @Test func aDisplayThatDoesNotExistIsUnavailable() async throws {
        do {
            _ = try WaylandClipboardBackend(display: "/nonexistent/ferry-wayland-99")
            Issue.record("connected to a display that does not exist")
        } catch {
            #expect(error.code == .unavailable)
            #expect(error.message.contains("/nonexistent/ferry-wayland-99"))
        }
    }

    @Test func shutdownFinishesTheEventsWithDisconnected() async throws {
        let f = try await WaylandFixture()
        await f.backend.shutdown()
        await f.backend.shutdown()
        let deadline = ContinuousClock.now + .seconds(5)
        while f.end == nil && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect((f.end as? DesktopClipboardError)?.code == .disconnected)
        do {
            try await f.backend.own(.clipboard, types: ["text/plain"]) { _, fd in close(fd) }
            Issue.record("owned after shutdown")
        } catch let error as DesktopClipboardError {
            #expect(error.code == .disconnected)
        }
        await f.tearDown()
    }

    @Test func aCompositorThatGoesAwayFinishesTheEventsWithDisconnected() async throws {
        let f = try await WaylandFixture()
        for pid in f.sway.processes() { kill(pid, SIGKILL) }
        let deadline = ContinuousClock.now + .seconds(10)
        while f.end == nil && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect((f.end as? DesktopClipboardError)?.code == .disconnected)
        await f.tearDown()
    }
}
