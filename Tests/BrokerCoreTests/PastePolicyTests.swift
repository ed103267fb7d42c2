import BrokerCore
import FerryModel
import FerryTestSupport
import Foundation
import Testing

@Suite struct PastePolicyTests {
    private func policy(_ text: String) throws -> PastePolicy {
        try PastePolicy(parsing: text, path: "~/.config/ferry/paste-policy")
    }

    @Test func theDefaultAllowsUnregisteredCallersAndAppsThatActAndAsksAboutForegroundApps() {
        let policy = PastePolicy.default.located(at: "~/.config/ferry/paste-policy")
        #expect(policy.decide(.unregistered, userAction: false, hasForegroundScene: false).isAllowed)
        #expect(policy.decide(.app("org.example.Notes"), userAction: true, hasForegroundScene: false)
            == .allow(reason: "org.example.Notes may paste: the user acted"))
        #expect(policy.decide(.app("org.example.Notes"), userAction: false, hasForegroundScene: true)
            == .ask(reason: "org.example.Notes reads another app's content without a user action (allow it in ~/.config/ferry/paste-policy)"))
        #expect(policy.decide(.app("org.example.Notes"), userAction: false, hasForegroundScene: true, readsOwnContent: true)
            == .allow(reason: "org.example.Notes may paste: it reads what it wrote itself"))
        #expect(policy.decide(.app("org.example.Notes"), userAction: false, hasForegroundScene: false, readsOwnContent: true)
            .isAllowed)
        #expect(policy.decide(.app("org.example.Spy"), userAction: false, hasForegroundScene: false)
            == .deny(reason: "org.example.Spy may not paste without a user action or a foreground scene (allow it in ~/.config/ferry/paste-policy)"))
    }

    @Test func explicitDenyBeatsEverything() throws {
        let policy = try policy("""
            allow *
            allow org.example.Spy
            deny org.example.Spy
            """)
        let decision = policy.decide(.app("org.example.Spy"), userAction: true, hasForegroundScene: true)
        #expect(decision == .deny(reason: "org.example.Spy may not paste: `deny org.example.Spy` in ~/.config/ferry/paste-policy:3"))
        #expect(policy.decide(.app("org.example.Other"), userAction: false, hasForegroundScene: false).isAllowed)
    }

    @Test func allowLetsAnAppPasteAtAnyTime() throws {
        let policy = try policy("# clipboard manager\nallow org.example.Clips   # trusted\n")
        #expect(policy.decide(.app("org.example.Clips"), userAction: false, hasForegroundScene: false)
            == .allow(reason: "org.example.Clips may paste: `allow org.example.Clips` in ~/.config/ferry/paste-policy:2"))
        #expect(!policy.decide(.app("org.example.Other"), userAction: false, hasForegroundScene: false).isAllowed)
    }

    @Test func wildcardsApplyToAppsNotToUnregisteredCallers() throws {
        let denyAll = try policy("deny *\nallow org.example.Notes")
        #expect(!denyAll.decide(.app("org.example.Other"), userAction: true, hasForegroundScene: true).isAllowed)
        #expect(denyAll.decide(.app("org.example.Notes"), userAction: false, hasForegroundScene: false).isAllowed)
        #expect(denyAll.decide(.unregistered, userAction: false, hasForegroundScene: false).isAllowed)
        let allowAll = try policy("allow *")
        #expect(allowAll.decide(.app("org.example.Any"), userAction: false, hasForegroundScene: false).isAllowed)
    }

    @Test func denyUnregisteredStopsTheCommandLine() throws {
        let policy = try policy("\n\ndeny unregistered\n")
        #expect(policy.decide(.unregistered, userAction: true, hasForegroundScene: false)
            == .deny(reason: "callers that are not registered apps may not paste: `deny unregistered` in ~/.config/ferry/paste-policy:3"))
        #expect(policy.decide(.app("org.example.Notes"), userAction: true, hasForegroundScene: false).isAllowed)
    }

    @Test func askAppliesWithoutAUserActionAndBeatsTheWildcards() throws {
        let policy = try policy("allow *\nask org.example.Viewer\nask *\n")
        #expect(policy.decide(.app("org.example.Viewer"), userAction: false, hasForegroundScene: false)
            == .ask(reason: "org.example.Viewer reads another app's content without a user action: `ask org.example.Viewer` in ~/.config/ferry/paste-policy:2"))
        #expect(policy.decide(.app("org.example.Viewer"), userAction: true, hasForegroundScene: false).isAllowed)
        #expect(policy.decide(.app("org.example.Viewer"), userAction: false, hasForegroundScene: false, readsOwnContent: true)
            .isAllowed)
        #expect(policy.decide(.app("org.example.Other"), userAction: false, hasForegroundScene: false).isAllowed, "allow *")
        let denyAll = try self.policy("deny *\nask org.example.Viewer\n")
        #expect(denyAll.decide(.app("org.example.Other"), userAction: false, hasForegroundScene: true, readsOwnContent: true)
            .isAllowed, "an app's own content is never denied by a wildcard")
        #expect(!denyAll.decide(.app("org.example.Other"), userAction: true, hasForegroundScene: true).isAllowed)
        #expect(denyAll.decide(.app("org.example.Viewer"), userAction: false, hasForegroundScene: false)
            == .ask(reason: "org.example.Viewer reads another app's content without a user action: `ask org.example.Viewer` in ~/.config/ferry/paste-policy:2"))
        let denied = try self.policy("deny org.example.Spy\nallow org.example.Spy\n")
        #expect(!denied.decide(.app("org.example.Spy"), userAction: true, hasForegroundScene: true, readsOwnContent: true).isAllowed,
                "deny <app> beats everything, its own content included")
        #expect(denied.rules.count == 2)
    }

    @Test(arguments: [
        ("ask unregistered", "~/p:1: `ask unregistered` is not a rule: callers that are not registered apps are the user's own commands"),
        ("ask", "~/p:1: `ask` needs an app id, `*` or `unregistered`"),
        ("permit org.example.A", "~/p:1: expected `allow`, `deny` or `ask`, found \"permit\""),
        ("# ok\nallow", "~/p:2: `allow` needs an app id, `*` or `unregistered`"),
        ("deny a b", "~/p:1: `deny` takes one app id, `*` or `unregistered`, found 2 words"),
        ("allow org.example.A\n\nallow org/example", "~/p:3: \"org/example\" is not an app id (letters, digits, '.' and '-')"),
        ("allow é", "~/p:1: \"é\" is not an app id (letters, digits, '.' and '-')"),
    ])
    func malformedLinesNameThePathAndLine(text: String, message: String) {
        #expect {
            try PastePolicy(parsing: text, path: "~/p")
        } throws: { error in
            (error as? FerryModelError) == FerryModelError(.invalidArgument, message)
        }
    }

    @Test func defaultPathFollowsXDGConfigHome() {
        let path = PastePolicyFile.defaultPath()
        if let config = ProcessInfo.processInfo.environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            #expect(path == config + "/ferry/paste-policy")
        } else {
            #expect(path == NSHomeDirectory() + "/.config/ferry/paste-policy")
        }
    }
}

