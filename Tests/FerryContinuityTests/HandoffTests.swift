import FerryTestSupport
import Foundation
import Testing

/// Handoff end to end: a real nats-server, two private buses with a ferryd each, the real Notes
/// demo app on both, and the real `ferry` CLI.
@Suite("Continuity: Handoff over NATS", .serialized)
struct HandoffTests {
    /// A running `ferry-demo` of Notes on a device's bus.
    final class Notes: Sendable {
        let process: ServiceProcess

        init(on device: Device, engine: ContinuityEngine, folder: URL? = nil, _ extra: [String] = []) async throws {
            let app = folder ?? TestPaths.fixtures.appendingPathComponent("Apps/Notes")
            let state = engine.directory.appendingPathComponent("notes-\(device.name)-\(UUID().uuidString.prefix(6))")
            process = try await ServiceProcess(try BuiltProducts.executable("ferry-demo"),
                                               [app.path, "--bus", device.bus.address, "--json", "--state-dir", state.path] + extra,
                                               environment: device.bus.environment())
        }

        /// The JSON event lines printed so far.
        var events: [[String: String]] {
            process.standardOutput.split(separator: "\n").compactMap { line in
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
                return object.mapValues { "\($0)" }
            }
        }

        func count(_ name: String) -> Int { events.filter { $0["event"] == name }.count }

        func stop() {
            process.send(SIGKILL)
        }
    }

    /// Runs `body` with an engine and ALICE's laptop and desktop, Notes running on both; stops
    /// them all (by PID), also on failure.
    func withDevices(laptopArguments: [String] = [], laptopNotes: [String] = [], laptopFolder: URL? = nil,
                     _ body: (ContinuityEngine, Device, Device, Notes, Notes) async throws -> Void) async throws {
        let engine = try await ContinuityEngine()
        var devices: [Device] = []
        var apps: [Notes] = []
        func stopAll() async {
            for app in apps { app.stop() }
            for device in devices { device.stop() }
            await engine.stop()
        }
        do {
            let laptop = try await Device("laptop", engine: engine, extra: laptopArguments)
            devices.append(laptop)
            let desktop = try await Device("desktop", engine: engine)
            devices.append(desktop)
            let source = try await Notes(on: laptop, engine: engine, folder: laptopFolder, laptopNotes)
            apps.append(source)
            let target = try await Notes(on: desktop, engine: engine)
            apps.append(target)
            try await body(engine, laptop, desktop, source, target)
        } catch {
            await stopAll()
            throw error
        }
        await stopAll()
    }

    /// Opens the note `item` in Notes on `device` (a new Editor scene, in front).
    func openNote(_ item: String, on device: Device) async throws {
        let opened = try await device.ferry("scene", "open", "org.ferry.notes", "--activity", "org.ferry.notes.open-note",
                                            "--info", "noteID=\(item)", "--target-content", item)
        #expect(opened.succeeded, "ferry scene open: \(opened.stderr)")
    }

