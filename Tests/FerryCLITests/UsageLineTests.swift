import FerryTestSupport
import Foundation
import Testing

/// What a person sees when a command line is wrong: one line, the documented status, words of
/// the CLI (not the broker's key paths), and apps named as `ferry apps` shows them.
@Suite("usage errors are one line; apps by display name", .serialized)
struct UsageLineTests {
    private static let noBus = ["--bus", "unix:path=/nonexistent/ferry-test"]

    /// Expects status 64 and exactly one stderr line starting `ferry: ` and containing `words`.
    private static func expectUsageLine(_ arguments: [String], _ words: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try FerryCLI.runArray(arguments)
        #expect(result.status == 64, "\(arguments): \(result.stderr)", sourceLocation: sourceLocation)
        let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 2 && lines[1].isEmpty, "\(arguments): not one line: \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.hasPrefix("ferry: ") && result.stderr.contains(words), "\(arguments): \(result.stderr)",
                sourceLocation: sourceLocation)
        #expect(result.stdout.isEmpty, "\(arguments)", sourceLocation: sourceLocation)
    }

    @Test("ArgumentParser's errors are one line naming the command's help")
    func oneLine() throws {
        try Self.expectUsageLine(["paste", "--item", "x"] + Self.noBus, "The value 'x' is invalid for '--item <n>' (see 'ferry paste --help')")
        try Self.expectUsageLine(["paste", "--bogus"], "Unknown option '--bogus'")
        try Self.expectUsageLine(["history", "restore"], "(see 'ferry history restore --help')")
        try Self.expectUsageLine(["nonsense"], "Unexpected argument 'nonsense' (see 'ferry --help')")
        try Self.expectUsageLine(["copy", "--text", "x", "--local-only", "--expires", "0"] + Self.noBus, "--expires must be")
    }

    @Test("a negative number is a value, not an option: --expires -1 says what is wrong with it; --at takes -5,10")
    func negativeNumbers() throws {
        try Self.expectUsageLine(["copy", "--text", "x", "--expires", "-1"] + Self.noBus, "--expires must be a positive number of seconds")
        try Self.expectUsageLine(["paste", "--item", "-1"] + Self.noBus, "--item must be 0 or more")
        try Self.expectUsageLine(["paste", "--timeout", "-5"] + Self.noBus, "--timeout must be at least 1")
        try Self.expectUsageLine(["log", "--limit", "-3"] + Self.noBus, "--limit")
        try Self.expectUsageLine(["drag", "--from", "a", "--at", "-20000000,0"] + Self.noBus, "The value '-20000000,0' is invalid for '--at <x,y>'")
        // In range: parsed and valid, so it gets as far as the (missing) bus.
        let drag = try FerryCLI.runArray(["drag", "--from", "a", "--at", "-5,10", "--via", "-1,-2"] + Self.noBus)
        #expect(drag.status == 69, "\(drag.stderr)")
    }

    @Test("ferry help TOPIC: an unknown topic is a usage error, a known one is help")
    func helpTopics() throws {
        try Self.expectUsageLine(["help", "nonsense"], "'ferry nonsense' is no command")
        try Self.expectUsageLine(["help", "scene", "nonsense"], "'ferry scene nonsense' is no command; there are: open, activate")
        let known = try FerryCLI.run("help", "scene", "open")
        #expect(known.status == 0 && known.stdout.contains("USAGE: ferry scene open"), "\(known.stderr)")
    }

    @Test("the broker's key paths become the CLI's words: options.app goes, options.to is --to")
    func keyPaths() async throws {
        try await CLIBroker.with { broker in
            let drag = try await broker.ferry("drag", "--app", "org.ferry.nowhere", "--edge", "left")
            #expect(drag.status == 2, "\(drag.summary)")
            #expect(drag.stderr == "ferry: no app org.ferry.nowhere has ever registered with scenes\n", "\(drag.stderr)")

            let target = broker.folder.appendingPathComponent("real")
            try FileManager.default.createDirectory(at: target, withIntermediateDirectories: false)
            let link = broker.folder.appendingPathComponent("link")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
            let file = try broker.file("a.txt", Data("a".utf8))
            let share = try await broker.ferry("share", file.path, "--activity", "save-to-folder", "--to", link.path)
            #expect(share.status == 64, "\(share.summary)")
            #expect(share.stderr.hasPrefix("ferry: --to: ") && share.stderr.contains("is a symbolic link"), "\(share.stderr)")
            #expect(!share.stderr.contains("options."))
        }
    }

    @Test("an app's display name works where its id does; a name two apps share is a usage error naming both")
    func displayNames() async throws {
        try await CLIBroker.with { broker in
            let notes = try await SceneApp.start(broker, manifest: SceneApp.notes, ["--accept-paste"])
            defer { notes.stop() }
            #expect(try await eventually { try await broker.scenes().count == 1 })

            let opened = try await broker.ferry("scene", "open", "Notes")
            #expect(opened.status == 0, "\(opened.summary)")
            #expect(try await broker.scenes(app: "Notes").count == 2)
            #expect(try await broker.scenes(app: "notes").count == 2, "ASCII case is ignored when no name matches exactly")

            #expect(try await broker.ferry("copy", "--text", "milk").succeeded)
            let pasted = try await broker.ferry("paste", "--into", "Notes")
            #expect(pasted.status == 0 && pasted.stdout.hasPrefix("accepted: "), "\(pasted.summary)")

            let dragged = try await broker.ferry("drag", "--from", "Notes", "--to", "Notes", "--text", "x")
            #expect(dragged.status != 2 && dragged.status != 64, "\(dragged.summary)")
            #expect(!dragged.stderr.contains("no scene of"), "\(dragged.stderr)")
            let shared = try await broker.ferry("share", "--from", "Notes", "--list")
            #expect(!shared.stderr.contains("no scene of") && shared.status != 64, "\(shared.summary)")

            // A second app called Notes: the name no longer says which.
            let single = try await SceneApp.start(broker, manifest: try SceneApp.singleSceneManifest(in: broker.folder))
            defer { single.stop() }
            #expect(try await eventually { try await broker.scenes().count == 3 })
            let ambiguous = try await broker.ferry("scene", "open", "Notes")
            #expect(ambiguous.status == 64, "\(ambiguous.summary)")
            #expect(ambiguous.stderr == "ferry: 'Notes' is the name of 2 apps: org.ferry.notes, org.ferry.single; give one's app id\n",
                    "\(ambiguous.stderr)")
            // The id still works.
            #expect(try await broker.ferry("scenes", "--app", "org.ferry.single").status == 0)
        }
    }
}
