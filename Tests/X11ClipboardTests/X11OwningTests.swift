import DesktopClipboard
import Foundation
import FerryTestSupport
import Testing
import X11Clipboard

/// The backend as the owner of a selection, read by real X11 clients (desktop-bridge §1.4, R8).
@Suite struct X11OwningTests {
    @Test func peersListTheTypesAndGetTheBytes() async throws {
        let session = try X11Session()
        let big = randomBytes(20_000_000, seed: 3)
        let server = Server(["UTF8_STRING": Data("owned by Ferry ✓".utf8), "text/html": Data("<i>Ferry</i>".utf8),
                             "image/png": big])
        try await session.backend.own(.clipboard, types: ["UTF8_STRING", "text/html", "image/png", "TARGETS"],
                                      serve: server.serve)
        let targets = try await session.xclipPaste("TARGETS")
        #expect(targets.succeeded)
        let listed = targets.stdout.split(separator: "\n").map(String.init)
        #expect(Set(listed) == ["TARGETS", "TIMESTAMP", "MULTIPLE", "UTF8_STRING", "text/html", "image/png"])
        #expect(try await session.xclipPaste("UTF8_STRING").standardOutput == Data("owned by Ferry ✓".utf8))
        #expect(try await session.xclipPaste("text/html").standardOutput == Data("<i>Ferry</i>".utf8))
        // 20 MB is more than one property holds: INCR.
        let image = try await session.xclipPaste("image/png")
        #expect(image.succeeded)
        #expect(image.standardOutput.count == big.count)
        #expect(image.standardOutput == big)
        // A type never offered is refused, and xclip says so.
        #expect(try await session.xclipPaste("application/pdf").succeeded == false)
        // xsel asks for UTF8_STRING too.
        let xsel = try await ChildProcess.run("xsel", ["-b", "-o"], environment: session.env)
        #expect(xsel.stdout == "owned by Ferry ✓")
        await session.close()
    }

    @Test func theBackendsOwnOwnershipIsNeverAnOfferAndItsLossIsReported() async throws {
        let session = try X11Session()
        let server = Server(["UTF8_STRING": Data("mine".utf8)])
        try await session.backend.own(.clipboard, types: ["UTF8_STRING"], serve: server.serve)
        #expect(try await session.xclipPaste("UTF8_STRING").stdout == "mine")
        await provingNothingHappens(for: .milliseconds(300))
        #expect(!session.log.events.contains { if case .offered = $0 { true } else { false } })

        let xclip = try session.xclipCopy(Data("theirs".utf8))
        defer { xclip.kill() }
        let lost = await session.log.next { if case .ownershipLost = $0 { true } else { false } }
        guard case .ownershipLost(.clipboard) = lost else {
            Issue.record("expected the ownership of CLIPBOARD to be lost, got \(String(describing: lost))")
            return
        }
        let offer = try #require(await session.log.offer(on: .clipboard))
        #expect(offer.types == ["UTF8_STRING"])
        #expect(try await session.receive("UTF8_STRING", from: offer).0 == Data("theirs".utf8))
        await session.close()
    }

    @Test func disowningEmptiesTheSelectionWithoutReportingIt() async throws {
        let session = try X11Session()
        try await session.backend.own(.primary, types: ["UTF8_STRING"], serve: Server(["UTF8_STRING": Data("p".utf8)]).serve)
        #expect(try await session.xclipPaste("UTF8_STRING", selection: "primary").stdout == "p")
        await session.backend.disown(.primary)
        #expect(try await session.xclipPaste("UTF8_STRING", selection: "primary").succeeded == false)
        await provingNothingHappens(for: .milliseconds(300))
        #expect(session.log.events.isEmpty, "\(session.log.events)")
        // A clear by someone else afterwards is reported again.
        let xsel = try session.xselCopy("again", selection: "-p")
        defer { xsel.kill() }
        _ = try #require(await session.log.offer(on: .primary))
        let count = session.log.events.count
        #expect(try await ChildProcess.run("xsel", ["-p", "-c"], environment: session.env).succeeded)
        let cleared = await session.log.next(after: count) { if case .emptied = $0 { true } else { false } }
        guard case .emptied(.primary, .cleared) = cleared else {
            Issue.record("expected PRIMARY cleared, got \(String(describing: cleared))")
            return
        }
        await session.close()
    }

    @Test func aStalledReaderIsDroppedWhileAnotherGetsItsBytes() async throws {
        let session = try X11Session()
        let big = randomBytes(20_000_000, seed: 5)
        // The first serve stops after 8 MB (twice what one property holds: INCR has begun) until
        // its reader is stopped.
        let server = Server(["image/png": big], pauseFirstAfter: 8_000_000)
        try await session.backend.own(.clipboard, types: ["image/png"], serve: server.serve)
        // The first reader starts an INCR transfer, then stops (SIGSTOP) without deleting chunks.
        let stalled = try RunningProcess("xclip", ["-o", "-selection", "clipboard", "-t", "image/png"], environment: session.env)
        defer { stalled.send(SIGCONT); stalled.kill() }
        Thread.detachNewThread { _ = readToEnd(stalled.standardOutput) }
        #expect(await eventually { server.firstPaused })
        try await Task.sleep(for: .milliseconds(300))
        stalled.send(SIGSTOP)
        server.resumeFirst()
        let started = ContinuousClock.now
        let other = try await session.xclipPaste("image/png")
        #expect(other.standardOutput == big)
        #expect(ContinuousClock.now - started < .seconds(5), "the second reader waited on the stalled one")
        // The stalled transfer is given up after 5 s: its writer sees its pipe closed.
        #expect(await eventually(.seconds(12)) { server.outcomes.contains { !$0.complete } })
        #expect(server.outcomes.filter(\.complete).count == 1)
        await session.close()
    }

    @Test func multipleConvertsEachPairAndRefusesWhatIsNotOffered() async throws {
        let session = try X11Session()
        let server = Server(["UTF8_STRING": Data("plain".utf8), "text/html": Data("<p>rich</p>".utf8)])
        try await session.backend.own(.clipboard, types: ["UTF8_STRING", "text/html"], serve: server.serve)
        let script = TestPaths.fixtures.appendingPathComponent("desktop/multiple-request.py").path
        let result = try await ChildProcess.run("/usr/bin/python3", [script, "UTF8_STRING", "application/pdf", "text/html",
                                                                       "TARGETS"], environment: session.env)
        #expect(result.succeeded, "\(result.stderr)")
        #expect(result.stdout.split(separator: "\n") == [
            "UTF8_STRING \(Data("plain".utf8).hex)",
            "application/pdf refused",
            "text/html \(Data("<p>rich</p>".utf8).hex)",
            "TARGETS TARGETS,TIMESTAMP,MULTIPLE,UTF8_STRING,text/html",
        ])
        await session.close()
    }
}

extension Data {
    var hex: String { map { String(format: "%02x", $0) }.joined() }
}
