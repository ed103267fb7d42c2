import DesktopClipboard
import Foundation
import FerryTestSupport
import Testing
import X11Clipboard

/// The backend as CLIPBOARD_MANAGER (desktop-bridge §1.5, R9).
@Suite struct X11ManagerTests {
    static let gtkStore = TestPaths.fixtures.appendingPathComponent("desktop/gtk-store.py").path
    static let tkOwn = TestPaths.fixtures.appendingPathComponent("desktop/tk-own.tcl").path

    @Test func gtkHandsItsTextOverAndQuitsOnlyAfterTheReply() async throws {
        let session = try X11Session()
        #expect(session.backend.isClipboardManager)
        let text = "kept after GTK quits"
        let gtk = try await ServiceProcess("/usr/bin/python3", [Self.gtkStore, text], environment: session.env)
        defer { gtk.stop() }
        let event = await session.log.next { if case .saveRequested = $0 { true } else { false } }
        guard case .saveRequested(let offer, let reply) = event else {
            Issue.record("expected a SAVE_TARGETS hand-over, got \(session.log.events)")
            return
        }
        #expect(offer.selection == .clipboard)
        #expect(offer.types.contains("UTF8_STRING"))
        #expect(offer.types.allSatisfy { !protocolNames.contains($0) })
        // The offer was reported before the hand-over, with the same id.
        let offered = session.log.events.compactMap { if case .offered(let o) = $0 { o } else { nil } }
        #expect(offered.last?.id == offer.id)
        // GTK waits for the reply: copy everything meanwhile, then take CLIPBOARD, then reply.
        let (bytes, _) = try await session.receive("UTF8_STRING", from: offer)
        #expect(String(decoding: bytes, as: UTF8.self) == text)
        await provingNothingHappens(for: .milliseconds(300))
        #expect(gtk.isRunning, "GTK quit before the manager replied")
        try await session.backend.own(.clipboard, types: ["UTF8_STRING"],
                                      serve: Server(["UTF8_STRING": bytes]).serve)
        reply(saved: true)
        #expect(await gtk.waitForExit(timeout: .seconds(5)) == 0)
        #expect(gtk.standardOutput.contains("STORED"))
        #expect(try await session.xclipPaste("UTF8_STRING").stdout == text)
        await session.close()
    }

    @Test func aSecondRequestWhileOneIsPendingIsRefused() async throws {
        let session = try X11Session()
        let first = try await ServiceProcess("/usr/bin/python3", [Self.gtkStore, "first"], environment: session.env)
        defer { first.stop() }
        _ = await session.log.next { if case .saveRequested = $0 { true } else { false } }
        // A second app hands over while the first waits: refused at once, so it quits at once.
        let second = try await ServiceProcess("/usr/bin/python3", [Self.gtkStore, "second"], environment: session.env)
        defer { second.stop() }
        #expect(await second.waitForExit(timeout: .seconds(3)) == 0)
        #expect(session.log.events.filter { if case .saveRequested = $0 { true } else { false } }.count == 1)
        #expect(first.isRunning)
        await session.close()
    }

    @Test func anotherManagerIsNeverFoughtAndALostRoleIsNotRetaken() async throws {
        let session = try X11Session()
        #expect(session.backend.isClipboardManager)
        // A second backend on the same display finds a manager and leaves the role alone.
        let second = try X11ClipboardBackend(display: session.display.name)
        #expect(!second.isClipboardManager)
        await second.shutdown()
        #expect(session.backend.isClipboardManager)
        // Another client takes CLIPBOARD_MANAGER: the backend lets it go, and does not take it
        // back when that client quits.
        let tk = try await ServiceProcess("wish", [Self.tkOwn, "CLIPBOARD_MANAGER"], environment: session.env)
        #expect(await eventually { !session.backend.isClipboardManager })
        tk.stop()
        _ = await tk.waitForExit()
        await provingNothingHappens(for: .milliseconds(300))
        #expect(!session.backend.isClipboardManager)
        await session.close()
    }

    @Test func withoutTheManagerRoleNothingIsTaken() async throws {
        let session = try X11Session(clipboardManager: false)
        #expect(!session.backend.isClipboardManager)
        // GTK finds no manager and quits without handing over.
        let gtk = try await ServiceProcess("/usr/bin/python3", [Self.gtkStore, "nobody keeps this"], environment: session.env)
        defer { gtk.stop() }
        #expect(await gtk.waitForExit(timeout: .seconds(5)) == 0)
        #expect(!session.log.events.contains { if case .saveRequested = $0 { true } else { false } })
        await session.close()
    }
}

extension X11ManagerTests {
    @Test func aSaveRequestWithoutReplyIsRefusedAfterTenSeconds() async throws {
        let session = try X11Session()
        let xclip = try session.xclipCopy(Data("owned by xclip".utf8))
        defer { xclip.kill() }
        _ = try #require(await session.log.offer(on: .clipboard))
        let script = TestPaths.fixtures.appendingPathComponent("desktop/save-targets-request.py").path
        let requester = try await ServiceProcess("/usr/bin/python3", [script, "UTF8_STRING", "TARGETS"],
                                                 environment: session.env)
        defer { requester.stop() }
        let event = await session.log.next { if case .saveRequested = $0 { true } else { false } }
        guard case .saveRequested(let offer, _) = event else {
            Issue.record("expected a SAVE_TARGETS request, got \(session.log.events)")
            return
        }
        // The listed targets, without the protocol ones.
        #expect(offer.types == ["UTF8_STRING"])
        #expect(await requester.waitForExit(timeout: .seconds(15)) == 0)
        let answer = requester.standardOutput.split(separator: "\n").last.map(String.init) ?? ""
        let parts = answer.split(separator: " ")
        #expect(parts.first == "refused", "\(answer)")
        let seconds = parts.count > 1 ? Double(parts[1]) ?? 0 : 0
        #expect(seconds >= 9.5 && seconds < 13, "answered after \(seconds) s")
        await session.close()
    }
}

private let protocolNames: Set<String> = ["TARGETS", "MULTIPLE", "TIMESTAMP", "SAVE_TARGETS", "DELETE", "INCR"]
