import Ferry
import FerryBridge
import FerryModel
import FerryTestSupport
import Foundation
import Testing

/// ferry-bridge on Xvfb with the real ferryd and real X11 peers.
@Suite("ferry-bridge on X11: import, survival, export, clears, PRIMARY, secrets")
struct X11BridgeTests {
    @Test("a copy in xclip lands in Ferry typed, and survives xclip: identical bytes from xclip -o and ferry paste (20 MB through INCR)")
    func importSurvivesTheSource() async throws {
        try await X11BridgeSession.with { session in
            let text = Data("copied in xclip, ümlaut\n".utf8)
            let xclip = try session.xclipCopy(text)
            #expect(try await eventually { try await session.ferry("types").stdout.contains("public.utf8-plain-text") })
            #expect(try await session.ferry("paste").standardOutput == text)
            #expect(try await session.waitForCompleteImport())
            let items = try await session.client.general.items
            #expect(items.first?.origin == "desktop:CLIPBOARD")
            xclip.kill()
            #expect(try await eventually { try await session.xclipPaste("UTF8_STRING").standardOutput == text })
            #expect(try await session.xclipPaste("STRING").succeeded, "the restored selection offers the text aliases")

            let image = Data((0..<20_000_000).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) })
            let before = try await session.client.general.changeCount
            let big = try session.xclipCopy(image, type: "image/png")
            #expect(try await session.waitForCompleteImport(atLeast: before + 1, timeout: .seconds(30)))
            big.kill()
            #expect(try await eventually(.seconds(15)) {
                try await session.xclipPaste("TARGETS").stdout.contains("image/png")
            })
            let pasted = try await session.xclipPaste("image/png")
            #expect(pasted.standardOutput.count == image.count)
            #expect(pasted.standardOutput == image)
            #expect(try await session.ferry("paste", "-t", "public.png").standardOutput == image)
        }
    }

    @Test("ferry copy becomes the desktop's CLIPBOARD with every alias; STRING is Latin-1; no re-import of the bridge's own offer")
    func export() async throws {
        try await X11BridgeSession.with { session in
            #expect(try await session.ferry("copy", "--text", "café ✓").succeeded)
            let count = try await session.client.general.changeCount
            #expect(try await eventually { try await session.xclipPaste("UTF8_STRING").stdout == "café ✓" })
            let targets = Set(try await session.xclipPaste("TARGETS").stdout.split(separator: "\n").map(String.init))
            #expect(targets.isSuperset(of: ["UTF8_STRING", "STRING", "TEXT", "text/plain;charset=utf-8", "text/plain"]))
            #expect(try await session.xclipPaste("STRING").standardOutput == Data([0x63, 0x61, 0x66, 0xE9, 0x20, 0x3F]))
            await provingNothingHappens(for: .seconds(1))
            #expect(try await session.client.general.changeCount == count, "the bridge's own offer came back as a change")
            let status = try #require(try await session.status())
            #expect(status.clipboard.owner == .ferry)
            #expect(status.clipboard.lastExport?.changeCount == count)
        }
    }

    @Test("an explicit clear (xsel -c) is honoured: nothing restored; Ferry keeps the item")
    func clearIsHonoured() async throws {
        try await X11BridgeSession.with { session in
            let xsel = try session.xselCopy("to be cleared")
            defer { xsel.kill() }
            #expect(try await session.waitForCompleteImport())
            let cleared = try await ChildProcess.run("xsel", ["-b", "-c"], environment: session.environment, timeout: .seconds(10))
            #expect(cleared.succeeded)
            await provingNothingHappens(for: .seconds(1))
            #expect(try await session.xclipPaste("UTF8_STRING").succeeded == false)
            #expect(try await session.ferry("paste").stdout == "to be cleared")
        }
    }

    @Test("PRIMARY is never taken from a live owner; once the owner quits, it is restored")
    func primaryFromLiveOwner() async throws {
        try await X11BridgeSession.with { session in
            let xsel = try session.xselCopy("selected", selection: "-p")
            let primary = try await session.client.pasteboard(named: "primary")
            // While the import settles the bridge may replace its promised item under a read
            // (Unavailable, "no promised … for item"): that read is a "not yet".
            #expect(await eventually { (try? await primary.string) == "selected" })
            #expect(try await session.ferry("copy", "-p", "primary", "--text", "from ferry").succeeded)
            await provingNothingHappens(for: .seconds(1))
            #expect(try await session.xclipPaste("UTF8_STRING", selection: "primary").stdout == "selected")
            xsel.kill()
            #expect(try await eventually {
                try await session.xclipPaste("UTF8_STRING", selection: "primary").stdout == "from ferry"
            })
        }
    }

    @Test("a Tk secret is proxied while Tk lives, never stored, not in history, never restored")
    func secret() async throws {
        try await X11BridgeSession.with { session in
            let tk = try await session.tkSecret("hunter2")
            #expect(try await eventually(.seconds(15)) { try await session.ferry("paste").stdout == "hunter2" })
            let item = try #require(try await session.client.general.items.first)
            #expect(item.isSensitive)
            #expect(item.origin == "desktop:CLIPBOARD")
            #expect(try await eventually { try await session.status()?.clipboard.lastImport?.isSensitive == true })
            tk.stop()
            await provingNothingHappens(for: .seconds(1))
            #expect(try await session.xclipPaste("UTF8_STRING").succeeded == false, "a secret was restored")
            #expect(try await session.ferry("copy", "--text", "next").succeeded)
            let history = try await session.client.general.history()
            #expect(!history.contains { $0.items.contains { $0.id == item.id } }, "the secret entered the history")
        }
    }
}
