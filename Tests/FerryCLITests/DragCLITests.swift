import FerryTestSupport
import Foundation
import Testing

/// The demo apps (`ferry-demo Fixtures/Apps/NAME`) on a `CLIBroker`'s bus, for `ferry drag`.
enum DragDemo {
    /// Starts `ferry-demo Fixtures/Apps/NAME` on `broker`'s bus, its state in the broker's scratch folder.
    static func start(_ name: String, on broker: CLIBroker) async throws -> ServiceProcess {
        try await ServiceProcess(try BuiltProducts.executable("ferry-demo"),
                                 [TestPaths.fixtures.appendingPathComponent("Apps/\(name)").path, "--bus", broker.bus.address,
                                  "--state-dir", broker.folder.appendingPathComponent("state-\(name)").path],
                                 environment: broker.environment)
    }

    /// Notes and Gallery, each with its first scene connected.
    static func both(on broker: CLIBroker) async throws -> (notes: ServiceProcess, gallery: ServiceProcess) {
        let notes = try await start("Notes", on: broker)
        let gallery = try await start("Gallery", on: broker)
        #expect(try await eventually { try await broker.scenes().count == 2 })
        return (notes, gallery)
    }
}

extension CLIBroker {
    /// The persistent identifiers of `app`'s scenes, front to back.
    func sceneIDs(_ app: String) async throws -> [String] {
        try await scenes(app: app).compactMap { $0.string("persistentIdentifier") }
    }
}

