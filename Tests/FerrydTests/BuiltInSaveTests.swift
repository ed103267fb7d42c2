import DBus
import FerryBroker
import FerryModel
import FerryTestSupport
import Foundation
import Testing

/// org.ferry.activity.save-to-folder: each item as a file in a folder.
@Suite("ferryd built-in activities: save to folder")
struct BuiltInSaveTests {
    typealias F = FerrydFixture
    typealias B = BuiltInBroker

    /// A fresh folder.
    static func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("builtin-save-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
        return url
    }

    @Test("each item's first data representation is written as suggestedName.ext, promised bytes fetched; the paths are returned")
    func save() async throws {
        let broker = try await BuiltInBroker.start()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data("old".utf8).write(to: folder.appendingPathComponent("cat.png"))
        let photo = F.pattern(300_000, seed: 4)
        let source = try await broker.drag.app("org.ferry.gallery", manifest: "Gallery", serving: ["public.png": photo])
        let sharer = try await broker.fixture.connect()
        try await broker.createShare(writer: source, sharer: sharer)
        try await broker.write(source, [
            // The user activity comes first but is not data to save: the PNG is saved.
            F.item([try DragBus.activityRepresentation("org.ferry.gallery.view-photo"), F.promised("public.png", estimatedSize: 300_000),
                    F.representation("public.jpeg", [0xFF, 0xD8])], ["suggestedName": "cat"]),
            F.item([F.representation("public.utf8-plain-text", "a note"), F.representation("public.html", "<p>a note</p>")],
                   ["suggestedName": "../../escape.txt"]),
            F.item([F.representation("com.adobe.pdf", [0x25, 0x50, 0x44, 0x46])]),
            // UTF-8 text has no extension of its own: plain text's.
            F.item([F.representation("public.utf8-plain-text", "text")], ["suggestedName": "note"]),
            // A type nothing declares: no extension.
            F.item([F.representation("org.example.unknown", "?")], ["suggestedName": "blob"]),
        ])
        let completion = await broker.perform(.saveToFolder, options: ["to": .string(folder.path)], sharer: sharer)
        #expect(completion.completed, "\(completion)")
        #expect(completion.activityType == .saveToFolder)
        let paths = completion.returnedItems.compactMap { $0["path"] }
        #expect(paths.count == 5)
        #expect(paths.map { ($0 as NSString).lastPathComponent } == ["cat 2.png", "escape.txt", "Item.pdf", "note.txt", "blob"],
                "never over cat.png; the name cleaned and its own .txt kept; Item for no name")
        for path in paths { #expect((path as NSString).deletingLastPathComponent == folder.path) }
        #expect(try Data(contentsOf: folder.appendingPathComponent("cat.png")) == Data("old".utf8))
        #expect(firstDifference([UInt8](try Data(contentsOf: URL(fileURLWithPath: paths[0]))), photo) == nil)
        #expect(try String(contentsOfFile: paths[1], encoding: .utf8) == "a note")
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: paths[2]))) == [0x25, 0x50, 0x44, 0x46])
        #expect(completion.message == "Saved 5 files in \(folder.path)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).count == 6)
        await source.close()
        await sharer.close()
        await broker.stop()
    }

    @Test("a promise that cannot be fetched → not completed, Unavailable, and no file is left behind")
    func unavailable() async throws {
        let broker = try await BuiltInBroker.start()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = try await broker.drag.app("org.ferry.gallery", manifest: "Gallery", serving: [:])
        let sharer = try await broker.fixture.connect()
        try await broker.createShare(writer: source, sharer: sharer)
        try await broker.write(source, [
            F.item([F.representation("public.utf8-plain-text", "saved first?")]),
            F.item([F.promised("public.png")]),
        ])
        let completion = await broker.perform(.saveToFolder, options: ["to": .string(folder.path)], sharer: sharer)
        #expect(!completion.completed)
        #expect(completion.errorName == "org.ferry.Error.Unavailable")
        #expect(completion.error?.contains("item 1's public.png") == true, "\(completion.error ?? "")")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
        await source.close()
        await sharer.close()
        await broker.stop()
    }

    /// 129 MiB: more than the built-ins once read into ferryd's memory (128 MiB at most).
    static func largeMovie() -> [UInt8] {
        var movie = [UInt8](repeating: 0x5A, count: (129 << 20) + 3)
        for index in stride(from: 0, to: movie.count, by: 4093) { movie[index] = UInt8(truncatingIfNeeded: index >> 12) }
        return movie
    }

    @Test("a 129 MiB promise streams into its file")
    func largePromise() async throws {
        let broker = try await BuiltInBroker.start()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let movie = Self.largeMovie()
        let source = try await broker.drag.app("org.ferry.gallery", manifest: "Gallery", serving: ["public.mpeg-4": movie])
        let sharer = try await broker.fixture.connect()
        try await broker.createShare(writer: source, sharer: sharer)
        try await broker.write(source, [F.item([F.promised("public.mpeg-4")], ["suggestedName": "holiday"])])
        let completion = await broker.perform(.saveToFolder, options: ["to": .string(folder.path)], sharer: sharer)
        #expect(completion.completed, "\(completion)")
        #expect(completion.returnedItems.compactMap { $0["path"] } == [folder.appendingPathComponent("holiday.mp4").path])
        #expect(try firstDifference(Data(contentsOf: folder.appendingPathComponent("holiday.mp4")), movie) == nil)
        await source.close()
        await sharer.close()
        await broker.stop()
    }

    @Test("a source whose answered size is not what it wrote → Unavailable, and the files already written are removed")
    func miscountingSource() async throws {
        let broker = try await BuiltInBroker.start()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let photo = F.pattern(70_000)
        let source = try await broker.drag.app("org.ferry.gallery", manifest: "Gallery",
                                               serving: ["public.png": photo, "public.jpeg": photo],
                                               claiming: ["public.jpeg": 100_000])
        let sharer = try await broker.fixture.connect()
        try await broker.createShare(writer: source, sharer: sharer)
        try await broker.write(source, [F.item([F.promised("public.png")]), F.item([F.promised("public.jpeg")])])
        let completion = await broker.perform(.saveToFolder, options: ["to": .string(folder.path)], sharer: sharer)
        #expect(!completion.completed)
        #expect(completion.errorName == "org.ferry.Error.Unavailable")
        #expect(completion.error?.contains("item 1's public.jpeg cannot be fetched") == true, "\(completion.error ?? "")")
        #expect(completion.error?.contains("said it wrote 100000 bytes") == true, "\(completion.error ?? "")")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
        await source.close()
        await sharer.close()
        await broker.stop()
    }

    @Test("a promise that never ends, saved to a folder on a small file system → TooLarge when it is full, no file left",
          .enabled(if: getuid() == 0))
    func endlessPromiseFillsTheFolder() async throws {
        signal(SIGPIPE, SIG_IGN)
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let mount = try await ChildProcess.run("/bin/mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", folder.path],
                                               timeout: .seconds(20))
        try #require(mount.succeeded, "\(mount.stderr)")
        defer { _ = umount2(folder.path, 2 /* MNT_DETACH */) }
        let broker = try await BuiltInBroker.start()
        let written = Counter()
        let source = try await broker.endlessApp(written: written)
        let sharer = try await broker.fixture.connect()
        try await broker.createShare(writer: source, sharer: sharer)
        try await broker.write(source, [
            F.item([F.representation("public.utf8-plain-text", "saved first")]),
            F.item([F.promised("public.data")], ["suggestedName": "endless"]),
        ])
        let completion = await broker.perform(.saveToFolder, options: ["to": .string(folder.path)], sharer: sharer,
                                              promiseBudget: .seconds(60))
        #expect(!completion.completed)
        #expect(completion.errorName == "org.ferry.Error.TooLarge", "\(completion)")
        #expect(completion.error?.contains("endless") == true, "names the file: \(completion.error ?? "")")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty, "the partial files are removed")
        await source.close()
        await sharer.close()
        await broker.stop()
    }

    @Test("a folder that is a symbolic link is refused: InvalidArgument, nothing written through it")
    func symlinkFolder() async throws {
        let broker = try await BuiltInBroker.start()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent("real")
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: false)
        let link = folder.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        let sharer = try await broker.fixture.connect()
        try await broker.createShare(writer: sharer)
        try await broker.write(sharer, [F.item([F.representation("public.utf8-plain-text", "x")])])
        // With a trailing slash too: the kernel would follow the link despite O_NOFOLLOW.
        for to in [link.path, link.path + "/", link.path + "//"] {
            let completion = await broker.perform(.saveToFolder, options: ["to": .string(to)], sharer: sharer)
            #expect(!completion.completed && completion.errorName == "org.ferry.Error.InvalidArgument", "\(to)")
            #expect(completion.error?.contains("is a symbolic link") == true, "\(to): \(completion.error ?? "")")
            #expect(try FileManager.default.contentsOfDirectory(atPath: target.path).isEmpty, "\(to)")
        }
        await sharer.close()
        await broker.stop()
    }
}