@Suite struct PastePolicyFileTests {
    /// A temporary folder with a log collector.
    final class Fixture: Sendable {
        let directory: String
        let log = CapturedLog()

        init() throws {
            var template = Array("/tmp/ferry-policy-XXXXXX".utf8CString)
            guard let path = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
            directory = String(cString: path)
        }

        deinit { try? FileManager.default.removeItem(atPath: directory) }

        var path: String { directory + "/paste-policy" }

        func watcher() -> PastePolicyFile {
            PastePolicyFile(path: path, logger: log.logger())
        }

        func write(_ text: String) throws {
            // Write a new file and rename it over, as editors do (a new inode every time).
            let temporary = directory + "/.paste-policy.tmp"
            try Data(text.utf8).write(to: URL(fileURLWithPath: temporary))
            guard rename(temporary, path) == 0 else { throw CocoaError(.fileWriteUnknown) }
        }

        /// Writes `text` as `folder/paste-policy` in the fixture's folder, making the folders
        /// needed.
        func write(_ text: String, in folder: String) throws {
            try FileManager.default.createDirectory(atPath: directory + "/" + folder, withIntermediateDirectories: true)
            try Data(text.utf8).write(to: URL(fileURLWithPath: directory + "/" + folder + "/paste-policy"))
        }

        /// The messages logged so far, each with its level.
        func logged() -> [String] { log.all.map { "\($0.level): \($0.message)" } }
    }

    private let spy = PastePolicy.Reader.app("org.example.Spy")

    @Test func aMissingFileIsTheDefaultPolicy() throws {
        let fixture = try Fixture()
        let file = fixture.watcher()
        let policy = file.current()
        #expect(policy.rules.isEmpty)
        #expect(policy.path == fixture.path)
        #expect(policy.decide(.unregistered, userAction: false, hasForegroundScene: false).isAllowed)
        #expect(fixture.logged().isEmpty, "a missing file is normal, not worth a log line")
    }

