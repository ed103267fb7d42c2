import FerryTestSupport
import Foundation
import Testing

/// ferry-bridge on headless sway with the real ferryd and the real wl-clipboard peers, all run
/// as the sway user.
@Suite("ferry-bridge on Wayland: import, survival, clears, export, PRIMARY")
struct WaylandBridgeTests {
    @Test("a copy in wl-copy lands in Ferry typed, and survives wl-copy killed by pid: identical bytes from wl-paste and ferry paste")
    func importSurvivesTheSource() async throws {
        try await WaylandBridgeSession.with { session in
            #expect(try await session.wlCopy("copied in wl-copy, ümlaut").succeeded)
            #expect(try await eventually { try await session.ferry("types").stdout.contains("public.utf8-plain-text") })
            #expect(try await session.ferry("paste").stdout == "copied in wl-copy, ümlaut")
            #expect(try await session.waitForCompleteImport())
            let status = try #require(try await session.status())
            #expect(status.protocol.contains("data-control"))
            #expect(status.clipboard.owner == "desktop")
            let source = try #require(session.newestWlCopy)
            kill(source, SIGTERM)
            #expect(await eventually { session.newestWlCopy == nil }, "wl-copy did not quit")
            #expect(try await eventually { try await session.wlPaste("-n").stdout == "copied in wl-copy, ümlaut" })
            #expect(try await session.ferry("paste").stdout == "copied in wl-copy, ümlaut")

            // A type of its own: wl-copy offers one MIME type (plus text aliases for text); the
            // item is typed by the type database.
            let html = try session.sway.writeFile("page.html", Data("<p>bold</p>".utf8))
            let before = try #require(try await session.changeCount())
            #expect(try await session.wlCopy("-t", "text/html", input: html).succeeded)
            #expect(try await session.waitForCompleteImport(atLeast: before + 1))
            #expect(try await session.ferry("types").stdout.contains("public.html"))
            #expect(try await session.ferry("paste", "-t", "public.html").stdout == "<p>bold</p>")
        }
    }

