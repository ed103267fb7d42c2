import FerryModel
import Foundation
import Testing

/// `x-special/gnome-copied-files`, as Nautilus writes it and as other writers bend it.
@Suite("GnomeCopiedFiles: GNOME's copied-files selection")
struct GnomeCopiedFilesTests {
    /// What Nautilus 46 puts on the clipboard for Copy of two files (one name with a space and
    /// a non-ASCII letter, percent-encoded as GLib's g_file_get_uri does).
    static let nautilusCopy = Data("copy\nfile:///home/ada/Documents/r%C3%A9sum%C3%A9%20final.pdf\nfile:///home/ada/notes.txt".utf8)

    @Test("Nautilus's copy reads as copy with both URIs, and writes back to the same bytes")
    func nautilusRoundTrip() throws {
        let files = try GnomeCopiedFiles(data: Self.nautilusCopy)
        #expect(files.operation == .copy)
        #expect(files.uris == ["file:///home/ada/Documents/r%C3%A9sum%C3%A9%20final.pdf", "file:///home/ada/notes.txt"])
        #expect(files.fileURLs.map(\.path) == ["/home/ada/Documents/résumé final.pdf", "/home/ada/notes.txt"])
        #expect(files.data == Self.nautilusCopy)
    }

    @Test("cut, a trailing newline, CRLF line ends and a lone CR at the end read the same", arguments: [
        "cut\nfile:///tmp/a\nfile:///tmp/b",
        "cut\nfile:///tmp/a\nfile:///tmp/b\n",
        "cut\r\nfile:///tmp/a\r\nfile:///tmp/b\r\n",
        "cut\r\nfile:///tmp/a\nfile:///tmp/b\r",
    ])
    func tolerantReading(text: String) throws {
        let files = try GnomeCopiedFiles(data: Data(text.utf8))
        #expect(files == GnomeCopiedFiles(operation: .cut, uris: ["file:///tmp/a", "file:///tmp/b"]))
        #expect(files.data == Data("cut\nfile:///tmp/a\nfile:///tmp/b".utf8), "written back in GNOME's form")
    }

    @Test("made from file URLs: percent-encoded URIs, no newline after the last")
    func fromFileURLs() throws {
        let urls = [URL(fileURLWithPath: "/srv/photos/2024 summer/beach #1.jpg"), URL(fileURLWithPath: "/srv/a\nb")]
        let files = try GnomeCopiedFiles(fileURLs: urls)
        #expect(String(decoding: files.data, as: UTF8.self)
                == "copy\nfile:///srv/photos/2024%20summer/beach%20%231.jpg\nfile:///srv/a%0Ab")
        #expect(try GnomeCopiedFiles(data: files.data).fileURLs.map(\.path) == urls.map(\.path), "a newline in a name survives")
        let web = #expect(throws: FerryModelError.self) {
            try GnomeCopiedFiles(fileURLs: [URL(string: "https://example.com/a")!])
        }
        #expect(web?.code == .invalidArgument)
        #expect(web?.keyPath == "fileURLs[0]")
    }

    @Test("only an operation line is a selection of no files")
    func noFiles() throws {
        #expect(try GnomeCopiedFiles(data: Data("copy".utf8)).uris.isEmpty)
        #expect(try GnomeCopiedFiles(data: Data("copy\n".utf8)).uris.isEmpty)
    }

    @Test("bad bytes are invalidArgument naming the line", arguments: [
        (Data(), "line 1"),
        (Data("move\nfile:///tmp/a".utf8), "line 1"),
        (Data("Copy\nfile:///tmp/a".utf8), "line 1"),
        (Data("file:///tmp/a".utf8), "line 1"),
        (Data("copy\nfile:///tmp/a\n\nfile:///tmp/b".utf8), "line 3"),
        (Data("copy\nnot a uri".utf8), "line 2"),
        (Data("copy\n/tmp/relative-path".utf8), "line 2"),
    ] as [(Data, String)])
    func refused(data: Data, line: String) {
        let error = #expect(throws: FerryModelError.self) { try GnomeCopiedFiles(data: data) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.keyPath == line, "\(error?.description ?? "")")
    }

    @Test("bytes that are not UTF-8 are invalidArgument")
    func notUTF8() {
        let error = #expect(throws: FerryModelError.self) {
            try GnomeCopiedFiles(data: Data([0x63, 0x6F, 0x70, 0x79, 0x0A, 0x66, 0xFF, 0xFE]))
        }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("UTF-8") == true)
    }
}