    @Test func changesArePickedUpOnTheNextDecision() async throws {
        let fixture = try Fixture()
        let file = fixture.watcher()
        #expect(!file.current().decide(spy, userAction: false, hasForegroundScene: false).isAllowed)

        try fixture.write("allow org.example.Spy\n")
        #expect(file.current().decide(spy, userAction: false, hasForegroundScene: false).isAllowed)

        try fixture.write("deny  org.example.Spy\n")
        #expect(!file.current().decide(spy, userAction: true, hasForegroundScene: false).isAllowed)

        // Rewritten in place, same inode and size: the modification time tells. (File times tick
        // at the kernel's clock granularity, a few milliseconds: wait past one tick.)
        try await Task.sleep(for: .milliseconds(20))
        let handle = try #require(FileHandle(forWritingAtPath: fixture.path))
        try handle.write(contentsOf: Data("allow".utf8))  // "deny  org…" → "allow org…"
        try handle.close()
        #expect(file.current().decide(spy, userAction: false, hasForegroundScene: false).isAllowed)

        try FileManager.default.removeItem(atPath: fixture.path)
        #expect(file.current().rules.isEmpty, "a removed file is the default policy again")
        #expect(fixture.logged().last == "notice: paste policy: \(fixture.path) is gone; using the default policy")
    }

    @Test func aMalformedFileKeepsTheLastGoodPolicyAndIsReportedOncePerChange() throws {
        let fixture = try Fixture()
        let file = fixture.watcher()
        try fixture.write("allow org.example.Spy\n")
        #expect(file.current().decide(spy, userAction: false, hasForegroundScene: false).isAllowed)
        #expect(fixture.logged() == ["info: paste policy: read \(fixture.path) (1 rule)"])
        let before = fixture.logged().count

        try fixture.write("allow org.example.Spy\nallow please\nalow org.example.Other\n")
        for _ in 0..<5 {
            #expect(file.current().decide(spy, userAction: false, hasForegroundScene: false).isAllowed,
                    "the last good policy stays in force")
        }
        let errors = Array(fixture.logged().dropFirst(before))
        #expect(errors == ["warning: paste policy: \(fixture.path):3: expected `allow`, `deny` or `ask`, found \"alow\"; keeping the rules in force"])

        try fixture.write("deny org.example.Spy\nallow")
        _ = file.current(); _ = file.current()
        #expect(fixture.logged().count == before + 2, "a new malformed version is reported once more")

