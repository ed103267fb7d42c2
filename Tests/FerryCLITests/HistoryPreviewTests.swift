import FerryTestSupport
import Foundation
import Testing

/// `ferry history` previews (issue #18): text's first line, an image's pixel and byte size,
/// computed by the broker without logging a paste.
@Suite("ferry history: previews", .serialized)
struct HistoryPreviewTests {
    @Test("text rows end in the first line, escaped and cut to 60 characters; an image row in its pixel and byte size; nothing is logged")
    func previews() async throws {
        try await CLIBroker.with { broker in
            let png = try payload("sample.png")
            #expect(try await broker.ferry("copy", try broker.file("Photo.png", png).path).succeeded)
            let long = String(repeating: "ab", count: 50)
            #expect(try await broker.ferry("copy", "--text", "\n  first\tline \u{1B}[31m  \nsecond line\n").succeeded)
            #expect(try await broker.ferry("copy", "--text", long).succeeded)
            #expect(try await broker.ferry("copy", "--text", "current").succeeded)
            let logBefore = try await broker.ferry("log", "--json").stdout

            let text = try await broker.ferry("history")
            #expect(text.succeeded, "\(text.summary)")
            let rows = text.stdout.split(separator: "\n").map(String.init)
            try #require(rows.count == 3, "\(text.stdout)")
            #expect(rows[0].hasSuffix("  public.utf8-plain-text  " + String(long.prefix(59)) + "…"), "\(rows[0])")
            #expect(rows[1].hasSuffix("  first\\tline \\u{1B}[31m"), "\(rows[1])")
            #expect(rows[2].hasSuffix("  16x16  \(png.count) B"), "\(rows[2])")
            #expect(rows.enumerated().allSatisfy { $0.element.hasPrefix("\($0.offset)  ") }, "rows begin with the index")

            let json = try jsonObject(try await broker.ferry("history", "--json"))
            let entries = try #require(json["entries"] as? [[String: Any]])
            let items = entries.compactMap { ($0["items"] as? [[String: Any]])?.first }
            try #require(items.count == 3)
            #expect(items[0]["preview"] as? String == long, "JSON keeps up to 200 characters")
            #expect(items[1]["preview"] as? String == "first\tline \u{1B}[31m")
            #expect(items[1]["pixelWidth"] is NSNull && items[1]["pixelHeight"] is NSNull)
            #expect(items[2]["pixelWidth"] as? Int == 16 && items[2]["pixelHeight"] as? Int == 16)
            #expect(items[2]["size"] as? Int == png.count)
            #expect(items[2]["preview"] is NSNull)
            #expect(Set(items[0].keys) == ["index", "id", "suggestedName", "localOnly", "expirationDate", "sourceAppID",
                                           "origin", "representations", "preview", "size", "pixelWidth", "pixelHeight"])

            #expect(try await broker.ferry("log", "--json").stdout == logBefore, "browsing history logged a paste")
        }
    }
}
