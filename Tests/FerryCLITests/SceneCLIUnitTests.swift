@testable import ferry
import FerryTerminal
import ArgumentParser
import Ferry
import FerryModel
import Foundation
import Testing

@Suite("ferry scene internals: argument checks, session prefixes, --into, tables")
struct SceneCLIUnitTests {
    @Test("bad --placement, --animation, --info, --activity and --url are usage errors (64) naming the problem")
    func badArguments() throws {
        let cases: [([String], String)] = [
            (["scene", "open", "org.ferry.notes", "--placement", "up"],
             "The value 'up' is invalid for '--placement <side>'. Please provide one of 'left' and 'right'."),
            (["scene", "open", "org.ferry.notes", "--role", "tv"],
             "The value 'tv' is invalid for '--role <role>'. Please provide one of 'application' and 'external-display'."),
            (["scene", "close", "ABCD1234", "--animation", "fly"],
             "The value 'fly' is invalid for '--animation <animation>'. Please provide one of 'standard', 'commit' or 'decline'."),
            (["scene", "close", "ABCD1234", "--animation", "1"], "The value '1' is invalid for '--animation <animation>'"),
            (["paste", "--into", "org.ferry.notes/"], "The value 'org.ferry.notes/' is invalid for '--into <app[/session]>'"),
            (["scene", "open", "org.ferry.notes", "--activity", "a.b", "--info", "novalue"], "--info needs KEY=VALUE, not 'novalue'"),
            (["scene", "open", "org.ferry.notes", "--activity", "a.b", "--info", "=x"], "--info needs KEY=VALUE, not '=x'"),
            (["scene", "open", "org.ferry.notes", "--activity", "a.b", "--info", "k=1", "--info", "k=2"], "--info k is given twice"),
            (["scene", "open", "org.ferry.notes", "--info", "k=1"], "--info and --target-content need --activity"),
            (["scene", "open", "org.ferry.notes", "--target-content", "x"], "--info and --target-content need --activity"),
            (["scene", "open", "org.ferry.notes", "--activity", "not an activity"], "is not an activity type"),
            (["scene", "open", "org.ferry.notes", "--url", "relative/path"], "--url 'relative/path' is not an absolute URL"),
            (["paste", "--into", "org.ferry.notes", "--type", "public.png"], "do not apply with --into"),
            (["scenes", "--app", ""], "--app needs an app id"),
            (["desktop", "--svg", "-", "--png", "-"], "--svg and --png cannot both write to standard output"),
            (["desktop", "--png", "-", "--json"], "--json cannot share standard output with a picture"),
        ]
        for (arguments, message) in cases {
            // No bus: these fail before anything connects.
            let result = try FerryCLI.runArray(arguments + ["--bus", "unix:path=/nonexistent/ferry-test"])
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
        #expect(throws: (any Error).self) { try SceneOpenCommand.parse(["org.ferry.notes", "--placement", "middle"]) }
        let fine = try SceneOpenCommand.parse(["org.ferry.notes", "--placement", "left", "--activity", "org.ferry.notes.open-note",
                                               "--info", "noteID=groceries", "--info", "count=12"])
        #expect(fine.placement == .left && fine.info.count == 2)
    }

    @Test("--info values: plain decimal integers become integers, everything else strings; '=' may appear in a value")
    func infoValues() throws {
        let info = try SceneOpenCommand.userInfo(["n=42", "neg=-7", "zero=0", "padded=007", "plus=+1", "word=groceries",
                                                  "empty=", "eq=a=b", "big=99999999999999999999", "space= 5"])
        #expect(info["n"] == .integer(42))
        #expect(info["neg"] == .integer(-7))
        #expect(info["zero"] == .integer(0))
        #expect(info["padded"] == .string("007"))
        #expect(info["plus"] == .string("+1"))
        #expect(info["word"] == .string("groceries"))
        #expect(info["empty"] == .string(""))
        #expect(info["eq"] == .string("a=b"))
        #expect(info["big"] == .string("99999999999999999999"))
        #expect(info["space"] == .string(" 5"))
    }

    @Test("the activity sent with scene open carries the type, the typed userInfo and the target content")
    func activityOptions() throws {
        let command = try SceneOpenCommand.parse(["org.ferry.notes", "--activity", "org.ferry.notes.open-note", "--info", "noteID=groceries",
                                                  "--info", "line=3", "--target-content", "groceries", "--url", "file:///tmp/a.txt",
                                                  "--placement", "right"])
        let options = try command.requestOptions(requesting: "ABCD")
        #expect(options.requestingScene == "ABCD" && options.placement == .right && options.role == nil && options.screen == nil)
        #expect(options.urls.map(\.absoluteString) == ["file:///tmp/a.txt"])
        let activity = try #require(try command.userActivity())
        #expect(activity.activityType == "org.ferry.notes.open-note")
        #expect(activity.targetContentIdentifier == "groceries")
        #expect(activity.userInfo == ["noteID": "groceries", "line": 3])
        // The broker reads it back as the same activity.
        let decoded = try UserActivity(wireDictionary: try activity.wireDictionary())
        #expect(decoded.userInfo == ["noteID": "groceries", "line": 3])
        let external = try SceneOpenCommand.parse(["org.ferry.notes", "--role", "external-display"])
        #expect(try external.requestOptions(requesting: nil).role == .windowExternalDisplayNonInteractive)
        let plain = try SceneOpenCommand.parse(["org.ferry.notes"])
        #expect(try plain.requestOptions(requesting: nil) == SceneActivationRequestOptions())
        #expect(try plain.userActivity() == nil)
    }

    @Test("a session is named by its identifier or a unique prefix of 4+ characters, in either case")
    func prefixes() throws {
        let sessions = [session("0F3A9C21-AAAA", "org.ferry.notes"), session("0F3B0000-BBBB", "org.ferry.gallery"),
                        session("0F3A9D00-CCCC", "org.ferry.notes"), session("abc", "org.ferry.notes")]
        #expect(try SceneCommand.resolve("0F3A9C21-AAAA", among: sessions).app == "org.ferry.notes")
        #expect(try SceneCommand.resolve("0f3b", among: sessions).persistentIdentifier == "0F3B0000-BBBB")
        #expect(try SceneCommand.resolve("0F3A9D", among: sessions).persistentIdentifier == "0F3A9D00-CCCC")
        // A whole identifier is fine however short.
        #expect(try SceneCommand.resolve("abc", among: sessions).persistentIdentifier == "abc")
        do {
            _ = try SceneCommand.resolve("0F3A", among: sessions)
            Issue.record("an ambiguous prefix resolved")
        } catch let failure as CLIFailure {
            #expect(failure.status == .usage)
            #expect(failure.message == "'0F3A' matches 2 sessions: 0F3A9C21-AAAA (org.ferry.notes), 0F3A9D00-CCCC (org.ferry.notes)")
        }
        do {
            _ = try SceneCommand.resolve("0F3", among: sessions)
            Issue.record("a 3-character prefix resolved")
        } catch let failure as CLIFailure {
            #expect(failure.status == .usage)
            #expect(failure.message.contains("at least 4 characters"))
        }
        do {
            _ = try SceneCommand.resolve("FFFF", among: sessions)
            Issue.record("an unknown prefix resolved")
        } catch let failure as CLIFailure {
            #expect(failure.status == .notFound)
            #expect(failure.message == "no scene session 'FFFF' (ferry scenes lists them)")
        }
    }

    @Test("--into takes APP or APP/SESSION; accepted and declined pastes read as documented")
    func pasteInto() throws {
        #expect(SceneTarget(argument: "org.ferry.notes") == SceneTarget(app: "org.ferry.notes"))
        #expect(SceneTarget(argument: "org.ferry.notes/0F3A") == SceneTarget(app: "org.ferry.notes", session: "0F3A"))
        #expect(SceneTarget(argument: "Notes/0F3A/x") == SceneTarget(app: "Notes", session: "0F3A/x"), "the session is the rest")
        for bad in ["", "/0F3A", "org.ferry.notes/"] {
            #expect(SceneTarget(argument: bad) == nil, "\(bad)")
        }
        #expect(try PasteCommand.parse(["--into", "org.ferry.notes/0F3A"]).into == SceneTarget(app: "org.ferry.notes", session: "0F3A"))
        #expect(try SceneOpenCommand.parse(["a", "--role", "external-display", "--placement", "right"]).role == .externalDisplay)
        #expect(try SceneCloseCommand.parse(["ABCD", "--animation", "decline"]).animation.animation == .decline)
        #expect(try SceneCloseCommand.parse(["ABCD"]).animation.animation == .standard)
        #expect(DismissalAnimationArgument.allCases.map(\.animation.name) == SceneDismissalAnimation.allCases.map(\.name),
                "every animation by its name")
        var outcome = SceneCommand.PasteOutcome()
        #expect(!outcome.accepted)
        outcome.accepted = true
        outcome.types = ["public.plain-text"]
        outcome.message = "appended to groceries"
        #expect(PasteIntoScene.acceptedLine(outcome) == "accepted: public.plain-text — appended to groceries\n")
        outcome.accepted = false
        outcome.reason = "the pasteboard holds no image"
        outcome.configuration = ["public.image"]
        let declined = PasteIntoScene.declined(outcome)
        #expect(declined.status == .failure)
        #expect(declined.message == "declined: the pasteboard holds no image (it accepts public.image)")
    }

