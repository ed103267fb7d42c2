import FerryTestSupport
import Foundation
import Testing

@Suite("ferry share against a real ferryd")
struct ShareCLITests {
    private static let copyLine = "org.ferry.activity.copy\tCopy\taction\t(built-in)\n"
    private static let saveLine = "org.ferry.activity.save-to-folder\tSave to Folder\taction\t(built-in)\n"

    @Test("a PNG file lists copy and save-to-folder, not open-in-new-scene; --exclude drops one; --json; text from standard input")
    func list() async throws {
        try await CLIBroker.with { broker in
            let png = try broker.file("holiday.png", try payload("sample.png"))
            let list = try await broker.ferry("share", png.path, "--list")
            #expect(list.status == 0, "\(list.summary)")
            #expect(list.stdout == Self.copyLine + Self.saveLine, "\(list.stdout)")
            #expect(list.stderr.isEmpty, "\(list.stderr)")

            let excluded = try await broker.ferry("share", png.path, "--list", "--exclude", "copy")
            #expect(excluded.status == 0 && excluded.stdout == Self.saveLine, "\(excluded.summary) \(excluded.stdout)")

            let json = try await broker.json("share", png.path, "--list")
            let activities = try #require(json["activities"] as? [[String: Any]])
            #expect(activities.map { $0.string("activityType") } == ["org.ferry.activity.copy", "org.ferry.activity.save-to-folder"])
            #expect(activities.allSatisfy { $0["builtIn"] as? Bool == true && $0["app"] is NSNull && $0.string("category") == "action" })
            #expect(Int(json.string("share") ?? "") ?? 0 > 0, "\(json)")

            let text = try await broker.ferry("share", "--list", stdin: Data("milk\n".utf8))
            #expect(text.status == 0 && text.stdout.hasPrefix(Self.copyLine), "\(text.summary) \(text.stdout)")
            #expect(!text.stdout.contains("open-in-new-scene"))
        }
    }

    @Test("save-to-folder writes the file and prints its path; twice gives 'name 2.png'; a relative --to is made absolute")
    func saveToFolder() async throws {
        try await CLIBroker.with { broker in
            let bytes = try payload("sample.png")
            let png = try broker.file("holiday.png", bytes)
            let out = broker.folder.appendingPathComponent("out")
            try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)

            let first = try await broker.ferry("share", png.path, "--activity", "save-to-folder", "--to", out.path)
            #expect(first.status == 0, "\(first.summary)")
            var lines = first.stdout.split(separator: "\n").map(String.init)
            #expect(lines.count == 2 && lines.last == "path=\(out.path)/holiday.png", "\(first.stdout)")
            #expect(try firstDifference(Data(contentsOf: out.appendingPathComponent("holiday.png")), bytes) == nil)

            let second = try await broker.ferry("share", png.path, "--activity", "save-to-folder", "--to", out.path)
            #expect(second.status == 0, "\(second.summary)")
            #expect(second.stdout.hasSuffix("\npath=\(out.path)/holiday 2.png\n"), "\(second.stdout)")
            #expect(try firstDifference(Data(contentsOf: out.appendingPathComponent("holiday 2.png")), bytes) == nil)
            #expect(try firstDifference(Data(contentsOf: out.appendingPathComponent("holiday.png")), bytes) == nil,
                    "never overwritten")

