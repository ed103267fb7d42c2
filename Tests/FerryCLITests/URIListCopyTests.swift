import FerryTestSupport
import Foundation
import Testing

/// `text/uri-list`, how file managers copy files, as a reader asking for a file URL or a URL
/// expects it.
@Suite("ferry copy / paste of text/uri-list", .serialized)
struct URIListCopyTests {
    @Test("a text/uri-list of file: URIs pastes as public.file-url and public.url (its first URI) and as itself")
    func fileURIs() async throws {
        try await CLIBroker.with { broker in
            let list = "# copied by a file manager\r\nfile:///home/user/Report%20Q3.pdf\r\nfile:///home/user/notes.txt\r\n"
            let copy = try await broker.ferry("copy", "-t", "text/uri-list", stdin: Data(list.utf8))
            #expect(copy.succeeded, "\(copy.summary)")
            let types = try await broker.ferry("types")
            #expect(types.stdout.contains("org.freedesktop.mime.text.uri-list"), "\(types.stdout)")
            #expect(types.stdout.contains("public.file-url"), "\(types.stdout)")

            let fileURL = try await broker.ferry("paste", "-t", "public.file-url")
            #expect(fileURL.succeeded, "\(fileURL.summary)")
            #expect(fileURL.stdout == "file:///home/user/Report%20Q3.pdf")
            #expect(try await broker.ferry("paste", "-t", "public.url").stdout == "file:///home/user/Report%20Q3.pdf")
            #expect(try await broker.ferry("paste", "-t", "text/uri-list").stdout == list, "the whole list, as copied")
            #expect(try await broker.ferry("paste", "-t", "org.freedesktop.mime.text.uri-list").stdout == list)
        }
    }

    @Test("a text/uri-list of web URIs is public.url, not public.file-url")
    func webURIs() async throws {
        try await CLIBroker.with { broker in
            let list = "https://example.org/a?b=c\r\n"
            #expect(try await broker.ferry("copy", "-t", "text/uri-list", stdin: Data(list.utf8)).succeeded)
            #expect(try await broker.ferry("paste", "-t", "public.url").stdout == "https://example.org/a?b=c")
            let fileURL = try await broker.ferry("paste", "-t", "public.file-url")
            #expect(!fileURL.succeeded, "a web URI is no file URL: \(fileURL.summary)")
            #expect(try await broker.ferry("paste", "-t", "text/uri-list").stdout == list)
        }
    }

    @Test("a long text/uri-list (sent as an fd) pastes as public.file-url too, and whole as itself")
    func longList() async throws {
        try await CLIBroker.with { broker in
            let uris = (0..<600).map { "file:///srv/photos/2026/holiday-picture-number-\($0).jpeg" }
            let list = uris.joined(separator: "\r\n") + "\r\n"
            #expect(list.utf8.count > 16 * 1024, "over the inline limit, so ferry copy sends an fd")
            let copy = try await broker.ferry("copy", "-t", "text/uri-list", stdin: Data(list.utf8))
            #expect(copy.succeeded, "\(copy.summary)")
            let types = try await broker.ferry("types")
            #expect(types.stdout.contains("public.file-url"), "\(types.stdout)")
            let fileURL = try await broker.ferry("paste", "-t", "public.file-url")
            #expect(fileURL.stdout == uris[0], "\(fileURL.summary)")
            let whole = try await broker.ferry("paste", "-t", "text/uri-list")
            #expect(firstDifference(whole.standardOutput, Data(list.utf8)) == nil)
        }
    }
}
