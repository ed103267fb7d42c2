import FerryTestSupport
import Foundation
import Testing

@Suite("ferry desktop, scene open and paste --into with an external display")
struct ExternalDisplayCLITests {
    /// Notes' manifest with a "Presenter" configuration for the external-display role, in `folder`.
    static func presenterManifest(in folder: URL) throws -> URL {
        let text = try String(contentsOf: SceneApp.notes, encoding: .utf8)
        let anchor = "<key>UISceneConfigurations</key>\n\t\t<dict>\n"
        let edited = text.replacingOccurrences(of: anchor, with: anchor + """
            \t\t\t<key>UIWindowSceneSessionRoleExternalDisplayNonInteractive</key>
            \t\t\t<array><dict><key>UISceneConfigurationName</key><string>Presenter</string></dict></array>

            """)
        try #require(edited != text, "the Notes fixture changed shape")
        let url = folder.appendingPathComponent("presenter-Info.plist")
        try edited.write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    @Test("an external-display scene is drawn on its own screen, marked non-interactive, and refuses pastes by name")
    func externalDisplay() async throws {
        try await CLIBroker.with(ferrydArguments: ["--external-display", "1280x720"]) { broker in
            let notes = try await SceneApp.start(broker, manifest: try Self.presenterManifest(in: broker.folder))
            defer { notes.stop() }
            #expect(try await eventually { try await broker.scenes().count == 1 })
            let opened = try await broker.ferry("scene", "open", "org.ferry.notes", "--role", "external-display")
            #expect(opened.status == 0, "\(opened.summary)")
            let id = try #require(opened.stdout.split(separator: " ").first.map(String.init))

            let text = try await broker.ferry("desktop")
            #expect(text.status == 0, "\(text.summary)")
            let paragraphs = text.stdout.components(separatedBy: "\n\n")
            let external = try #require(paragraphs.first { $0.hasPrefix("screen 1") }, "\(text.stdout)")
            let lines = external.split(separator: "\n").map(String.init)
            #expect(lines.first == "screen 1 (external display, non-interactive): 1920,0 1280x720, no edge zones", "\(text.stdout)")
            #expect(lines.dropFirst().first?.split(separator: " ").map(String.init).suffix(3)
                    == ["1920,0", "1280x720", String(id.prefix(8))], "\(text.stdout)")

            let json = try await broker.json("desktop")
            let screens = try #require(json["screens"] as? [[String: Any]])
            #expect(screens.map { $0["external"] as? Bool } == [false, true])
            #expect(screens.last?.frame == [1920, 0, 1280, 720])

            let svg = try await broker.ferry("desktop", "--svg", "-")
            #expect(svg.stdout.contains("Screen 1 · external display · 1280×720"), "\(svg.stdout.prefix(400))")

            #expect(try await broker.ferry("copy", "--text", "milk").succeeded)
            let paste = try await broker.ferry("paste", "--into", "org.ferry.notes/\(id.prefix(8))")
            #expect(paste.status == 1, "\(paste.summary)")
            #expect(paste.stderr.contains("external display, which takes no pastes"), "\(paste.stderr)")
        }
    }
}
