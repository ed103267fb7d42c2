import Ferry
import FerryBridge
import FerryModel
import FerryTestSupport
import Foundation
import Testing

/// Files copied the way file managers copy them, on Xvfb with the real ferryd, ferry-bridge and xclip.
@Suite("ferry-bridge on X11: a file manager's copy becomes a file item")
struct X11BridgeFileTests {
    @Test("xclip -t text/uri-list: ferry types shows public.file-url, which survives xclip")
    func uriList() async throws {
        try await X11BridgeSession.with { session in
            let uri = "file:///tmp/ferry%20bridge/report.pdf"
            let xclip = try session.xclipCopy(Data("\(uri)\r\n".utf8), type: "text/uri-list")
            defer { xclip.kill() }
            #expect(try await eventually { try await session.ferry("types").stdout.contains("public.file-url") })
            #expect(try await session.ferry("types").stdout.contains("org.freedesktop.mime.text.uri-list"))
            #expect(try await session.ferry("paste", "-t", "public.file-url").stdout == uri)
            xclip.kill()
            await provingNothingHappens(for: .milliseconds(300))
            #expect(try await session.ferry("paste", "-t", "public.file-url").stdout == uri, "the file URL died with xclip")
            #expect(try await session.ferry("paste", "-t", "org.freedesktop.mime.text.uri-list").stdout == "\(uri)\r\n")
        }
    }

    @Test("xclip -t x-special/gnome-copied-files: the gnome form becomes a URI list and a file URL")
    func gnomeCopiedFiles() async throws {
        try await X11BridgeSession.with { session in
            let first = "file:///home/user/a.txt", second = "file:///home/user/b.txt"
            let xclip = try session.xclipCopy(Data("copy\n\(first)\n\(second)".utf8), type: "x-special/gnome-copied-files")
            defer { xclip.kill() }
            #expect(try await eventually { try await session.ferry("types").stdout.contains("public.file-url") })
            #expect(try await session.ferry("paste", "-t", "public.file-url").stdout == first)
            let list = try await session.ferry("paste", "-t", "org.freedesktop.mime.text.uri-list").stdout
            #expect(list.split(whereSeparator: \.isNewline) == [Substring(first), Substring(second)])
        }
    }
}