    @Test("20 MB through a pipe: wl-copy quits, wl-paste and ferry paste give the same SHA-256")
    func largeImportSurvives() async throws {
        try await WaylandBridgeSession.with { session in
            let image = Data((0..<20_000_000).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) })
            // wl-copy names its copy in /tmp/wl-copy-buffer-* after the file: a name of this test's
            // own finds it once the killed wl-copy has left it behind.
            let name = "survivor-\(UUID().uuidString).png"
            let file = try session.sway.writeFile(name, image)
            let expected = try await WaylandBridgeSession.sha256(ofFile: file)
            #expect(try await session.wlCopy("-t", "image/png", input: file).succeeded)
            #expect(try await session.waitForCompleteImport(timeout: .seconds(40)))
            let source = try #require(session.newestWlCopy)
            kill(source, SIGKILL)
            defer { HeadlessSway.removeBuffersOfKilledWlCopy(named: name) }
            #expect(await eventually { session.newestWlCopy == nil }, "wl-copy did not quit")
            #expect(try await eventually(.seconds(15)) {
                try await session.wlPaste("-l").stdout.split(separator: "\n").contains("image/png")
            })
            let desktop = try await session.shell("wl-paste -t image/png | sha256sum")
            #expect(desktop.succeeded, "\(desktop.standardError)")
            #expect(String(desktop.stdout.prefix(64)) == expected)
            let ferry = try await session.shell("\"$FERRY\" paste -t public.png | sha256sum")
            #expect(String(ferry.stdout.prefix(64)) == expected)
        }
    }

    @Test("wl-copy --paste-once quits after the bridge's copy read it: the selection is restored, bytes identical")
    func pasteOnceSourceQuits() async throws {
        try await WaylandBridgeSession.with { session in
            let copied = try await session.wlCopy("--paste-once", "only once")
            #expect(copied.succeeded)
            #expect(try await session.waitForCompleteImport())
            #expect(await eventually { session.newestWlCopy == nil }, "wl-copy --paste-once still serves")
            #expect(try await eventually { try await session.wlPaste("-n").stdout == "only once" })
            #expect(try await session.wlPaste("-n").stdout == "only once", "a second paste")
            #expect(try await session.ferry("paste").stdout == "only once")
        }
    }

    @Test("wl-copy --clear: Wayland cannot tell a clear from a quit, so the bridge restores (docs/desktop-bridge.md)")
    func clearIsRestored() async throws {
        try await WaylandBridgeSession.with { session in
            #expect(try await session.wlCopy("kept after a clear").succeeded)
            #expect(try await session.waitForCompleteImport())
            let count = try #require(try await session.changeCount())
            #expect(try await session.wlCopy("--clear").succeeded)
            #expect(try await eventually { try await session.wlPaste("-n").stdout == "kept after a clear" })
            #expect(try await eventually { try await session.status()?.clipboard.owner == "ferry" })
            #expect(try await session.ferry("paste").stdout == "kept after a clear")
            #expect(try await session.changeCount() == count, "restoring made a Ferry change")
        }
    }

    @Test("ferry copy becomes the desktop's CLIPBOARD: wl-paste -l lists every type and the text aliases; bytes identical, 20 MB too")
    func export() async throws {
        try await WaylandBridgeSession.with { session in
            let text = try session.sway.writeFile("text.txt", Data("café ✓".utf8))
            let html = try session.sway.writeFile("text.html", Data("<b>café ✓</b>".utf8))
            #expect(try await session.ferry("copy", "--rep", "public.utf8-plain-text=\(text)", "--rep", "public.html=\(html)").succeeded)
            let count = try #require(try await session.changeCount())
            #expect(try await eventually { try await session.wlPaste("-n").stdout == "café ✓" })
            let types = Set(try await session.wlPaste("-l").stdout.split(separator: "\n").map(String.init))
            #expect(types.isSuperset(of: ["text/plain;charset=utf-8", "text/plain", "text/html"]), "\(types)")
            #expect(try await session.wlPaste("-n", "-t", "text/html").stdout == "<b>café ✓</b>")
            #expect(try await session.wlPaste("-n", "-t", "text/plain").stdout == "café ✓")
            await provingNothingHappens(for: .seconds(1))
            #expect(try await session.changeCount() == count, "the bridge's own offer came back as a change")
            let status = try #require(try await session.status())
            #expect(status.clipboard.owner == "ferry")
            #expect(status.clipboard.lastExport?.changeCount == count)

            let image = Data((0..<20_000_000).map { UInt8(truncatingIfNeeded: $0 &* 40_503 >> 5) })
            let file = try session.sway.writeFile("big.png", image)
            let expected = try await WaylandBridgeSession.sha256(ofFile: file)
            #expect(try await session.ferry("copy", "-t", "public.png", file).succeeded)
            #expect(try await eventually {
                try await session.wlPaste("-l").stdout.split(separator: "\n").contains("image/png")
            })
            let pasted = try await session.shell("wl-paste -t image/png | sha256sum")
            #expect(String(pasted.stdout.prefix(64)) == expected)
        }
    }

    @Test("PRIMARY both ways: wl-copy -p lands in ferry paste --primary; ferry copy --primary reaches wl-paste -p once it quits")
    func primary() async throws {
        try await WaylandBridgeSession.with { session in
            #expect(try await session.wlCopy("-p", "selected with the mouse").succeeded)
            #expect(try await eventually { try await session.ferry("paste", "--primary").stdout == "selected with the mouse" })
            let selecting = try #require(session.newestWlCopy)
            // Never taken from a live owner: wl-copy -p keeps PRIMARY.
            #expect(try await session.ferry("copy", "--primary", "--text", "from ferry").succeeded)
            await provingNothingHappens(for: .seconds(1))
            #expect(try await session.wlPaste("-n", "-p").stdout == "selected with the mouse")
            kill(selecting, SIGTERM)
            #expect(try await eventually { try await session.wlPaste("-n", "-p").stdout == "from ferry" })
            #expect(try await session.ferry("copy", "--primary", "--text", "again from ferry").succeeded)
            #expect(try await eventually { try await session.wlPaste("-n", "-p").stdout == "again from ferry" })
        }
    }
}
