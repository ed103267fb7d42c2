import FerryTestSupport
import Foundation
import Testing

@Suite("URLs sent to a connected scene reach it (scene(_:openURLContexts:)) with the real ferry-demo")
struct OpenURLContextsCLITests {
    @Test("scene open with --url continuing in Notes' Editor: the Editor hears the URLs, in order, after the activity")
    func urlsReachConnectedScene() async throws {
        try await CLIBroker.with { broker in
            let notes = try await ServiceProcess(try BuiltProducts.executable("ferry-demo"),
                                                 [TestPaths.fixtures.appendingPathComponent("Apps/Notes").path, "--bus", broker.bus.address,
                                                  "--state-dir", broker.folder.appendingPathComponent("state-notes").path],
                                                 environment: broker.environment)
            defer { notes.stop() }
            #expect(try await eventually { try await broker.scenes(app: "org.ferry.notes").count == 1 })
            let open = ["scene", "open", "org.ferry.notes", "--activity", "org.ferry.notes.open-note", "--info", "noteID=groceries",
                        "--target-content", "groceries"]
            let opened = try await broker.ferry(open)
            #expect(opened.status == 0, "\(opened.summary)")
            let editor = try #require(opened.stdout.split(separator: " ").first.map(String.init))

            let urls = ["file:///tmp/list.ferrynote", "https://example.org/recipes?id=7"]
            let again = try await broker.ferry(open + ["--url", urls[0], "--url", urls[1]])
            #expect(again.stdout == "\(editor)  continued in an existing scene (Editor, foregroundActive)\n", "\(again.summary)")
            let line = "org.ferry.notes: open-urls \(editor) urls=\(urls.joined(separator: ","))"
            #expect(await eventually { notes.standardOutput.contains(line) }, "\(notes.standardOutput)")
            let output = notes.standardOutput
            let continued = try #require(output.range(of: "continue \(editor)"), "\(output)")
            let opening = try #require(output.range(of: line))
            #expect(continued.lowerBound < opening.lowerBound, "the activity comes first")
            #expect(try await broker.scenes(app: "org.ferry.notes").count == 2, "no new scene for the URLs")
        }
    }
}