        try fixture.write("deny org.example.Spy\n")
        #expect(!file.current().decide(spy, userAction: true, hasForegroundScene: false).isAllowed)
    }

    @Test func unreadableContentIsAnError() throws {
        let fixture = try Fixture()
        let file = fixture.watcher()
        try Data([0x61, 0x6C, 0x6C, 0x6F, 0x77, 0x20, 0xFF, 0xFE]).write(to: URL(fileURLWithPath: fixture.path))
        #expect(file.current().rules.isEmpty)
        #expect(fixture.logged() == ["warning: paste policy: \(fixture.path): not UTF-8 text; keeping the rules in force"])
        try FileManager.default.createDirectory(atPath: fixture.directory + "/dir", withIntermediateDirectories: false)
        let directoryWatcher = PastePolicyFile(path: fixture.directory + "/dir", logger: CapturedLog().logger())
        #expect(directoryWatcher.current().rules.isEmpty, "a directory is not a policy; the default stays")
    }

    @Test func aWatchedFileIsLookedAtOnlyWhenItsPathChanges() throws {
        let fixture = try Fixture()
        let file = fixture.watcher()
        try fixture.write("allow org.example.Spy\n")
        for _ in 0..<5 { #expect(file.current().decide(spy, userAction: false, hasForegroundScene: false).isAllowed) }
        #expect(file.looks == (1, true), "looked at once, then watched")

        // Other entries of the folder and of the folders above are not the policy's business.
        try Data("x".utf8).write(to: URL(fileURLWithPath: fixture.directory + "/other"))
        try FileManager.default.moveItem(atPath: fixture.directory + "/other", toPath: fixture.directory + "/other2")
        try FileManager.default.removeItem(atPath: fixture.directory + "/other2")
        let sibling = fixture.directory + ".sibling"
        try Data("x".utf8).write(to: URL(fileURLWithPath: sibling))
        defer { try? FileManager.default.removeItem(atPath: sibling) }
        #expect(file.current().decide(spy, userAction: false, hasForegroundScene: false).isAllowed)
        #expect(file.looks == (1, true))

        // Rewritten in place at once, same inode and size: the event says so even when the file's
        // times cannot.
        let handle = try #require(FileHandle(forWritingAtPath: fixture.path))
        try handle.write(contentsOf: Data("deny ".utf8))  // "allow org…" → "deny  org…"
        try handle.close()
        #expect(!file.current().decide(spy, userAction: true, hasForegroundScene: false).isAllowed)
        #expect(file.looks == (2, true))
    }

    @Test func aFolderOnTheWayRenamedOrReplacedIsSeen() throws {
        let fixture = try Fixture()
        let root = fixture.directory
        try fixture.write("allow org.example.Spy\n", in: "config/ferry")
        let file = PastePolicyFile(path: root + "/config/ferry/paste-policy", logger: fixture.log.logger())
        #expect(file.current().decide(spy, userAction: false, hasForegroundScene: false).isAllowed)

        try FileManager.default.moveItem(atPath: root + "/config", toPath: root + "/config.old")
        #expect(file.current().rules.isEmpty, "the folder moved away: no file at the path, the default policy")
        try fixture.write("ask org.example.Spy\n", in: "config/ferry")
        #expect(file.current().rules.count == 1, "a new folder and file made at the path")

        try fixture.write("deny org.example.Spy\n", in: "elsewhere/ferry")
        try FileManager.default.removeItem(atPath: root + "/config")
        try FileManager.default.moveItem(atPath: root + "/elsewhere", toPath: root + "/config")
        #expect(!file.current().decide(spy, userAction: true, hasForegroundScene: false).isAllowed,
                "a folder renamed onto the path brings its policy")
        #expect(file.looks.watched)
    }

    @Test func aChangeThroughAnotherNameOfTheFileIsSeen() throws {
        let fixture = try Fixture()
        let file = fixture.watcher()
        try fixture.write("deny org.example.Spy\n")
        #expect(!file.current().decide(spy, userAction: true, hasForegroundScene: false).isAllowed)
        let other = fixture.directory + "/hard-link"
        #expect(link(fixture.path, other) == 0)
        let handle = try #require(FileHandle(forWritingAtPath: other))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data("allow org.example.Spy\n".utf8))
        try handle.close()
        #expect(file.current().decide(spy, userAction: false, hasForegroundScene: false).isAllowed)
        #expect(file.looks == (2, true))
    }

    @Test func aPathThroughASymbolicLinkIsLookedAtOnEveryCall() throws {
        let fixture = try Fixture()
        let root = fixture.directory
        try fixture.write("allow org.example.Spy\n", in: "one")
        try fixture.write("deny org.example.Spy\n", in: "two")
        #expect(symlink("one", root + "/link") == 0)
        let file = PastePolicyFile(path: root + "/link/paste-policy", logger: fixture.log.logger())
        #expect(file.current().decide(spy, userAction: false, hasForegroundScene: false).isAllowed)
        #expect(file.current().decide(spy, userAction: false, hasForegroundScene: false).isAllowed)
        #expect(file.looks == (2, false), "not watched: looked at on each call")
        #expect(fixture.logged().contains("debug: paste policy: looking at \(root)/link/paste-policy on every paste: \(root)/link is a symbolic link"))

        #expect(unlink(root + "/link") == 0 && symlink("two", root + "/link") == 0)
        #expect(!file.current().decide(spy, userAction: true, hasForegroundScene: false).isAllowed)
    }

    @Test(.enabled(if: getuid() == 0, "mounting needs root"))
    func aFileSystemMountedOverAFolderOnTheWayIsSeen() throws {
        let fixture = try Fixture()
        let root = fixture.directory
        try fixture.write("allow org.example.Spy\n", in: "config")
        try fixture.write("deny org.example.Spy\n", in: "other")
        let file = PastePolicyFile(path: root + "/config/paste-policy", logger: fixture.log.logger())
        #expect(file.current().decide(spy, userAction: false, hasForegroundScene: false).isAllowed)

        try #require(mount(root + "/other", root + "/config", nil, UInt(MS_BIND), nil) == 0, "mount: errno \(errno)")
        var mounted = true
        defer { if mounted { umount2(root + "/config", Int32(MNT_DETACH)) } }
        #expect(!file.current().decide(spy, userAction: true, hasForegroundScene: false).isAllowed,
                "the mounted folder's policy")
        #expect(umount2(root + "/config", 0) == 0)
        mounted = false
        #expect(file.current().decide(spy, userAction: false, hasForegroundScene: false).isAllowed)
        #expect(file.looks.watched)
    }

    @Test func aHomePathIsShownWithATilde() {
        let file = PastePolicyFile(path: NSHomeDirectory() + "/.config/ferry/paste-policy", logger: CapturedLog().logger())
        #expect(file.displayPath == "~/.config/ferry/paste-policy")
    }
}
