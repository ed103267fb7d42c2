import FerryTestSupport
import Foundation
import Testing

@Suite("ferry scene and paste --into with the real ferry-demo apps")
struct SceneDemoCLITests {
    /// Starts `ferry-demo Fixtures/Apps/NAME` on `broker`'s bus, its state in the broker's scratch folder.
    private func demo(_ name: String, on broker: CLIBroker) async throws -> ServiceProcess {
        try await ServiceProcess(try BuiltProducts.executable("ferry-demo"),
                                 [TestPaths.fixtures.appendingPathComponent("Apps/\(name)").path, "--bus", broker.bus.address,
                                  "--state-dir", broker.folder.appendingPathComponent("state-\(name)").path],
                                 environment: broker.environment)
    }

    @Test("an activity opens Notes' Editor, the same target content continues it, pastes are accepted or declined by the scene")
    func demoApps() async throws {
        try await CLIBroker.with { broker in
            let notes = try await demo("Notes", on: broker)
            defer { notes.stop() }
            let gallery = try await demo("Gallery", on: broker)
            defer { gallery.stop() }
            #expect(try await eventually { try await broker.scenes().count == 2 })

            let open = ["scene", "open", "org.ferry.notes", "--activity", "org.ferry.notes.open-note", "--info", "noteID=groceries",
                        "--target-content", "groceries"]
            let opened = try await broker.ferry(open)
            #expect(opened.status == 0, "\(opened.summary)")
            let editor = try #require(opened.stdout.split(separator: " ").first.map(String.init))
            #expect(opened.stdout == "\(editor)  connected (Editor, foregroundActive)\n")
            #expect(try await eventually {
                try await broker.scenes(app: "org.ferry.notes").first?.string("title") == "Notes — groceries"
            })
            // The Editor prefers its note now: the same target content goes to it, no new scene.
            let again = try await broker.ferry(open)
            #expect(again.stdout == "\(editor)  continued in an existing scene (Editor, foregroundActive)\n", "\(again.summary)")
            #expect(try await broker.scenes(app: "org.ferry.notes").count == 2)

            #expect(try await broker.ferry("copy", "--text", "milk").succeeded)
            let accepted = try await broker.ferry("paste", "--into", "org.ferry.notes/\(editor.prefix(8))")
            #expect(accepted.status == 0, "\(accepted.summary)")
            #expect(accepted.stdout.hasPrefix("accepted: public.") && accepted.stdout.contains("groceries"), "\(accepted.stdout)")
            let declined = try await broker.ferry("paste", "--into", "org.ferry.gallery")
            #expect(declined.status == 1, "\(declined.summary)")
            #expect(declined.stderr.hasPrefix("ferry: declined: ") && declined.stderr.contains("public.image"), "\(declined.stderr)")

            let svg = try await broker.ferry("desktop", "--svg", "-")
            #expect(svg.status == 0)
            #expect(svg.stdout.contains("groceries") && svg.stdout.contains("Gallery"))
        }
    }
}