    @Test("tables align columns; frames read X,Y WIDTHxHEIGHT")
    func formatting() {
        #expect(formatTable([["APP", "STATE"], ["org.ferry.notes", "foregroundActive"], ["x", "-"]])
                == "APP              STATE\norg.ferry.notes  foregroundActive\nx                -\n")
        #expect(formatTable([]) == "")
        #expect(formatFrame(Rect(x: 48, y: 48, width: 960, height: 640)) == "48,48 960x640")
        #expect(formatFrame(Rect(x: -12.5, y: 0, width: 1, height: 2)) == "-12.5,0 1x2")
        #expect(formatFrame(nil) == "-")
        #expect(FerryTerminal.ExitStatus.of(errorName: "org.ferry.Error.MultipleScenesNotSupported") == .failure)
    }

    @Test("hostile titles cannot break a table: newlines, tabs and escape sequences are shown escaped, long titles cut")
    func hostileTitles() throws {
        let table = formatTable([["APP", "TITLE", "FRAME"], ["org.evil", "one\nfake-app  fake-title\tx\u{1B}[2J\r", "1,2 3x4"]])
        let lines = table.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 3 && lines[2].isEmpty, "\(table)")
        #expect(lines[1] == #"org.evil  one\nfake-app  fake-title\tx\u{1B}[2J\r  1,2 3x4"#)
        #expect(!table.contains("\u{1B}") && !table.contains("\t") && !table.contains("\r"))
        #expect("a\u{2028}b\u{85}c".printableLine() == #"a\u{2028}b\u{85}c"#)
        #expect("fdp.\u{202E}txt.exe".printableLine() == #"fdp.\u{202E}txt.exe"#, "a right-to-left override is shown, not obeyed")
        #expect("👩\u{200D}💻 é".printableLine() == "👩\u{200D}💻 é", "joiners and accents stay")
        let long = String(repeating: "é", count: 500)
        let cut = long.printableLine(limit: tableTitleLimit)
        #expect(cut.count == tableTitleLimit && cut.hasSuffix("…"))
        #expect("short".printableLine(limit: tableTitleLimit) == "short")

        // The desktop's text and the one-line paste answers stay one line per row too.
        let screen = SceneCommand.Screen(try DesktopScreen(wire: WireReader(["index": .uint32(0), "frame": .dictionary(
            ["x": .double(0), "y": .double(0), "width": .double(1920), "height": .double(1080)])])))
        let snapshot = DesktopCommand.Snapshot(
            screens: [screen], edgeZone: 24,
            sessions: [SceneCommand.Session(persistentIdentifier: "0F3A9C21", app: "org.evil", title: "a\nscreen 9: fake")])
        #expect(snapshot.text().split(separator: "\n").count == 2, "\(snapshot.text())")
        #expect(!snapshot.text().contains("\nscreen 9"))
        var outcome = SceneCommand.PasteOutcome(accepted: true, types: ["public.plain-text"], message: "done\nferry: forged")
        #expect(PasteIntoScene.acceptedLine(outcome) == #"accepted: public.plain-text — done\nferry: forged"# + "\n")
        outcome.reason = "no\nthanks"
        #expect(PasteIntoScene.declined(outcome).message == #"declined: no\nthanks"#)
    }

    private func session(_ id: String, _ app: String) -> SceneCommand.Session {
        SceneCommand.Session(persistentIdentifier: id, app: app)
    }
}
