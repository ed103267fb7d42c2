import FerryTestSupport
import Foundation
import Testing

/// `ferry paste -t 'text/plain;charset=utf-8'` of text held as UTF-16 (how some apps offer text):
/// converted on the way out, streamed, and refused when it is not UTF-16.
@Suite("ferry paste: UTF-16 text as UTF-8", .serialized)
struct UTF16PasteTests {
    static let text = "Grüße, 世界! 🚢 ferry\r\nline two\n"

    /// `text` in UTF-16 with the given byte order, with or without a byte-order mark.
    static func utf16(_ text: String, bigEndian: Bool, mark: Bool) -> Data {
        var bytes: [UInt8] = []
        for unit in (mark ? [0xFEFF] : []) + Array(text.utf16) {
            bytes += bigEndian ? [UInt8(unit >> 8), UInt8(unit & 0xFF)] : [UInt8(unit & 0xFF), UInt8(unit >> 8)]
        }
        return Data(bytes)
    }

    @Test("LE and BE, with and without a byte-order mark, copied as text/plain;charset=utf-16: pasted as UTF-8",
          arguments: [(false, true), (true, true), (false, false), (true, false)])
    func conversions(bigEndian: Bool, mark: Bool) async throws {
        try await CLIBroker.with { broker in
            let copy = try await broker.ferry("copy", "-t", "text/plain;charset=utf-16",
                                              stdin: Self.utf16(Self.text, bigEndian: bigEndian, mark: mark))
            #expect(copy.succeeded, "\(copy.summary)")
            for type in ["text/plain;charset=utf-8", "public.utf8-plain-text"] {
                let pasted = try await broker.ferry("paste", "-t", type)
                #expect(pasted.succeeded, "\(type): \(pasted.summary)")
                #expect(pasted.standardOutput == Data(Self.text.utf8), "\(type)")
            }
            // Without asking for UTF-8, the bytes come as they are held.
            #expect(try await broker.ferry("paste").standardOutput == Self.utf16(Self.text, bigEndian: bigEndian, mark: mark))
        }
    }

    @Test("12 MiB of UTF-16 streams through the converter into a file, byte-exact")
    func large() async throws {
        try await CLIBroker.with { broker in
            let line = "ünïcödé 😀 text, a line of it — number "
            // About 6 Mi UTF-16 code units (12 MiB): many reads of the converter's 1 MiB buffer.
            let text = (0..<(6 << 20) / 48).map { line + String($0) + "\n" }.joined()
            let source = try broker.file("big.utf16", Self.utf16(text, bigEndian: false, mark: true))
            #expect(try await broker.ferry("copy", "-t", "public.utf16-plain-text", source.path).succeeded)
            let output = broker.folder.appendingPathComponent("big.txt")
            let pasted = try await broker.ferry(["paste", "-t", "text/plain;charset=utf-8", "-o", output.path], timeout: .seconds(120))
            #expect(pasted.succeeded, "\(pasted.summary)")
            #expect(firstDifference(try Data(contentsOf: output), Data(text.utf8)) == nil)
        }
    }

    @Test("an item with UTF-8 text beside UTF-16 gives its UTF-8 as it is")
    func utf8Held() async throws {
        try await CLIBroker.with { broker in
            let utf16 = try broker.file("t.utf16", Self.utf16("sixteen", bigEndian: false, mark: true))
            let utf8 = try broker.file("t.txt", Data("eight".utf8))
            let copy = try await broker.ferry("copy", "--rep", "public.utf16-plain-text=\(utf16.path)",
                                              "--rep", "public.utf8-plain-text=\(utf8.path)")
            #expect(copy.succeeded, "\(copy.summary)")
            #expect(try await broker.ferry("paste", "-t", "text/plain;charset=utf-8").stdout == "eight")
        }
    }

    @Test("text that is not UTF-16 is refused with status 1 and a clear line; -o leaves no file", arguments: [
        ("a lone low surrogate", Data([0x61, 0x00, 0x00, 0xDC, 0x62, 0x00])),
        ("a high surrogate without its low one", Data([0xFF, 0xFE, 0x3D, 0xD8, 0x61, 0x00])),
        ("an odd number of bytes", Data([0x61, 0x00, 0x62])),
    ])
    func invalid(what: String, bytes: Data) async throws {
        try await CLIBroker.with { broker in
            #expect(try await broker.ferry("copy", "-t", "public.utf16-plain-text", stdin: bytes).succeeded)
            let pasted = try await broker.ferry("paste", "-t", "text/plain;charset=utf-8")
            #expect(pasted.status == 1, "\(what): \(pasted.summary)")
            #expect(pasted.stderr.hasPrefix("ferry: cannot convert the text to UTF-8: not valid UTF-16"), "\(what): \(pasted.stderr)")
            #expect(pasted.stderr.split(separator: "\n").count == 1)
            let output = broker.folder.appendingPathComponent("out.txt")
            let toFile = try await broker.ferry("paste", "-t", "text/plain;charset=utf-8", "-o", output.path)
            #expect(toFile.status == 1, "\(what)")
            #expect(!FileManager.default.fileExists(atPath: output.path), "\(what): nothing half-converted is left")
        }
    }

    @Test("an item without UTF-16 text still says what it has")
    func noText() async throws {
        try await CLIBroker.with { broker in
            #expect(try await broker.ferry("copy", "-t", "public.png", try broker.file("i.png", try payload("sample.png")).path).succeeded)
            let pasted = try await broker.ferry("paste", "-t", "text/plain;charset=utf-8")
            #expect(pasted.status == 2, "\(pasted.summary)")
            #expect(pasted.stderr.contains("nothing conforming to public.utf8-plain-text"), "\(pasted.stderr)")
        }
    }
}
