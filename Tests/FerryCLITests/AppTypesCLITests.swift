import FerryTestSupport
import Foundation
import Testing

/// `ferry type` and `ferry copy` know the types registered apps declare while the broker runs,
/// and the system's types alone, without delay, when it does not.
@Suite("ferry type and copy with the types apps declare")
struct AppTypesCLITests {
    /// Starts `ferry-demo Fixtures/Apps/NAME` on `broker`'s bus and waits until it is registered.
    private func demo(_ name: String, appID: String, on broker: CLIBroker) async throws -> ServiceProcess {
        let app = try await ServiceProcess(try BuiltProducts.executable("ferry-demo"),
                                           [TestPaths.fixtures.appendingPathComponent("Apps/\(name)").path, "--bus", broker.bus.address,
                                            "--state-dir", broker.folder.appendingPathComponent("state-\(name)").path],
                                           environment: broker.environment)
        let registered = try await eventually { try await broker.ferry("apps").stdout.contains(appID) }
        try #require(registered, "\(appID) did not register")
        return app
    }

    @Test("with Notes registered, its note type conforms to plain text, is found by extension and MIME type, and labels copies")
    func notesTypes() async throws {
        try await CLIBroker.with { broker in
            let before = try await broker.ferry("type", "conforms", "org.ferry.notes.note", "public.plain-text")
            #expect(before.status == 2 && before.stderr == "ferry: unknown type identifier 'org.ferry.notes.note'\n", "\(before.summary)")

            let notes = try await demo("Notes", appID: "org.ferry.notes", on: broker)
            defer { notes.stop() }
            let conforms = try await broker.ferry("type", "conforms", "org.ferry.notes.note", "public.plain-text")
            #expect(conforms.status == 0, "\(conforms.summary)")
            #expect(conforms.stdout == "org.ferry.notes.note conforms to public.plain-text\n")
            #expect(conforms.stderr.isEmpty)
            let notImage = try await broker.ferry("type", "conforms", "org.ferry.notes.note", "image")
            #expect(notImage.status == 1, "\(notImage.summary)")

            let byExtension = try await broker.ferry("type", "info", "--extension", ".ferrynote")
            #expect(byExtension.status == 0, "\(byExtension.summary)")
            #expect(byExtension.stdout.contains("identifier:  org.ferry.notes.note\n"), "\(byExtension.stdout)")
            #expect(byExtension.stdout.contains("description: Ferry Note\n"))
            #expect(byExtension.stdout.contains("supertypes:  ") && byExtension.stdout.contains("public.plain-text"))
            let byMIME = try jsonObject(try await broker.ferry("type", "info", "--json", "--mime", "application/x-ferry-note"))
            #expect(byMIME["identifier"] as? String == "org.ferry.notes.note", "\(byMIME)")
            #expect(byMIME["declared"] as? Bool == true)

            // copy --rep and -t take the identifier and the MIME type; the item carries the app's type.
            let file = try broker.file("list.txt", Data("milk\n".utf8))
            let rep = try await broker.ferry("copy", "--rep", "org.ferry.notes.note=\(file.path)", "--rep", "text=\(file.path)")
            #expect(rep.status == 0, "\(rep.summary)")
            let types = try await broker.ferry("types")
            #expect(types.stdout.contains("org.ferry.notes.note"), "\(types.stdout)")
            let typed = try await broker.ferry("copy", "-t", "application/x-ferry-note", "--text", "eggs")
            #expect(typed.status == 0, "\(typed.summary)")
            let pasted = try await broker.ferry("paste", "-t", "org.ferry.notes.note")
            #expect(pasted.status == 0 && pasted.stdout == "eggs", "\(pasted.summary)")
        }
    }

    @Test("no broker: the system's types at once, no warning; a broker that hangs costs at most the bounded wait and one warning, and only for types the machine does not know")
    func withoutBroker() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let environment = bus.environment(adding: ["COLUMNS": "80", "LINES": "25"])
        func ferry(_ arguments: String...) async throws -> (ChildProcessResult, Duration) {
            let start = ContinuousClock.now
            let result = try await ChildProcess.run(try FerryCLI.binary().path, arguments, environment: environment, timeout: .seconds(30))
            return (result, ContinuousClock.now - start)
        }
        let (system, _) = try await ferry("type", "conforms", "public.png", "public.image")
        #expect(system.status == 0 && system.stderr.isEmpty, "\(system.summary)")
        let (unknown, elapsed) = try await ferry("type", "conforms", "org.ferry.notes.note", "public.plain-text")
        #expect(unknown.status == 2 && unknown.stderr == "ferry: unknown type identifier 'org.ferry.notes.note'\n", "\(unknown.summary)")
        #expect(elapsed < .seconds(3), "no broker must not make ferry type wait: \(elapsed)")

        // A broker that owns its name but does not answer (stopped): the wait is bounded.
        let stateDir = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-apptypes-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: stateDir) }
        let daemon = try await ServiceProcess.ferryd(on: bus, stateDir: stateDir)
        defer { daemon.stop() }
        kill(daemon.pid, SIGSTOP)
        defer { kill(daemon.pid, SIGCONT) }
        let (known, knownElapsed) = try await ferry("type", "conforms", "public.png", "public.image")
        #expect(known.status == 0 && known.stderr.isEmpty, "types the machine knows never ask the broker: \(known.summary)")
        #expect(knownElapsed < .seconds(3), "\(knownElapsed)")
        let (hung, hungElapsed) = try await ferry("type", "conforms", "org.ferry.notes.note", "public.plain-text")
        #expect(hung.status == 2, "\(hung.summary)")
        #expect(hung.stderr == "ferry: warning: the broker's app types are not used (the broker did not answer within 500 ms); using the system's types\n"
                + "ferry: unknown type identifier 'org.ferry.notes.note'\n", "\(hung.stderr)")
        #expect(hungElapsed < .seconds(5), "\(hungElapsed)")
    }
}