            // The same folder named from this process's current directory (ferry inherits it).
            let cwd = FileManager.default.currentDirectoryPath
            let relative = String(repeating: "../", count: cwd.split(separator: "/").count) + String(out.path.dropFirst())
            let third = try await broker.ferry("share", png.path, "--activity", "save-to-folder", "--to", relative, "--json")
            #expect(third.status == 0, "\(third.summary)")
            let completion = try jsonObject(third)
            #expect(completion["completed"] as? Bool == true && completion.string("activityType") == "org.ferry.activity.save-to-folder")
            let returned = try #require(completion["returnedItems"] as? [[String: Any]])
            let resolved = out.resolvingSymlinksInPath().path
            #expect(returned.map { $0.string("path") } == ["\(resolved)/holiday 3.png"], "\(third.stdout)")
            #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("holiday 3.png").path))
            lines = try FileManager.default.contentsOfDirectory(atPath: out.path).sorted()
            #expect(lines == ["holiday 2.png", "holiday 3.png", "holiday.png"])
        }
    }

    @Test("copy puts the items on the general pasteboard: ferry paste gets them back")
    func copyThenPaste() async throws {
        try await CLIBroker.with { broker in
            let bytes = try payload("sample.png")
            let png = try broker.file("holiday.png", bytes)
            let copy = try await broker.ferry("share", png.path, "--activity", "copy")
            #expect(copy.status == 0, "\(copy.summary)")
            #expect(copy.stdout.split(separator: "\n").count == 1 && !copy.stdout.hasPrefix("not completed"), "\(copy.stdout)")
            let paste = try await broker.ferry("paste", "--type", "public.png")
            #expect(paste.status == 0 && firstDifference(paste.standardOutput, bytes) == nil, "\(paste.summary)")

            let text = try await broker.ferry("share", "--text", "milk and eggs", "--activity", "org.ferry.activity.copy", "--json")
            #expect(text.status == 0, "\(text.summary)")
            #expect(try jsonObject(text)["completed"] as? Bool == true)
            #expect(try await broker.ferry("paste").stdout == "milk and eggs")
        }
    }

    @Test("a 17 MB file (over the share's 16 MiB held) is promised and served by ferry while the activity reads it")
    func largeFile() async throws {
        try await CLIBroker.with { broker in
            var big = try payload("sample.png")
            big.append(noise(17_000_000, seed: 9))
            let png = try broker.file("big.png", big)
            let out = broker.folder.appendingPathComponent("out")
            try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
            let saved = try await broker.ferry("share", png.path, "--activity", "save-to-folder", "--to", out.path)
            #expect(saved.status == 0, "\(saved.summary)")
            #expect(try firstDifference(Data(contentsOf: out.appendingPathComponent("big.png")), big) == nil)
            let copy = try await broker.ferry("share", png.path, "--activity", "copy")
            #expect(copy.status == 0, "\(copy.summary)")
            // ferry is gone: the general pasteboard holds the bytes itself.
            let paste = try await broker.ferry("paste", "--type", "public.png")
            #expect(paste.status == 0 && firstDifference(paste.standardOutput, big) == nil, "\(paste.summary)")
        }
    }

    @Test("an activity that is unknown or cannot perform with the items is status 2; nothing is written")
    func unknownActivity() async throws {
        try await CLIBroker.with { broker in
            let png = try broker.file("holiday.png", try payload("sample.png"))
            let unknown = try await broker.ferry("share", png.path, "--activity", "org.example.nothing")
            #expect(unknown.status == 2, "\(unknown.summary)")
            #expect(unknown.stdout.isEmpty)
            #expect(unknown.stderr.hasPrefix("ferry: ") && unknown.stderr.contains("org.example.nothing")
                    && unknown.stderr.contains("--list"), "\(unknown.stderr)")
            #expect(unknown.stderr.split(separator: "\n").count == 1)

            let notListed = try await broker.ferry("share", png.path, "--activity", "open-in-new-scene")
            #expect(notListed.status == 2, "a PNG has no user activity to open: \(notListed.summary)")

            let noScene = try await broker.ferry("share", "--from", "org.example.none", "--list")
            #expect(noScene.status == 2 && noScene.stderr.contains("no scene of 'org.example.none'"), "\(noScene.summary)")
        }
    }

    @Test("a folder save-to-folder cannot write into is status 1 (not 4: no app went away), with the IO error")
    func unwritableFolder() async throws {
        try await CLIBroker.with { broker in
            // /proc is a folder nobody, root included, may create files in.
            let failed = try await broker.ferry("share", "--text", "hi", "--activity", "save-to-folder", "--to", "/proc")
            #expect(failed.status == 1, "\(failed.summary)")
            #expect(failed.stdout.contains("not completed: cannot create") && failed.stdout.contains("(org.ferry.Error.IO)"),
                    "\(failed.summary)")
        }
    }

    @Test("bad arguments are status 64 with a clear message: --to without save-to-folder, a --to that is a file or a link")
    func badArguments() async throws {
        try await CLIBroker.with { broker in
            let png = try broker.file("holiday.png", try payload("sample.png"))
            let out = broker.folder.appendingPathComponent("out")
            try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)

            let copyTo = try await broker.ferry("share", png.path, "--activity", "copy", "--to", out.path)
            #expect(copyTo.status == 64 && copyTo.stderr.contains("--to applies only to --activity save-to-folder"), "\(copyTo.summary)")
            let toFile = try await broker.ferry("share", png.path, "--activity", "save-to-folder", "--to", png.path)
            #expect(toFile.status == 64 && toFile.stderr == "ferry: --to: '\(png.path)' is not a folder\n", "\(toFile.summary)")

            // A link to a folder passes ferry's own check; the broker refuses it (no link is followed).
            let link = broker.folder.appendingPathComponent("link")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: out)
            let linked = try await broker.ferry("share", png.path, "--activity", "save-to-folder", "--to", link.path)
            #expect(linked.status == 64, "\(linked.summary)")
            #expect(linked.stderr.hasPrefix("ferry: ") && linked.stderr.split(separator: "\n").count == 1, "\(linked.stderr)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).isEmpty, "nothing written through the link")
        }
    }
}
