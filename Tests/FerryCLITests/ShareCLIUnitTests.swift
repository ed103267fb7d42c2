@testable import ferry
import FerryTerminal
import ArgumentParser
import Ferry
import FerryModel
import FerryTestSupport
import Foundation
import Testing

@Suite("ferry share internals: arguments, activity names, --to, items, the lines it prints")
struct ShareCLIUnitTests {
    private let noBus = ["--bus", "unix:path=/nonexistent/ferry-test"]

    @Test("bad combinations and malformed values are usage errors (64) naming the problem, before any bus")
    func usageErrors() throws {
        let cases: [([String], String)] = [
            (["share", "a.png"], "Give --list, or --activity TYPE to perform one."),
            (["share", "a.png", "--list", "--activity", "copy"], "--list and --activity cannot be combined"),
            (["share", "--from", "org.ferry.notes", "a.png", "--list"], "FILE cannot be combined with --from"),
            (["share", "--from", "org.ferry.notes", "--text", "x", "--list"], "--text cannot be combined with --from"),
            (["share", "--from", "org.ferry.notes", "--type", "public.png", "--list"], "--type cannot be combined with --from"),
            (["share", "--from", "", "--list"], "The value '' is invalid for '--from <app[/session]>'"),
            (["share", "--from", "org.ferry.notes/", "--list"], "The value 'org.ferry.notes/' is invalid for '--from <app[/session]>'"),
            (["share", "a.png", "--text", "x", "--list"], "--text cannot be combined with files."),
            (["share", "-", "-", "--list"], "Standard input ('-') can be shared only once."),
            (["share", "", "--list"], "A FILE cannot be an empty path."),
            (["share", "--text", "x", "--type", "", "--list"], "--type needs a type."),
            (["share", "--text", "x", "--activity", "save-to-folder"], "--activity save-to-folder needs --to DIR"),
            (["share", "--text", "x", "--activity", "org.ferry.activity.save-to-folder"], "needs --to DIR"),
            (["share", "--text", "x", "--activity", "copy", "--to", "/tmp"], "--to applies only to --activity save-to-folder."),
            (["share", "--text", "x", "--list", "--to", "/tmp"], "--to applies only to --activity save-to-folder."),
            (["share", "--text", "x", "--activity", "save-to-folder", "--to", ""], "--to needs a folder."),
            (["share", "--text", "x", "--activity", "copy", "--exclude", "copy"],
             "--activity org.ferry.activity.copy is excluded by --exclude"),
            (["share", "--text", "x", "--activity", "send mail"], "--activity needs an activity type (org.example.send, or a built-in"),
            (["share", "--text", "x", "--activity", ""], "--activity needs an activity type"),
            (["share", "--text", "x", "--list", "--exclude", "a/b"], "--exclude needs an activity type"),
            (["share", "--text", "x", "--list", "--exclude", String(repeating: "a.", count: 200)], "--exclude needs an activity type"),
        ]
        for (arguments, message) in cases {
            let result = try FerryCLI.runArray(arguments + noBus)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
    }

    @Test("no bus is status 69; an unreadable file is 2 and a --to that is not a folder 64, before anything connects")
    func noBrokerAndBadInputs() throws {
        let noBroker = try FerryCLI.runArray(["share", "--text", "milk", "--list"] + noBus)
        #expect(noBroker.status == 69, "\(noBroker.stderr)")
        #expect(noBroker.stderr.hasPrefix("ferry: ") && noBroker.stderr.split(separator: "\n").count == 1, "\(noBroker.stderr)")
        let missing = try FerryCLI.runArray(["share", "/nonexistent/a.png", "--list"] + noBus)
        #expect(missing.status == 2, "\(missing.stderr)")
        #expect(missing.stderr == "ferry: cannot read '/nonexistent/a.png': No such file or directory\n")
        let folder = try FerryCLI.runArray(["share", "/tmp", "--list"] + noBus)
        #expect(folder.status == 2 && folder.stderr == "ferry: cannot share '/tmp': it is a folder\n", "\(folder.stderr)")
        let noFolder = try FerryCLI.runArray(["share", "--text", "x", "--activity", "save-to-folder", "--to", "/nonexistent/out"] + noBus)
        #expect(noFolder.status == 64, "\(noFolder.stderr)")
        #expect(noFolder.stderr == "ferry: --to: cannot use '/nonexistent/out': No such file or directory\n")
        let file = try FerryCLI.runArray(["share", "--text", "x", "--activity", "save-to-folder", "--to", "/etc/hostname"] + noBus)
        #expect(file.status == 64 && file.stderr == "ferry: --to: '/etc/hostname' is not a folder\n", "\(file.stderr)")
        let badType = try FerryCLI.runArray(["share", "--text", "x", "--type", "public.nonexistent-thing", "--list"] + noBus)
        #expect(badType.status == 2, "an unknown --type is not found, as for ferry copy: \(badType.stderr)")
    }

    @Test("no FILE, --text or --from with standard input a terminal is a usage error, not a wait for end of file")
    func terminalInput() async throws {
        let ferry = try FerryCLI.binary().path
        let command = ([ferry, "share", "--list"] + noBus).joined(separator: " ")
        let result = try await ChildProcess.run("/usr/bin/script", ["-qec", command, "/dev/null"], environment: ProcessInfo.processInfo.environment,
                                                timeout: .seconds(20))
        #expect(result.status == 64 && !result.timedOut, "\(result.status) \(result.stdout)")
        #expect(result.stdout.contains("ferry: nothing to share: give FILE…, --text S or --from APP"), "\(result.stdout)")
    }

    @Test("activity names: a name without a dot is a built-in's last part; types pass as they are")
    func activityNames() throws {
        #expect(try ShareCommand.activityType("copy", option: "--activity") == .copy)
        #expect(try ShareCommand.activityType("save-to-folder", option: "--activity") == .saveToFolder)
        #expect(try ShareCommand.activityType("open-in-new-scene", option: "--activity") == .openInNewScene)
        #expect(try ShareCommand.activityType("org.ferry.gallery.add-to-album", option: "--activity").rawValue
                == "org.ferry.gallery.add-to-album")
        #expect(try ShareCommand.activityType("org.ferry.activity.copy", option: "--exclude") == .copy)
        #expect(throws: ValidationError.self) { try ShareCommand.activityType("a b", option: "--activity") }
        let command = try ShareCommand.parse(["a.png", "b.txt", "--activity", "save-to-folder", "--to", "out", "--exclude", "copy",
                                              "--exclude", "org.example.send", "--json"])
        #expect(command.files == ["a.png", "b.txt"] && command.to == "out" && command.json && !command.list)
        #expect(command.exclude == ["copy", "org.example.send"])
        #expect(try ShareCommand.parse(["--from", "org.ferry.gallery/ABCD", "--list"]).from == SceneTarget(app: "org.ferry.gallery", session: "ABCD"))
    }

