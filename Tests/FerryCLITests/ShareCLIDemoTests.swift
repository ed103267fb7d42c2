import FerryTestSupport
import Foundation
import Testing

/// A demo app (`ferry-demo Fixtures/Apps/NAME`) on a `CLIBroker`'s bus, with extra options.
private func startDemo(_ name: String, on broker: CLIBroker, _ extra: [String] = []) async throws -> ServiceProcess {
    let app = try await ServiceProcess(try BuiltProducts.executable("ferry-demo"),
                                       [TestPaths.fixtures.appendingPathComponent("Apps/\(name)").path, "--bus", broker.bus.address,
                                        "--state-dir", broker.folder.appendingPathComponent("state-\(name)").path] + extra,
                                       environment: broker.environment)
    #expect(try await eventually { try await broker.sceneIDs("org.ferry.\(name.lowercased())").count == 1 })
    return app
}

@Suite("ferry share with the demo apps: their activities, a scene's items, an activity app that goes away")
struct ShareCLIDemoTests {
    @Test("Gallery's add-to-album is listed after the built-ins for a PNG file and performs in Gallery; --from Gallery lists its own first")
    func galleryActivity() async throws {
        try await CLIBroker.with { broker in
            let gallery = try await startDemo("Gallery", on: broker)
            defer { gallery.stop() }
            let png = try broker.file("holiday.png", try payload("sample.png"))
            #expect(try await eventually {
                try await broker.ferry("share", png.path, "--list").stdout.contains("org.ferry.gallery.add-to-album")
            }, "Gallery registers its activities after it registers")
            let list = try await broker.ferry("share", png.path, "--list")
            #expect(list.stdout.split(separator: "\n") == [
                "org.ferry.activity.copy\tCopy\taction\t(built-in)",
                "org.ferry.activity.save-to-folder\tSave to Folder\taction\t(built-in)",
                "org.ferry.gallery.add-to-album\tAdd to Album\taction\torg.ferry.gallery",
            ], "\(list.stdout)")
            let text = try await broker.ferry("share", "--text", "milk", "--list")
            #expect(!text.stdout.contains("add-to-album"), "text is not an image: \(text.stdout)")

            let added = try await broker.ferry("share", png.path, "--activity", "org.ferry.gallery.add-to-album")
            #expect(added.status == 0, "\(added.summary)")
            let lines = added.stdout.split(separator: "\n").map(String.init)
            #expect(lines.count == 2 && lines.last?.hasPrefix("album=Shared\tphoto=") == true, "\(added.stdout)")
            #expect(await eventually { gallery.standardOutput.contains("activity-performed") }, "\(gallery.standardOutput)")

            // A Viewer of lake.png: its photo is what a share of the scene offers — Gallery's own
            // activity first, then the built-ins (the photo carries a user activity: open-in-new-scene too).
            let opened = try await broker.ferry("scene", "open", "org.ferry.gallery", "--activity", "org.ferry.gallery.view-photo",
                                                "--info", "photoID=lake.png")
            #expect(opened.status == 0, "\(opened.summary)")
            let viewer = try #require(opened.stdout.split(separator: " ").first.map(String.init))
            var scene = try await broker.ferry("share", "--from", "org.ferry.gallery/\(viewer)", "--list")
            #expect(try await eventually {
                scene = try await broker.ferry("share", "--from", "org.ferry.gallery/\(viewer)", "--list")
                return scene.status == 0
            }, "\(scene.summary)")
            let types = scene.stdout.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") }
            #expect(types == ["org.ferry.gallery.add-to-album", "org.ferry.activity.copy", "org.ferry.activity.save-to-folder",
                              "org.ferry.activity.open-in-new-scene"], "\(scene.stdout)")
            let excluded = try await broker.ferry("share", "--from", "org.ferry.gallery", "--list", "--exclude", "org.ferry.gallery.add-to-album",
                                                  "--exclude", "open-in-new-scene")
            #expect(excluded.stdout.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") }
                    == ["org.ferry.activity.copy", "org.ferry.activity.save-to-folder"], "the front-most scene: \(excluded.summary)")
            let out = broker.folder.appendingPathComponent("out")
            try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
            let saved = try await broker.ferry("share", "--from", "org.ferry.gallery/\(viewer.prefix(6))", "--activity", "save-to-folder",
                                               "--to", out.path)
            #expect(saved.status == 0, "\(saved.summary)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: out.path) == ["lake.png"])
            #expect(try Data(contentsOf: out.appendingPathComponent("lake.png"))
                    == Data(contentsOf: TestPaths.fixtures.appendingPathComponent("Apps/Gallery/Content/lake.png")))
            #expect(saved.stdout.hasSuffix("\npath=\(out.path)/lake.png\n"), "\(saved.stdout)")
        }
    }

    @Test("the activity's app goes away while it performs: ferry prints the failed completion and exits 4 at once")
    func activityAppGoesAway() async throws {
        try await CLIBroker.with { broker in
            let gallery = try await startDemo("Gallery", on: broker, ["--perform-delay", "60"])
            defer { gallery.stop() }
            let png = try broker.file("holiday.png", try payload("sample.png"))
            #expect(try await eventually {
                try await broker.ferry("share", png.path, "--list").stdout.contains("org.ferry.gallery.add-to-album")
            })
            let share = try broker.start(["share", png.path, "--activity", "org.ferry.gallery.add-to-album"])
            defer { share.kill() }
            #expect(await eventually(.seconds(15)) { gallery.standardOutput.contains("activity-began") }, "\(gallery.standardOutput)")
            let killed = ContinuousClock.now
            gallery.send(SIGKILL)
            let status = await share.waitForExit(timeout: .seconds(10))
            #expect(status == 4, "exit status \(String(describing: status))")
            #expect(ContinuousClock.now - killed < .seconds(5), "not after the activity's 30 s")
            let output = String(decoding: readAll(share.standardOutput), as: UTF8.self)
            #expect(output.hasPrefix("not completed: ") && output.contains("org.ferry.gallery")
                    && output.hasSuffix("(org.ferry.Error.Unavailable)\n"), "\(output)")
        }
    }
}

/// Everything left to read on `fd` (a finished child's pipe).
private func readAll(_ fd: Int32) -> [UInt8] {
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n <= 0 { return bytes }
        bytes += buffer[..<n]
    }
}