@Suite("ferry drag against a real ferryd and the demo apps")
struct DragCLITests {
    @Test("a photo from Gallery into Notes, a note to the right edge opening an Editor, and the picture of that drag")
    func photoThenEdge() async throws {
        try await CLIBroker.with { broker in
            let (notes, gallery) = try await DragDemo.both(on: broker)
            defer { notes.stop(); gallery.stop() }
            let notesID = try #require(try await broker.sceneIDs("org.ferry.notes").first)
            let galleryID = try #require(try await broker.sceneIDs("org.ferry.gallery").first)

            let photo = try await broker.ferry("drag", "--from", "org.ferry.gallery", "--to", "org.ferry.notes")
            #expect(photo.status == 0, "\(photo.summary)")
            var lines = photo.stdout.split(separator: "\n").map(String.init)
            #expect(lines.count == 6, "begin, four moves, the drop: \(photo.stdout)")
            #expect(lines.first?.hasPrefix("drag 1: org.ferry.gallery/\(galleryID.prefix(8)) at ") == true, "\(photo.stdout)")
            #expect(lines.dropLast().last?.hasSuffix("  org.ferry.notes/\(notesID.prefix(8))  copy") == true, "\(photo.stdout)")
            #expect(lines.last?.hasPrefix("dropped: copy to org.ferry.notes/\(notesID.prefix(8)), read public.") == true, "\(photo.stdout)")
            #expect(photo.stderr.isEmpty)
            #expect(await eventually { notes.standardOutput.contains("drop-performed \(notesID)") })
            #expect(await eventually { gallery.standardOutput.contains("drag-ended \(galleryID) copy drag=1") })

            // The note goes to the right edge: no scene there, so Notes opens an Editor for it.
            let edge = try await broker.ferry("drag", "--from", "org.ferry.notes", "--edge", "right")
            #expect(edge.status == 0, "\(edge.summary)")
            lines = edge.stdout.split(separator: "\n").map(String.init)
            #expect(lines.dropLast().last?.hasPrefix("  1908,540  right edge  copy") == true, "\(edge.stdout)")
            let opened = try #require(try await broker.sceneIDs("org.ferry.notes").first { $0 != notesID })
            #expect(lines.last == "dropped: opened org.ferry.notes/\(opened.prefix(8)) at the right edge", "\(edge.stdout)")
            #expect(await eventually { notes.standardOutput.contains("connect \(opened) Editor note=") })
            let editor = try #require(try await broker.scenes(app: "org.ferry.notes").first)
            #expect(editor.string("persistentIdentifier") == opened && editor.frame == [960, 0, 960, 1080])

            // ferry desktop: the last drag in JSON, the text summary and the picture.
            let desktop = try await broker.json("desktop")
            let last = try #require(desktop["lastDrag"] as? [String: Any])
            #expect(last["id"] as? Int == 2 && last.string("operation") == "copy" && last.string("newSession") == opened)
            #expect(last.string("sourceApp") == "org.ferry.notes" && last.string("sourceSession") == notesID)
            let steps = try #require(last["steps"] as? [[String: Any]])
            #expect(steps.count == 6, "the begin, four moves and the drop: \(steps)")
            #expect(steps.last?.string("target") == "edge:right" && steps.last?.string("operation") == "copy")
            #expect((steps.last?["x"] as? NSNumber)?.doubleValue == 1908)
            let text = try await broker.ferry("desktop")
            #expect(text.stdout.hasSuffix("\nlast drag 2: opened org.ferry.notes/\(opened.prefix(8)) at the right edge "
                                          + "(from org.ferry.notes/\(notesID.prefix(8)), 6 steps)\n"), "\(text.stdout)")
            let svg = try await broker.ferry("desktop", "--svg", "-")
            #expect(svg.status == 0)
            #expect(svg.stdout.contains("<g class=\"drag\">") && svg.stdout.contains("<polyline points=\""))
            #expect(svg.stdout.contains(">drag 2: opened Notes/\(opened.prefix(8)) at the right edge</text>"), "\(svg.stdout.suffix(1500))")
            let png = broker.folder.appendingPathComponent("drag.png")
            #expect(try await broker.ferry("desktop", "--png", png.path).status == 0)
            #expect(try Data(contentsOf: png).starts(with: [0x89, 0x50, 0x4E, 0x47]))
        }
    }

    @Test("text onto Gallery is forbidden (status 1); an empty spot is cancel, as JSON lines; an app icon opens a scene at an edge")
    func refusalsAndIcon() async throws {
        try await CLIBroker.with { broker in
            let (notes, gallery) = try await DragDemo.both(on: broker)
            defer { notes.stop(); gallery.stop() }
            let galleryID = try #require(try await broker.sceneIDs("org.ferry.gallery").first)

            let forbidden = try await broker.ferry("drag", "--from", "org.ferry.notes", "--text", "milk", "--to", "org.ferry.gallery")
            #expect(forbidden.status == 1, "\(forbidden.summary)")
            #expect(forbidden.stdout.contains("  org.ferry.gallery/\(galleryID.prefix(8))  forbidden\n"), "\(forbidden.stdout)")
            #expect(forbidden.stdout.split(separator: "\n").last?.hasPrefix("dropped: forbidden") == true, "\(forbidden.stdout)")
            #expect(forbidden.stderr.isEmpty, "the outcome is the answer, not an error: \(forbidden.stderr)")

            let cancel = try await broker.ferry("drag", "--from", "org.ferry.notes", "--at", "1500,900", "--via", "1200,1000", "--json")
            #expect(cancel.status == 1, "\(cancel.summary)")
            let events = try cancel.stdout.split(separator: "\n").map {
                try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
            }
            #expect(events.map { $0.string("event") } == ["begin"] + Array(repeating: "move", count: 8) + ["drop"])
            #expect(events.allSatisfy { $0.string("drag") == "2" })
            #expect(events.dropFirst().first?["step"] as? Int == 1)
            let drop = try #require(events.last)
            #expect(drop.string("operation") == "cancel" && drop["target"] is NSNull && drop.string("reason") != nil, "\(drop)")
            let location = try #require(events.dropLast().last?["location"] as? [String: Any])
            #expect((location["x"] as? NSNumber)?.doubleValue == 1500 && (location["y"] as? NSNumber)?.doubleValue == 900)

            let icon = try await broker.ferry("drag", "--app", "org.ferry.gallery", "--edge", "left")
            #expect(icon.status == 0, "\(icon.summary)")
            #expect(icon.stdout.hasPrefix("drag 3: the icon of org.ferry.gallery at 960,540\n"), "\(icon.stdout)")
            let newGallery = try #require(try await broker.sceneIDs("org.ferry.gallery").first { $0 != galleryID })
            #expect(icon.stdout.hasSuffix("dropped: opened org.ferry.gallery/\(newGallery.prefix(8)) at the left edge\n"), "\(icon.stdout)")
            #expect(try await broker.scenes(app: "org.ferry.gallery").first?.frame == [0, 0, 960, 1080])
        }
    }

    @Test("a split view: a note dragged to the left edge over its own Notes scene opens an Editor there, no duplicate note")
    func edgeOverSplitView() async throws {
        try await CLIBroker.with { broker in
            let (notes, gallery) = try await DragDemo.both(on: broker)
            defer { notes.stop(); gallery.stop() }
            let notesID = try #require(try await broker.sceneIDs("org.ferry.notes").first)
            let split = try await broker.ferry("scene", "open", "org.ferry.gallery", "--placement", "right", "--requesting", notesID)
            #expect(split.status == 0, "\(split.summary)")
            #expect(try await broker.scenes(app: "org.ferry.notes").first?.frame == [0, 0, 960, 1080])

            let edge = try await broker.ferry("drag", "--from", "org.ferry.notes/\(notesID)", "--edge", "left")
            #expect(edge.status == 0, "\(edge.summary)")
            let lines = edge.stdout.split(separator: "\n").map(String.init)
            #expect(lines.dropLast().last?.hasPrefix("  12,540  left edge  copy") == true, "\(edge.stdout)")
            let opened = try #require(try await broker.sceneIDs("org.ferry.notes").first { $0 != notesID }, "\(edge.stdout)")
            #expect(lines.last == "dropped: opened org.ferry.notes/\(opened.prefix(8)) at the left edge", "\(edge.stdout)")
            #expect(await eventually { notes.standardOutput.contains("connect \(opened) Editor note=") })
            #expect(!notes.standardOutput.contains("drop-performed"), "the source scene took the note: \(notes.standardOutput)")
            let text = try await broker.ferry("desktop")
            #expect(text.stdout.contains("\nlast drag 1: opened org.ferry.notes/\(opened.prefix(8)) at the left edge "), "\(text.stdout)")
        }
    }

    @Test("--file: a PNG dropped at the edge opens in the app whose document types accept it; a 3 MB file is served by ferry")
    func files() async throws {
        try await CLIBroker.with { broker in
            let (notes, gallery) = try await DragDemo.both(on: broker)
            defer { notes.stop(); gallery.stop() }
            let png = TestPaths.fixtures.appendingPathComponent("Payloads/sample.png")
            let edge = try await broker.ferry("drag", "--from", "org.ferry.notes", "--file", png.path, "--edge", "right")
            #expect(edge.status == 0, "\(edge.summary)")
            #expect(try await broker.sceneIDs("org.ferry.gallery").count == 2)
            let opened = try #require(try await broker.sceneIDs("org.ferry.gallery").first)
            #expect(edge.stdout.hasSuffix("dropped: opened org.ferry.gallery/\(opened.prefix(8)) at the right edge\n"), "\(edge.stdout)")

            // Over 1 MiB: promised on the drag pasteboard, read by Notes from this ferry process.
            let notesID = try #require(try await broker.sceneIDs("org.ferry.notes").first)
            #expect(try await broker.ferry("scene", "activate", notesID).status == 0)
            var big = try payload("sample.png")
            big.append(noise(3_000_000, seed: 6))
            let file = try broker.file("big.png", big)
            let drop = try await broker.ferry("drag", "--from", "org.ferry.gallery", "--file", file.path, "--to", "org.ferry.notes")
            #expect(drop.status == 0, "\(drop.summary)")
            #expect(drop.stdout.contains("read public.png"), "\(drop.stdout)")
            #expect(await eventually { notes.standardOutput.contains("bytes=\(big.count)") }, "\(notes.standardOutput)")
            // ferry is gone and so is its registration as a command-line tool.
            #expect(try await eventually {
                (try await broker.json("apps")["apps"] as? [[String: Any]])?.allSatisfy { $0.string("appID")?.hasPrefix("org.ferry.cli.") != true } == true
            })
        }
    }

    @Test("--move between two Notes scenes moves the note; --restricted never enters another app's scene")
    func moveAndRestricted() async throws {
        try await CLIBroker.with { broker in
            let (notes, gallery) = try await DragDemo.both(on: broker)
            defer { notes.stop(); gallery.stop() }
            let first = try #require(try await broker.sceneIDs("org.ferry.notes").first)
            let opened = try await broker.ferry("scene", "open", "org.ferry.notes", "--placement", "right")
            #expect(opened.status == 0, "\(opened.summary)")
            let second = try #require(try await broker.sceneIDs("org.ferry.notes").first { $0 != first })
            // The new scene and the one beneath it (Gallery's) now cover the first one everywhere:
            // nothing can be dragged from it until it comes to the front.
            let hidden = try await broker.ferry("drag", "--from", "org.ferry.notes/\(first.prefix(8))", "--to", "org.ferry.notes")
            #expect(hidden.status == 4 && hidden.stderr.contains("covered by scenes in front of it"), "\(hidden.summary)")
            #expect(try await broker.ferry("scene", "activate", first).status == 0)

            let move = try await broker.ferry("drag", "--from", "org.ferry.notes/\(first.prefix(8))", "--to", "org.ferry.notes", "--move")
            #expect(move.status == 0, "\(move.summary)")
            #expect(move.stdout.contains("  org.ferry.notes/\(second.prefix(8))  move\n"), "\(move.stdout)")
            #expect(move.stdout.split(separator: "\n").last?.hasPrefix("dropped: move to org.ferry.notes/\(second.prefix(8))") == true,
                    "\(move.stdout)")
            #expect(await eventually { notes.standardOutput.contains("drag-ended \(first) move drag=1") }, "\(notes.standardOutput)")

            // Without --move the same drag is a copy.
            let copy = try await broker.ferry("drag", "--from", "org.ferry.notes/\(first.prefix(8))", "--to", "org.ferry.notes")
            #expect(copy.stdout.split(separator: "\n").last?.hasPrefix("dropped: copy to org.ferry.notes/") == true, "\(copy.stdout)")

            let restricted = try await broker.ferry("drag", "--from", "org.ferry.notes", "--to", "org.ferry.gallery", "--restricted")
            #expect(restricted.status == 1, "\(restricted.summary)")
            #expect(restricted.stdout.split(separator: "\n").last?.hasPrefix("dropped: cancel") == true, "\(restricted.stdout)")
            #expect(!gallery.standardOutput.contains("drag=3"), "Gallery never heard of the restricted drag: \(gallery.standardOutput)")
        }
    }

    @Test("unknown apps, sessions and screens are status 2 with one line on stderr; nothing is dragged")
    func notFound() async throws {
        try await CLIBroker.with { broker in
            let notes = try await DragDemo.start("Notes", on: broker)
            defer { notes.stop() }
            #expect(try await eventually { try await broker.scenes().count == 1 })
            let cases: [([String], String)] = [
                (["--from", "org.example.none", "--at", "1,1"], "ferry: no scene of 'org.example.none' (ferry scenes lists them)\n"),
                (["--from", "org.ferry.notes", "--to", "org.ferry.notes/ZZZZZZ"], "ferry: no scene session 'ZZZZZZ' (ferry scenes lists them)\n"),
                (["--from", "org.ferry.notes", "--edge", "left", "--screen", "3"], "ferry: no screen 3 (ferry desktop lists them)\n"),
            ]
            for (arguments, message) in cases {
                let result = try await broker.ferry(["drag"] + arguments)
                #expect(result.status == 2, "\(arguments): \(result.summary)")
                #expect(result.stderr == message, "\(arguments)")
                #expect(result.stdout.isEmpty)
            }
            let icon = try await broker.ferry("drag", "--app", "org.example.none", "--edge", "left")
            #expect(icon.status == 2, "\(icon.summary)")
            #expect(icon.stderr.hasPrefix("ferry: ") && icon.stderr.split(separator: "\n").count == 1, "\(icon.stderr)")
            let desktop = try await broker.json("desktop")
            #expect(desktop["lastDrag"] is NSNull, "no drag began: \(desktop)")
        }
    }
}