    @Test("--to: absolute as given; relative taken from the current directory, its folders resolved but not its last part")
    func folder() throws {
        let base = URL(fileURLWithPath: try #require(realpath(NSTemporaryDirectory(), nil).map { pointer in
            defer { free(pointer) }
            return String(cString: pointer)
        })).appendingPathComponent("ferry-share-unit-\(UUID().uuidString.prefix(8))")
        let out = base.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: base) }
        #expect(try ShareCommand.folder(out.path) == out.path)
        #expect(try ShareCommand.folder(out.path + "/") == out.path + "/", "an absolute path is passed on untouched")

        // The same folder named from the current directory: up to / and down again.
        let cwd = FileManager.default.currentDirectoryPath
        let up = String(repeating: "../", count: cwd.split(separator: "/").count)
        let relative = up + String(out.path.dropFirst())
        #expect(try ShareCommand.folder(relative) == out.path)
        #expect(try ShareCommand.folder(relative + "/") == out.path)
        #expect(try ShareCommand.folder(relative + "/..") == base.path)
        #expect(try ShareCommand.folder(relative + "/.") == out.path)
        #expect(try ShareCommand.folder(".") == cwd)

        // A link as the last part stays a link (the broker refuses it); a link before it is resolved.
        let link = base.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: out)
        #expect(try ShareCommand.folder(up + String(link.path.dropFirst())) == link.path)
        try FileManager.default.createDirectory(at: out.appendingPathComponent("in"), withIntermediateDirectories: true)
        #expect(try ShareCommand.folder(up + String(link.path.dropFirst()) + "/in") == out.path + "/in")

        for bad in ["/nonexistent/out", up + "nonexistent", "/etc/hostname"] {
            let error = #expect(throws: CLIFailure.self) { try ShareCommand.folder(bad) }
            #expect(error?.status == .usage && error?.message.hasPrefix("--to: ") == true, "\(bad): \(error?.message ?? "")")
        }
    }

    @Test("items are built as ferry copy builds them: one per file, typed by content and name, named without the extension")
    func items() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-share-items-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let png = folder.appendingPathComponent("holiday photo.png")
        try FileManager.default.copyItem(at: TestPaths.fixtures.appendingPathComponent("Payloads/sample.png"), to: png)
        let text = folder.appendingPathComponent("list.txt")
        try Data("milk\n".utf8).write(to: text)

        let items = try CopyItem.items(files: [png.path, text.path], text: nil, type: nil, verb: "share")
        #expect(items.map { $0.representations.map(\.type.identifier) } == [["public.png"], ["public.utf8-plain-text"]])
        #expect(items.map(\.suggestedName) == ["holiday photo", "list"])
        let typed = try CopyItem.items(files: [text.path], text: nil, type: .exact(.plainText))
        #expect(typed.first?.representations.first?.type == .plainText)
        let shared = try CopyItem.items(files: [], text: "hello", type: nil)
        #expect(shared.count == 1 && shared[0].representations.first?.type == .utf8PlainText && shared[0].suggestedName == nil)
        #expect(try shared[0].representations[0].source.load() == Data("hello".utf8))
        let command = try ShareCommand.parse([png.path, "--list", "--type", "image/png"])
        #expect(try command.readItems().first?.representations.first?.type.identifier == "public.png")
    }

    @Test("--list lines are TYPE, TITLE, CATEGORY and APP or (built-in), tab-separated and one line each whatever the title")
    func listLines() throws {
        let activities = [
            ListedActivity(type: "org.ferry.gallery.add-to-album", title: "Add to Album", category: .action, app: "org.ferry.gallery"),
            ListedActivity(type: .copy, title: "Copy", category: .action, app: nil),
            ListedActivity(type: "org.example.send", title: "Send\tto\nme", category: .share, app: "org.example"),
        ]
        let text = try ShareReport(json: false, share: "3").list(activities)
        #expect(text == "org.ferry.gallery.add-to-album\tAdd to Album\taction\torg.ferry.gallery\n"
                + "org.ferry.activity.copy\tCopy\taction\t(built-in)\n"
                + "org.example.send\tSend\\tto\\nme\tshare\torg.example\n")
        #expect(try ShareReport(json: false, share: "3").list([]) == "", "nothing can perform: no lines")

        let json = try ShareReport(json: true, share: "3").list(Array(activities.prefix(2)))
        #expect(json == #"{"activities":[{"activityType":"org.ferry.gallery.add-to-album","app":"org.ferry.gallery","builtIn":false,"#
                + #""category":"action","title":"Add to Album"},{"activityType":"org.ferry.activity.copy","app":null,"builtIn":true,"#
                + #""category":"action","title":"Copy"}],"share":"3"}"# + "\n")
    }

    @Test("a completion prints its message then one line per returned item; its status: 0 completed, 4 app gone, 1 otherwise")
    func completions() throws {
        let report = ShareReport(json: false, share: "7")
        let saved = ShareCompletion(completed: true, activityType: .saveToFolder,
                                    returnedItems: [["path": "/tmp/out/a.png"], ["path": "/tmp/out/a 2.png"]], message: "Saved 2 items")
        #expect(try report.completion(saved) == "Saved 2 items\npath=/tmp/out/a.png\npath=/tmp/out/a 2.png\n")
        let opened = ShareCompletion(completed: true, activityType: .openInNewScene,
                                     returnedItems: [["session": "ABCD", "app": "org.ferry.notes"]])
        #expect(try report.completion(opened) == "completed org.ferry.activity.open-in-new-scene\napp=org.ferry.notes\tsession=ABCD\n")
        let gone = ShareCompletion.failed("org.example.send", errorName: "org.ferry.Error.Unavailable",
                                          error: "the activity's app org.example went away")
        #expect(try report.completion(gone)
                == "not completed: the activity's app org.example went away (org.ferry.Error.Unavailable)\n")
        let refused = ShareCompletion(completed: false, activityType: "org.example.send")
        #expect(try report.completion(refused) == "not completed: org.example.send did not complete\n")

        #expect(ShareReport.status(of: saved) == FerryTerminal.ExitStatus.success)
        #expect(ShareReport.status(of: gone) == FerryTerminal.ExitStatus.unavailable)
        #expect(ShareReport.status(of: refused) == FerryTerminal.ExitStatus.failure)
        let failed = ShareCompletion.failed("org.example.send", errorName: "org.example.Error.Full", error: "the album is full")
        #expect(ShareReport.status(of: failed) == FerryTerminal.ExitStatus.failure)

        let json = try ShareReport(json: true, share: "7").completion(gone)
        #expect(json == #"{"activityType":"org.example.send","completed":false,"error":"the activity's app org.example went away","#
                + #""errorName":"org.ferry.Error.Unavailable","message":"the activity's app org.example went away","#
                + #""returnedItems":[],"share":"7"}"# + "\n")
        let savedJSON = try ShareReport(json: true, share: "7").completion(saved)
        #expect(savedJSON.contains(#""returnedItems":[{"path":"/tmp/out/a.png"},{"path":"/tmp/out/a 2.png"}]"#), "\(savedJSON)")
        #expect(savedJSON.contains(#""error":null,"errorName":null"#), "\(savedJSON)")
    }
}
