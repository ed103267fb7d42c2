import FerryTestSupport
import Foundation
import Testing

@Suite("ferry desktop against a real ferryd and a scene app")
struct DesktopCLITests {
    @Test("the summary shows each screen, its edge zones and its scenes front to back; JSON has the same")
    func summary() async throws {
        try await CLIBroker.with { broker in
            let notes = try await SceneApp.start(broker, manifest: SceneApp.notes)
            defer { notes.stop() }
            #expect(try await eventually { try await broker.scenes().count == 1 })
            let right = try await broker.ferry("scene", "open", "org.ferry.notes", "--placement", "right")
            #expect(right.status == 0, "\(right.summary)")
            let scenes = try await broker.scenes()
            let ids = scenes.compactMap { $0.string("persistentIdentifier") }
            #expect(ids.count == 2)

            let text = try await broker.ferry("desktop")
            #expect(text.status == 0, "\(text.summary)")
            let lines = text.stdout.split(separator: "\n").map(String.init)
            #expect(lines.first == "screen 0: 0,0 1920x1080, edge zones 24 px")
            #expect(lines.count == 3)
            #expect(lines.dropFirst().first?.split(separator: " ").map(String.init)
                    == ["org.ferry.notes", "-", "Default", "foregroundActive", "960,0", "960x1080", String(ids[0].prefix(8))])
            #expect(lines.last?.split(separator: " ").map(String.init)
                    == ["org.ferry.notes", "-", "Default", "foregroundInactive", "0,0", "960x1080", String(ids[1].prefix(8))])

            let json = try await broker.json("desktop")
            #expect((json["edgeZone"] as? NSNumber)?.doubleValue == 24)
            let screen = try #require((json["screens"] as? [[String: Any]])?.first)
            #expect(screen["index"] as? Int == 0 && screen.frame == [0, 0, 1920, 1080])
            let listed = try #require(screen["scenes"] as? [[String: Any]])
            #expect(listed.compactMap { $0.string("persistentIdentifier") } == ids)
            #expect(listed.map(\.frame) == [[960, 0, 960, 1080], [0, 0, 960, 1080]])
            #expect(listed.map { $0["stackIndex"] as? Int } == [0, 1])
        }
    }

    @Test("--svg and --png draw the desktop into files (or standard output with -)")
    func pictures() async throws {
        try await CLIBroker.with { broker in
            let notes = try await SceneApp.start(broker, manifest: SceneApp.notes)
            defer { notes.stop() }
            #expect(try await eventually { try await broker.scenes().count == 1 })
            let svg = broker.folder.appendingPathComponent("desktop.svg"), png = broker.folder.appendingPathComponent("desktop.png")
            let drawn = try await broker.ferry("desktop", "--svg", svg.path, "--png", png.path)
            #expect(drawn.status == 0, "\(drawn.summary)")
            #expect(drawn.stdout.isEmpty)
            let svgText = try String(contentsOf: svg, encoding: .utf8)
            #expect(svgText.contains("<svg") && svgText.contains("width=\"1920\"") && svgText.contains("height=\"1080\""))
            #expect(svgText.contains("Notes") && svgText.contains("Default") && svgText.contains("foregroundActive"))
            let pngBytes = [UInt8](try Data(contentsOf: png))
            #expect(pngBytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
            // IHDR: half scale, 960×540.
            #expect(pngBytes.count > 24 && Array(pngBytes[16..<24]) == [0, 0, 0x03, 0xC0, 0, 0, 0x02, 0x1C])

            let toStdout = try await broker.ferry("desktop", "--svg", "-")
            #expect(toStdout.status == 0)
            #expect(toStdout.stdout == svgText)

            let nowhere = broker.folder.appendingPathComponent("no/such/folder.svg")
            let failed = try await broker.ferry("desktop", "--svg", nowhere.path)
            #expect(failed.status == 1, "\(failed.summary)")
            #expect(failed.stderr.contains("No such file or directory"), "\(failed.stderr)")
            #expect(try await broker.ferry("desktop", "--png", "").status == 64)
        }
    }

    @Test("a broker with two screens and another edge zone shows both")
    func screens() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-cli-desktop-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: state) }
        let daemon = try await ServiceProcess.ferryd(on: bus, stateDir: state,
                                                     ["--screen", "1280x800", "--screen", "1920x1080", "--edge-zone", "16"])
        defer { daemon.stop() }
        let result = try await ChildProcess.run(try FerryCLI.binary().path, ["desktop"], environment: bus.environment())
        #expect(result.status == 0, "\(result.summary)")
        #expect(result.stdout == """
            screen 0: 0,0 1280x800, edge zones 16 px
              (no scenes)

            screen 1: 1280,0 1920x1080, edge zones 16 px
              (no scenes)

            """)
    }
}