    /// What `ferry activities --json` lists on `device`.
    func activities(on device: Device) async throws -> [[String: Any]] {
        let listed = try await device.ferry("activities", "--json")
        guard listed.succeeded, let object = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any],
              let activities = object["activities"] as? [[String: Any]] else {
            throw EngineSetupError("ferry activities --json: \(listed.stdout) \(listed.stderr)")
        }
        return activities
    }

    /// The laptop's offer of the note `item`, once the desktop lists it.
    func offer(of item: String, on desktop: Device, within timeout: Duration = .seconds(10)) async throws -> [String: Any]? {
        var found: [String: Any]?
        _ = try await eventually(timeout) {
            found = try await activities(on: desktop).first { $0["targetContentIdentifier"] as? String == item }
            return found != nil
        }
        return found
    }

    @Test("an activity on the laptop appears on the desktop; continuing it there saves it on the laptop and opens it in Notes")
    func continueEndToEnd() async throws {
        try await withDevices { _, laptop, desktop, source, target in
            try await openNote("groceries", on: laptop)
            let offer = try #require(try await offer(of: "groceries", on: desktop), "the desktop never listed the laptop's note")
            #expect(offer["device"] as? String == "laptop")
            #expect(offer["app"] as? String == "org.ferry.notes")
            #expect(offer["activityType"] as? String == "org.ferry.notes.open-note")
            #expect((offer["apps"] as? [String])?.first == "org.ferry.notes")
            let name = try #require(offer["activity"] as? String)
            #expect(name.hasPrefix("laptop/"))
            // The table names it too.
            #expect(try await desktop.ferry("activities").stdout.contains(name))
            // The laptop does not offer its own activity to itself.
            #expect(try await activities(on: laptop).isEmpty)

            let connectsBefore = target.count("connect")
            let continued = try await desktop.ferry("continue", name)
            #expect(continued.succeeded, "ferry continue: \(continued.stderr)")
            let session = continued.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(!session.isEmpty)
            // The source app was asked for its activity when it was fetched (save-before-send).
            #expect(laptop.daemon?.standardError.contains("desktop continues \(name), saved by org.ferry.notes just now") == true,
                    "the laptop's Notes was not asked for its activity")
            // Notes on the desktop opened the note from the fetched userInfo, in its Editor.
            #expect(await eventually {
                target.events.contains { $0["event"] == "connect" && $0["session"] == session && $0["note"] == "groceries" }
            }, "no Editor scene with the note on the desktop: \(target.events.suffix(4))")
            #expect(target.count("connect") > connectsBefore)

            // Again: the Editor scene that prefers the note gets it (its activation conditions),
            // no new scene.
            let again = try await desktop.ferry("continue", name)
            #expect(again.succeeded, "ferry continue again: \(again.stderr)")
            #expect(again.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == session)
            #expect(await eventually {
                target.events.contains { $0["event"] == "continue" && $0["session"] == session && $0["note"] == "groceries" }
            }, "the Editor scene did not continue the activity: \(target.events.suffix(4))")
        }
    }

    @Test("an activity not eligible for handoff, or of an app marked local, never appears on the other device")
    func ineligibleNeverAppears() async throws {
        try await withDevices(laptopNotes: ["--no-handoff"]) { _, laptop, desktop, _, _ in
            try await openNote("meeting", on: laptop)
            #expect(try await !eventually(.seconds(3)) { try await !activities(on: desktop).isEmpty },
                    "an activity not eligible for handoff reached the desktop")
            #expect(try await desktop.ferry("activities").stdout.isEmpty)
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-local-notes-\(getpid())-\(UUID().uuidString.prefix(6))")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.copyItem(at: TestPaths.fixtures.appendingPathComponent("Apps/Notes"), to: folder)
        let manifest = folder.appendingPathComponent("Info.plist")
        let text = try String(contentsOf: manifest, encoding: .utf8)
        try text.replacingOccurrences(of: "<key>CFBundleName</key>", with: "<key>FerryHandoffLocal</key>\n\t<true/>\n\t<key>CFBundleName</key>")
            .write(to: manifest, atomically: true, encoding: .utf8)
        try await withDevices(laptopFolder: folder) { _, laptop, desktop, _, _ in
            try await openNote("meeting", on: laptop)
            #expect(try await !eventually(.seconds(3)) { try await !activities(on: desktop).isEmpty },
                    "an activity of an app marked FerryHandoffLocal reached the desktop")
        }
    }

    @Test("an advertisement expires: a source that stops renewing it (frozen) disappears from the other device")
    func expiredDisappears() async throws {
        try await withDevices(laptopArguments: ["--handoff-lifetime", "3"]) { _, laptop, desktop, _, _ in
            try await openNote("groceries", on: laptop)
            #expect(try await offer(of: "groceries", on: desktop) != nil)
            // Still there after a renewal (the laptop renews it every 1.5 s).
            try await Task.sleep(for: .seconds(3.5))
            #expect(try await offer(of: "groceries", on: desktop, within: .zero) != nil, "a renewed advertisement went away")
            laptop.daemon?.send(SIGSTOP)
            defer { laptop.daemon?.send(SIGCONT) }
            let frozen = ContinuousClock.now
            #expect(try await eventually(.seconds(6)) { try await activities(on: desktop).isEmpty },
                    "the expired activity stayed on the desktop")
            #expect(ContinuousClock.now - frozen < .seconds(4.5))
        }
    }

    @Test("the source device gone: continue fails at once with a named error, and nothing opens")
    func sourceGone() async throws {
        try await withDevices { _, laptop, desktop, _, target in
            try await openNote("groceries", on: laptop)
            let offer = try #require(try await offer(of: "groceries", on: desktop))
            let name = try #require(offer["activity"] as? String)
            laptop.daemon?.send(SIGKILL)
            _ = await laptop.daemon?.waitForExit(timeout: .seconds(5))
            let connects = target.count("connect")
            let started = ContinuousClock.now
            let continued = try await desktop.ferry("continue", name)
            #expect(continued.status == 4, "exit status \(continued.status): \(continued.stderr)")
            #expect(continued.stderr.contains("laptop") && continued.stderr.contains("gone"), "\(continued.stderr)")
            #expect(ContinuousClock.now - started < .seconds(3))
            #expect(target.count("connect") == connects, "a scene opened without its activity")
            // An activity nobody offers is not found.
            let unknown = try await desktop.ferry("continue", "laptop/00000000")
            #expect(unknown.status == 2, "\(unknown.stderr)")
        }
    }

    @Test("a scene marked local keeps its activities on this machine, while the app's other scenes still offer theirs")
    func localSceneNeverAppears() async throws {
        try await withDevices(laptopNotes: ["--handoff-local", "diary"]) { _, laptop, desktop, _, _ in
            try await openNote("diary", on: laptop)
            #expect(try await !eventually(.seconds(3)) { try await !activities(on: desktop).isEmpty },
                    "the activity of a scene marked local reached the desktop")
            // The same app's other scene is offered (the control: the offers do flow)...
            try await openNote("groceries", on: laptop)
            #expect(try await offer(of: "groceries", on: desktop) != nil, "the app's scene not marked local was not offered")
            // ...and back in the local scene, nothing is: the offer is withdrawn, not replaced by the diary.
            try await openNote("diary", on: laptop)
            #expect(try await eventually(.seconds(5)) { try await activities(on: desktop).isEmpty },
                    "the offer stayed while the user is in the scene marked local")
            await provingNothingHappens(for: .milliseconds(1500))
            #expect(try await activities(on: desktop).isEmpty)
        }
    }
}
