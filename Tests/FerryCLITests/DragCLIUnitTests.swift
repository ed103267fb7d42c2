@testable import ferry
import FerryTerminal
import ArgumentParser
import DesktopPicture
import Ferry
import FerryModel
import FerryTestSupport
import Foundation
import Testing

@Suite("ferry drag internals: arguments, the path, scenes, edges, items, the lines it prints")
struct DragCLIUnitTests {
    private let noBus = ["--bus", "unix:path=/nonexistent/ferry-test"]

    @Test("bad combinations and malformed values are usage errors (64) naming the problem, before any bus")
    func usageErrors() throws {
        let cases: [([String], String)] = [
            (["drag", "--to", "org.ferry.notes"], "Give --from APP[/SESSION]"),
            (["drag", "--from", "a", "--app", "b", "--edge", "left"], "--from and --app cannot be combined"),
            (["drag", "--from", "a"], "Give a destination: --to APP[/SESSION], --at X,Y or --edge left|right"),
            (["drag", "--from", "a", "--to", "b", "--edge", "left"], "--to and --edge cannot be combined"),
            (["drag", "--from", "a", "--at", "1,2", "--to", "b"], "--to and --at cannot be combined"),
            (["drag", "--from", "a", "--at", "1,2", "--text", "x", "--file", "/etc/hostname"], "--text and --file cannot be combined"),
            (["drag", "--from", "a", "--at", "1,2", "--item", "1", "--text", "x"], "--item picks what the source app provides"),
            (["drag", "--from", "a", "--at", "1,2", "--item=-1"], "--item must be 0 or more"),
            (["drag", "--from", "a", "--at", "12"], "The value '12' is invalid for '--at <x,y>'"),
            (["drag", "--from", "a", "--at", "x,y"], "The value 'x,y' is invalid for '--at <x,y>'"),
            (["drag", "--from", "a", "--at", "1,2,3"], "The value '1,2,3' is invalid for '--at <x,y>'"),
            (["drag", "--from", "a", "--at", "nan,2"], "The value 'nan,2' is invalid for '--at <x,y>'"),
            (["drag", "--from", "a", "--at", "1,inf"], "The value '1,inf' is invalid for '--at <x,y>'"),
            (["drag", "--from", "a", "--at", "1e300,1"], "The value '1e300,1' is invalid for '--at <x,y>'"),
            (["drag", "--from", "a", "--at=-10000001,0"], "The value '-10000001,0' is invalid for '--at <x,y>'"),
            (["drag", "--from", "a", "--at", "1,2", "--via", "0,1.7e308"], "The value '0,1.7e308' is invalid for '--via <x,y>'"),
            (["drag", "--from", "a", "--at", "1,2", "--via", "3;4"], "The value '3;4' is invalid for '--via <x,y>'"),
            (["drag", "--from", "a", "--edge", "top"], "The value 'top' is invalid for '--edge <edge>'. Please provide one of 'left' and 'right'."),
            (["drag", "--from", "a", "--at", "1,2", "--screen", "1"], "--screen applies only with --edge"),
            (["drag", "--from", "a", "--edge", "left", "--screen=-2"], "--screen must be 0 or more"),
            (["drag", "--from", "", "--at", "1,2"], "The value '' is invalid for '--from <app[/session]>'"),
            (["drag", "--from", "org.ferry.notes/", "--at", "1,2"], "The value 'org.ferry.notes/' is invalid for '--from <app[/session]>'"),
            (["drag", "--from", "a", "--to", "/1234"], "The value '/1234' is invalid for '--to <app[/session]>'"),
            (["drag", "--app", "org.ferry.notes"], "--app needs --edge left|right"),
            (["drag", "--app", "org.ferry.notes", "--at", "1,2"], "--app needs --edge"),
            (["drag", "--app", "org.ferry.notes", "--edge", "left", "--text", "x"], "--text does not apply to --app"),
            (["drag", "--app", "org.ferry.notes", "--edge", "left", "--move"], "--move does not apply to --app"),
            (["drag", "--from", "a", "--at", "1,2", "--file", ""], "--file needs a path"),
        ]
        for (arguments, message) in cases {
            let result = try FerryCLI.runArray(arguments + noBus)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasSuffix(" (see 'ferry drag --help')\n") && result.stderr.split(separator: "\n").count == 1,
                    "\(arguments): \(result.stderr)")
        }
    }

    @Test("no bus is status 69; an unreadable --file is status 2 before anything connects")
    func noBrokerAndBadFile() throws {
        let noBroker = try FerryCLI.runArray(["drag", "--from", "org.ferry.notes", "--edge", "right"] + noBus)
        #expect(noBroker.status == 69, "\(noBroker.stderr)")
        #expect(noBroker.stderr.hasPrefix("ferry: ") && noBroker.stderr.split(separator: "\n").count == 1, "\(noBroker.stderr)")
        let missing = try FerryCLI.runArray(["drag", "--from", "org.ferry.notes", "--edge", "right", "--file", "/nonexistent/a.txt"] + noBus)
        #expect(missing.status == 2, "\(missing.stderr)")
        #expect(missing.stderr == "ferry: cannot read '/nonexistent/a.txt': No such file or directory\n")
    }

    @Test("X,Y accepts spaces, signs and exponents; the parsed command keeps every option")
    func parsing() throws {
        #expect(Point(argument: " 10 , 20.5 ") == Point(x: 10, y: 20.5))
        #expect(Point(argument: "-12,1e3") == Point(x: -12, y: 1000))
        #expect(Point(argument: "-1e7,10000000") == Point(x: -10_000_000, y: 10_000_000), "the limits themselves")
        for bad in ["", ",", "1,", ",2", "1 2", "1,2,3", "1,2 ,", "nan,0", "0,-inf", "10000000.5,0", "-1e8,0"] {
            #expect(Point(argument: bad) == nil, "\(bad)")
        }
        let command = try DragCommand.parse(["--from", "org.ferry.notes/ABCD", "--via", "10,10", "--via", "20,20",
                                             "--at=-5,7", "--move", "--restricted", "--item", "3", "--json"])
        #expect(command.destination == .point(Point(x: -5, y: 7)))
        #expect(command.via == [Point(x: 10, y: 10), Point(x: 20, y: 20)] && command.move && command.restricted && command.item == 3 && command.json)
        #expect(try DragCommand.parse(["--from", "a", "--to", "b/1234"]).destination == .scene(SceneTarget(app: "b", session: "1234")))
        #expect(try DragCommand.parse(["--app", "a", "--edge", "right", "--screen", "1"]).destination == .edge(.right))
        #expect(throws: (any Error).self) { try DragCommand.parse(["--from", "a", "--edge", "middle"]) }
    }

    @Test("the path: four equal steps per segment through every via point, ending exactly on the destination")
    func path() {
        let path = DragRun.path(from: Point(x: 0, y: 0), via: [Point(x: 100, y: 0)], to: Point(x: 100, y: 40))
        #expect(path == [Point(x: 25, y: 0), Point(x: 50, y: 0), Point(x: 75, y: 0), Point(x: 100, y: 0),
                         Point(x: 100, y: 10), Point(x: 100, y: 20), Point(x: 100, y: 30), Point(x: 100, y: 40)])
        let odd = DragRun.path(from: Point(x: 0.5, y: 0.2), via: [], to: Point(x: 10.7, y: 1.9))
        #expect(odd == [Point(x: 3, y: 1), Point(x: 6, y: 1), Point(x: 8, y: 1), Point(x: 10.7, y: 1.9)],
                "whole points in between, the end exact")
    }

    @Test("a scene partly covered by one in front is dropped on at its uncovered point nearest the centre; one covered everywhere is an error")
    func visiblePoint() throws {
        let back = SceneCommand.Session(persistentIdentifier: "BACK", app: "a", state: .foregroundInactive,
                                        frame: Rect(x: 0, y: 0, width: 960, height: 640), stackIndex: 2)
        let front = SceneCommand.Session(persistentIdentifier: "FRONT", app: "b", state: .foregroundActive,
                                         frame: Rect(x: 0, y: 0, width: 700, height: 640), stackIndex: 0)
        let archived = SceneCommand.Session(persistentIdentifier: "OLD", app: "c", state: .unattached,
                                            frame: Rect(x: 0, y: 0, width: 960, height: 640), stackIndex: 1)
        let otherScreen = SceneCommand.Session(persistentIdentifier: "THERE", app: "d", state: .foregroundActive,
                                               frame: Rect(x: 0, y: 0, width: 960, height: 640), screen: 1, stackIndex: 0)
        #expect(try DragRun.visiblePoint(of: back, among: [back, archived, otherScreen]) == Point(x: 480, y: 320),
                "an archived scene or one on another screen does not cover it")
        let point = try DragRun.visiblePoint(of: back, among: [back, front, archived])
        #expect(point.x > 700 && back.frame?.contains(point) == true && abs(point.y - 320) <= 20, "\(point)")
        let covered = SceneCommand.Session(persistentIdentifier: "ALL", app: "e", state: .background,
                                           frame: Rect(x: -10, y: -10, width: 2000, height: 2000), stackIndex: 1)
        let error = #expect(throws: CLIFailure.self, "covered everywhere: nowhere to drag from or to") {
            try DragRun.visiblePoint(of: back, among: [back, covered])
        }
        #expect(error?.status == .unavailable)
        #expect(error?.message.contains("ferry scene activate BACK") == true, "\(error?.message ?? "")")
    }

    @Test("an edge point is the middle of that edge zone, at most half the screen; no zone is an error")
    func edges() throws {
        let screen = Rect(x: 1920, y: 0, width: 1280, height: 800)
        #expect(try DragRun.edgePoint(.left, of: screen, zone: 24, screen: 1) == Point(x: 1932, y: 400))
        #expect(try DragRun.edgePoint(.right, of: screen, zone: 24, screen: 1) == Point(x: 3188, y: 400))
        #expect(try DragRun.edgePoint(.right, of: screen, zone: 5000, screen: 1) == Point(x: 2880, y: 400))
        #expect(screen.contains(try DragRun.edgePoint(.right, of: screen, zone: 1, screen: 1)))
        do {
            _ = try DragRun.edgePoint(.left, of: screen, zone: 0, screen: 1)
            Issue.record("no edge zone gave a point")
        } catch let failure as CLIFailure {
            #expect(failure.status == .failure && failure.message.contains("no edge zones"))
        }
    }

    @Test("scenes: a session prefix, the front-most connected scene, the next one when it is the source; errors by status")
    func scenes() throws {
        let sessions = [
            SceneCommand.Session(persistentIdentifier: "AAAA1111", app: "org.ferry.notes", state: .unattached,
                                 frame: Rect(x: 0, y: 0, width: 10, height: 10)),
            SceneCommand.Session(persistentIdentifier: "BBBB2222", app: "org.ferry.notes", state: .foregroundActive,
                                 frame: Rect(x: 0, y: 0, width: 100, height: 50)),
            SceneCommand.Session(persistentIdentifier: "CCCC3333", app: "org.ferry.notes", state: .background),
            SceneCommand.Session(persistentIdentifier: "DDDD4444", app: "org.ferry.gallery", state: .unattached),
        ]
        #expect(try DragRun.scene(SceneTarget(app: "org.ferry.notes"), among: sessions).persistentIdentifier == "BBBB2222")
        #expect(try DragRun.scene(SceneTarget(app: "org.ferry.notes"), among: sessions, avoiding: "BBBB2222").persistentIdentifier == "CCCC3333")
        #expect(try DragRun.scene(SceneTarget(app: "org.ferry.notes", session: "cccc"), among: sessions).persistentIdentifier == "CCCC3333")
        #expect(try DragRun.centre(of: sessions[1]) == Point(x: 50, y: 25))
        let failures: [((String, String?), FerryTerminal.ExitStatus, String)] = [
            (("org.example.none", nil), .notFound, "no scene of 'org.example.none'"),
            (("org.ferry.notes", "ZZZZ"), .notFound, "no scene session 'ZZZZ'"),
            (("org.ferry.notes", "AAA"), .usage, "too short"),
            (("org.ferry.notes", "AAAA"), .unavailable, "is not connected: org.ferry.notes is not running"),
            (("org.ferry.gallery", nil), .unavailable, "org.ferry.gallery has no connected scene"),
            // A session of another app is not found under this one.
            (("org.ferry.gallery", "BBBB2222"), .notFound, "no scene session"),
        ]
        for (argument, status, message) in failures {
            do {
                _ = try DragRun.scene(SceneTarget(app: argument.0, session: argument.1), among: sessions)
                Issue.record("\(argument) resolved")
            } catch let failure as CLIFailure {
                #expect(failure.status == status, "\(argument)")
                #expect(failure.message.contains(message), "\(argument): \(failure.message)")
            }
        }
        #expect(throws: CLIFailure.self) { try DragRun.centre(of: sessions[2]) }
    }

    @Test("--file: the content under its sniffed type, then public.file-url with the absolute, percent-encoded URL")
    func fileItem() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-drag-unit-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("shopping list%.txt")
        try Data("milk\n".utf8).write(to: file)
        let item = try DragCommand.fileItem(file.path)
        #expect(item.representations.map(\.type.identifier) == ["public.utf8-plain-text", "public.file-url"])
        #expect(item.suggestedName == "shopping list%")
        let url = try item.representations[1].source.load()
        #expect(String(decoding: url, as: UTF8.self) == "file://" + folder.path + "/shopping%20list%25.txt")
        let provider = try item.provider(lazy: false)
        #expect(provider.representations.map(\.contentType.identifier) == ["public.utf8-plain-text", "public.file-url"])
        #expect(!item.needsPromises)
        #expect(DragCommand.fileURL(Array("/a/ü b".utf8)) == "file:///a/%C3%BC%20b")
        #expect(DragCommand.fileURL(Array("/a/bad".utf8) + [0xFF]) == "file:///a/bad%FF")
        #expect(DragCommand.absolutePath(Array("/x/y".utf8)) == Array("/x/y".utf8))
        #expect(DragCommand.absolutePath(Array("./y".utf8)) == Array((FileManager.default.currentDirectoryPath + "/y").utf8))
        #expect(throws: CLIFailure.self) { try DragCommand.fileItem(folder.path) }
    }

    @Test("--file with a folder says drag; a FIFO is read once, whole, and sniffed from what was read")
    func fileItemFolderAndFIFO() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-drag-fifo-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try FerryCLI.runArray(["drag", "--from", "a", "--at", "1,2", "--file", folder.path] + noBus)
        #expect(result.status == 2 && result.stderr == "ferry: cannot drag '\(folder.path)': it is a folder\n", "\(result.stderr)")

        let fifo = folder.appendingPathComponent("pipe")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        // The writer writes and goes away at once: opening the FIFO a second time would wait forever.
        let writer = try RunningProcess("/bin/sh", ["-c", "printf 'milk and eggs' > \"$0\"", fifo.path],
                                        environment: ProcessInfo.processInfo.environment)
        defer { _ = writer.waitUntilExit() }
        let item = try DragCommand.fileItem(fifo.path)
        #expect(item.representations.first?.type == .utf8PlainText, "sniffed: \(item.representations.map(\.type.identifier))")
        let content = try #require(item.representations.first).source.load()
        #expect(String(decoding: content, as: UTF8.self) == "milk and eggs", "nothing of it was lost to sniffing")
    }

    @Test("the lines: a move over a scene, an edge, nothing; the outcomes; the same as JSON with nulls")
    func lines() throws {
        let sessions = [SceneCommand.Session(persistentIdentifier: "5E6F7A8B-0000", app: "org.ferry.gallery"),
                        SceneCommand.Session(persistentIdentifier: "1A2B3C4D-0000", app: "org.ferry.notes")]
        let text = DragReport(json: false, drag: "7", sessions: sessions)
        #expect(try text.began(source: sessions[1], app: "org.ferry.notes", at: Point(x: 528, y: 368), pasteboard: "org.ferry.drag.7")
                == "drag 7: org.ferry.notes/1A2B3C4D at 528,368\n")
        #expect(try text.began(source: nil, app: "org.ferry.notes", at: Point(x: 960, y: 540), pasteboard: "org.ferry.drag.7")
                == "drag 7: the icon of org.ferry.notes at 960,540\n")
        #expect(try text.moved(step: 1, to: Point(x: 800, y: 500.5), DragMove(proposal: .copy, target: "5E6F7A8B-0000"))
                == "  800,500.5  org.ferry.gallery/5E6F7A8B  copy\n")
        #expect(try text.moved(step: 2, to: Point(x: 1908, y: 540), DragMove(proposal: .copy, edge: .right))
                == "  1908,540  right edge  copy\n")
        #expect(try text.moved(step: 3, to: Point(x: 5, y: 5), DragMove(proposal: .cancel)) == "  5,5  -  cancel\n")
        #expect(try text.moved(step: 4, to: Point(x: 5, y: 5), DragMove(proposal: DropProposal(operation: .move, isPrecise: true),
                                                                        target: "unknown-scene"))
                == "  5,5  unknown-  move (precise)\n")
        #expect(try text.dropped(DragOutcome(operation: .copy, target: "5E6F7A8B-0000", message: "added\nphoto",
                                             types: ["public.png"]), edge: nil)
                == "dropped: copy to org.ferry.gallery/5E6F7A8B, read public.png — added\\nphoto\n")
        #expect(try text.dropped(DragOutcome(operation: .copy, newSession: "99998888-aaaa", app: "org.ferry.notes"), edge: .right)
                == "dropped: opened org.ferry.notes/99998888 at the right edge\n")
        #expect(try text.dropped(DragOutcome(operation: .cancel, reason: "no app declares org.example.thing"), edge: nil)
                == "dropped: cancel — no app declares org.example.thing\n")
        #expect(try text.dropped(DragOutcome(operation: .forbidden, target: "5E6F7A8B-0000"), edge: nil)
                == "dropped: forbidden at org.ferry.gallery/5E6F7A8B\n")

        let json = DragReport(json: true, drag: "7", sessions: sessions)
        let move = try object(json.moved(step: 2, to: Point(x: 1908, y: 540), DragMove(proposal: .copy, edge: .right)))
        #expect(move["event"] as? String == "move" && move["drag"] as? String == "7" && move["step"] as? Int == 2)
        #expect(((move["location"] as? [String: Any])?["x"] as? NSNumber)?.doubleValue == 1908)
        #expect(move["target"] is NSNull && move["app"] is NSNull && move["edge"] as? String == "right")
        #expect(move["operation"] as? String == "copy" && move["precise"] as? Bool == false)
        let over = try object(json.moved(step: 1, to: Point(x: 1, y: 2), DragMove(proposal: .forbidden, target: "5E6F7A8B-0000")))
        #expect(over["app"] as? String == "org.ferry.gallery" && over["edge"] is NSNull)
        let drop = try object(json.dropped(DragOutcome(operation: .copy, target: "5E6F7A8B-0000", types: ["public.png"]), edge: nil))
        #expect(Set(drop.keys) == ["event", "drag", "operation", "target", "app", "message", "types", "newSession", "reason"])
        #expect(drop["app"] as? String == "org.ferry.gallery" && drop["message"] is NSNull && drop["types"] as? [String] == ["public.png"])
        let begin = try object(json.began(source: nil, app: "org.ferry.notes", at: Point(x: 1, y: 2), pasteboard: "org.ferry.drag.7"))
        #expect(begin["source"] is NSNull && begin["app"] as? String == "org.ferry.notes" && begin["pasteboard"] as? String == "org.ferry.drag.7")
    }

    @Test("desktop: the last drag becomes the picture's path and a label naming how it ended")
    func desktopDrag() {
        let snapshot = DesktopCommand.Snapshot(screens: [], edgeZone: 24, sessions: [
            SceneCommand.Session(persistentIdentifier: "5E6F7A8B-0000", app: "org.ferry.gallery"),
        ])
        let steps = [DragRecord.Step(location: Point(x: 1, y: 2), target: "", operation: .cancel),
                     DragRecord.Step(location: Point(x: 3, y: 4), target: "5E6F7A8B-0000", operation: .copy),
                     DragRecord.Step(location: Point(x: 1908, y: 540), target: "edge:right", operation: .copy)]
        let copied = DragRecord(id: 7, sourceApp: "org.ferry.notes", sourceSession: "1A2B", state: "ended", operation: .copy,
                                target: "5E6F7A8B-0000", steps: Array(steps.prefix(2)))
        let path = snapshot.dragPath(copied, appNames: ["org.ferry.gallery": "Gallery"])
        #expect(path.steps.map(\.operation) == [.cancel, .copy] && path.steps.map(\.isEdge) == [false, false])
        #expect(path.outcome == .copy && path.label == "drag 7: copy to Gallery/5E6F7A8B")
        let opened = DragRecord(id: 8, sourceApp: "org.ferry.notes", sourceSession: "1A2B", state: "ended", operation: .copy,
                                newSession: "99998888-aaaa", steps: steps)
        #expect(snapshot.dragPath(opened, appNames: [:]).steps.last?.isEdge == true)
        #expect(snapshot.dragSummary(opened, appNames: [:]) == "drag 8: opened 99998888 at the right edge")
        let icon = DragRecord(id: 9, sourceApp: "org.ferry.notes", app: "org.ferry.notes", state: "ended", operation: .copy,
                              newSession: "99998888-aaaa", steps: steps)
        #expect(snapshot.dragSummary(icon, appNames: ["org.ferry.notes": "Notes"]) == "drag 9: opened Notes/99998888 at the right edge")
        let cancelled = DragRecord(id: 10, sourceApp: "a", state: "ended", operation: .cancel, reason: "no app\ndeclares it")
        #expect(snapshot.dragSummary(cancelled, appNames: [:]) == "drag 10: cancel — no app\\ndeclares it")
        let running = DragRecord(id: 11, sourceApp: "a", state: "dragging", steps: steps)
        #expect(snapshot.dragSummary(running, appNames: [:]) == "drag 11: dragging")
        #expect(snapshot.dragPath(running, appNames: [:]).outcome == nil)
    }

    private func object(_ line: String) throws -> [String: Any] {
        #expect(line.hasSuffix("\n") && line.dropLast().firstIndex(of: "\n") == nil, "one line: \(line)")
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }
}
