import FerryBridge
import FerryTestSupport
import Foundation
import Testing

/// The bridge as X11's CLIPBOARD_MANAGER, with a real GTK3 app handing over as it quits.
@Suite("ferry-bridge on X11: a GTK app's SAVE_TARGETS hand-over")
struct X11BridgeManagerTests {
    static let gtkStore = TestPaths.fixtures.appendingPathComponent("desktop/gtk-store.py").path

    @Test("GTK copies, stores and quits at once; xclip -o and ferry paste give its bytes afterwards")
    func gtkStoreSurvivesTheApp() async throws {
        try await X11BridgeSession.with { session in
            #expect(try await eventually { try await session.status()?.isClipboardManager == true },
                    "the bridge owns CLIPBOARD_MANAGER on a display without one")
            let text = "kept after GTK quits: naïve café ✓\nsecond line\ttab"
            let gtk = try await ServiceProcess("/usr/bin/python3", [Self.gtkStore, text], environment: session.environment)
            defer { gtk.stop() }
            let ready = ContinuousClock.now
            let status = await gtk.waitForExit(timeout: .seconds(15))
            let took = ContinuousClock.now - ready
            #expect(status == 0, "\(gtk.standardError)")
            #expect(gtk.standardOutput.contains("STORED"))
            #expect(took < .seconds(2), "gtk_clipboard_store waited \(took): the manager did not answer in time")

            let xclip = try await session.xclipPaste("UTF8_STRING")
            #expect(xclip.status == 0)
            #expect(xclip.standardOutput == Data(text.utf8), "xclip -o after GTK quit")
            let ferry = try await session.ferry("paste")
            #expect(ferry.standardOutput == xclip.standardOutput, "ferry paste and xclip -o give identical bytes")
            #expect(try await session.status()?.clipboard.owner == .ferry, "the bridge serves CLIPBOARD now")
        }
    }
}
