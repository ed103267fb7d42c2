import ArgumentParser
import FerryModel
import FerryTestSupport
import Foundation
import Testing
@testable import ferry
@testable import ferry_front

/// `ferry copy --text` and `ferry copy -t TYPE` of standard input are done by the front
/// (`PlainCopy`), everything else by `ferry-cli`. Whatever the front takes must end exactly as
/// `ferry-cli` ends it: the same status, output and error line, and the same items, history and
/// pasteboards in the broker. Two brokers are fed the same command lines, one through the front,
/// one through `ferry-cli`, and compared after each.
@Suite("ferry copy: the front's plain copies are ferry-cli's", .serialized)
struct FrontCopyTests {
    /// Arguments after `copy`, whether the front parses them itself, whether ferry-cli accepts them.
    static let table: [(arguments: [String], front: Bool, cli: Bool)] = [
        (["--text", "x"], true, true),
        (["--text", ""], true, true),
        (["--text", "-"], true, true),
        (["--text", "x", "-t", "public.html"], true, true),
        (["--text", "x", "--type", "TEXT"], true, true),
        (["-t", "text"], true, true),
        (["--type", "public.data"], true, true),
        (["-t", "public.plain-text", "-p", "notes.v2", "--local-only", "--sensitive"], true, true),
        (["--pasteboard", "general", "--text", "x"], true, true),
        (["--bus", "BUS", "--text", "x"], true, true),
        // Left to ferry-cli, which accepts them.
        ([], false, true),
        (["-"], false, true),
        (["file.txt"], false, true),
        (["-t", "image"], false, true),
        (["-t", "text/html"], false, true),
        (["--text=x"], false, true),
        (["--text", "x", "-v"], false, true),
        (["--text", "x", "--json"], false, true),
        (["--text", "x", "--lazy"], false, true),
        (["--text", "x", "--paste-once"], false, true),
        (["--text", "x", "--expires", "5"], false, true),
        (["--text", "x", "--primary"], false, true),
        (["--rep", "public.data=-"], false, true),
        (["--text", "x", "-p", "bad name"], false, true),
        (["--text", "x", "--bus", ""], false, true),
        (["--text", "x", "--local-only", "--local-only"], false, true),
        (["--text", "a", "--text", "b"], false, true),
        (["-t", "com.example.unknown"], false, true),
        // Left to ferry-cli, which refuses them (status 64).
        (["--text"], false, false),
        (["--text", "x", "file.txt"], false, false),
        (["--text", "x", "--primary", "-p", "notes"], false, false),
        (["--bogus"], false, false),
    ]

    @Test("the table: the front takes a command line only when ferry-cli does, meaning the same copy")
    func table() throws {
        for row in Self.table {
            let arguments = row.arguments.map { $0 == "BUS" ? "unix:path=/nonexistent/ferry-parsers" : $0 }
            let front = PlainCopy(arguments: (["copy"] + arguments)[...])
            #expect((front != nil) == row.front, "\(row.arguments): the front \(front == nil ? "declines" : "parses")")
            let accepted = (try? CopyCommand.parse(arguments)) != nil
            #expect(accepted == row.cli, "\(row.arguments): ferry-cli \(accepted ? "accepts" : "refuses")")
            try Self.expectSameMeaning(arguments)
        }
    }

    @Test("every command line of up to four words from what copy takes: the front never takes more than ferry-cli")
    func combinations() throws {
        let words = ["--text", "x", "-", "-t", "text", "public.png", "text/plain", "-p", "notes", "bad name", "--local-only",
                     "--sensitive", "--bus", "--primary", "-v"]
        var lines: [[String]] = [[]]
        var frontier: [[String]] = [[]]
        for _ in 1...4 {
            frontier = frontier.flatMap { line in words.map { line + [$0] } }
            lines += frontier
        }
        var parsedByFront = 0
        for arguments in lines where PlainCopy(arguments: (["copy"] + arguments)[...]) != nil {
            parsedByFront += 1
            try Self.expectSameMeaning(arguments)
        }
        #expect(parsedByFront > 100, "\(parsedByFront)")
    }

    /// When the front parses `arguments` (after `copy`), ferry-cli parses them too, into the same
    /// copy: one item from the same text (or standard input), the same type sent, pasteboard,
    /// flags and bus, and none of what the front does not do.
    static func expectSameMeaning(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
        guard let front = PlainCopy(arguments: (["copy"] + arguments)[...]) else { return }
        let command: CopyCommand
        do {
            command = try CopyCommand.parse(arguments)
        } catch {
            Issue.record("the front parses \(arguments), ferry-cli refuses: \(CopyCommand.message(for: error))", sourceLocation: sourceLocation)
            return
        }
        #expect(command.files.isEmpty && command.representations.isEmpty && !command.primary && command.expires == nil
                && !command.lazy && !command.pasteOnce && !command.verbose && !command.json, "\(arguments)", sourceLocation: sourceLocation)
        let board = command.pasteboard.name ?? PasteboardName.general
        #expect(front.pasteboard == board && (try? PasteboardName.validate(board)) != nil, "\(arguments)", sourceLocation: sourceLocation)
        #expect(front.localOnly == command.localOnly && front.sensitive == command.sensitive, "\(arguments)", sourceLocation: sourceLocation)
        #expect(front.bus == command.bus.bus, "\(arguments)", sourceLocation: sourceLocation)
        switch front.source {
        case .text(let text): #expect(command.text == text, "\(arguments)", sourceLocation: sourceLocation)
        case .standardInput: #expect(command.text == nil, "\(arguments)", sourceLocation: sourceLocation)
        }
        // ferry-cli labels the data with the type --type names exactly (no sniffing), or text.
        let written = try command.type.map { try WrittenType(argument: $0) }
        if written == nil { #expect(command.text != nil, "\(arguments)", sourceLocation: sourceLocation) }
        let sent = written.map { $0.exact?.identifier } ?? ContentType.utf8PlainText.identifier
        #expect(sent != nil && front.type ?? ContentType.utf8PlainText.identifier == sent, "\(arguments)", sourceLocation: sourceLocation)
    }

    // MARK: - Through the executables, on two brokers

    /// A command line for both paths: the arguments (`BUS` is the broker's address), standard input.
    private struct Run {
        var arguments: [String]
        var stdin: Data?
        /// The front copies it by itself (proved by a front with no ferry-cli beside it).
        var front: Bool
    }

    private static var runs: [Run] {
        let long = String(repeating: "twenty kibibytes of text, ", count: 800)
        return [
            Run(arguments: ["copy", "--text", "héllo\twörld\r\n ✓ \u{1}end\n"], front: true),
            Run(arguments: ["copy", "--text", ""], front: true),
            Run(arguments: ["copy", "--text", "-"], front: true),
            Run(arguments: ["copy", "--text", "<b>bold</b>", "-t", "public.html"], front: true),
            Run(arguments: ["copy", "--text", long], front: true),
            Run(arguments: ["copy", "-t", "text"], stdin: Data("piped text\n".utf8), front: true),
            Run(arguments: ["copy", "-t", "text"], stdin: Data(), front: true),
            Run(arguments: ["copy", "--type", "public.data"], stdin: Data(count: 16 << 10), front: true),
            Run(arguments: ["copy", "--type", "public.data"], stdin: noise(300 << 10, seed: 9), front: true),
            Run(arguments: ["copy", "--sensitive", "--text", "secret"], front: true),
            Run(arguments: ["copy", "-t", "public.plain-text", "-p", "notes.v2", "--local-only"], stdin: Data("named\n".utf8), front: true),
            Run(arguments: ["copy", "--bus", "BUS", "--text", "by address"], front: true),
            Run(arguments: ["copy"], stdin: Data("<p>sniffed</p>\n".utf8), front: false),
            Run(arguments: ["copy", "-t", "text/html"], stdin: Data("<p>mime</p>\n".utf8), front: false),
            Run(arguments: ["copy", "--json", "--text", "json"], front: false),
            Run(arguments: ["copy", "-v", "--text", "verbose"], front: false),
            Run(arguments: ["copy", "--primary", "--text", "primary"], front: false),
            Run(arguments: ["copy", "-p", "bad name", "--text", "x"], front: false),
            Run(arguments: ["copy", "--text", "after everything"], front: true),
        ]
    }

    @Test("the front's copies and ferry-cli's: the same status, output, items, history and pasteboards")
    func sameResults() async throws {
        try await CLIBroker.with { viaFront in
            try await CLIBroker.with { viaCLI in
                #expect(try await viaFront.ferry("copy", "--text", "seed").succeeded)
                #expect(try await viaCLI.ferry("copy", "--text", "seed").succeeded)
                for run in Self.runs {
                    let frontArguments = run.arguments.map { $0 == "BUS" ? viaFront.bus.address : $0 }
                    if !run.front {
                        // Handed over: a front alone cannot run it, and has changed nothing.
                        let alone = try await ChildProcess.run(try alone(viaFront), frontArguments, environment: viaFront.environment,
                                                               standardInput: run.stdin)
                        #expect(alone.status == 1 && alone.stderr.contains("cannot run") && alone.stderr.contains("ferry-cli"),
                                "\(run.arguments): \(alone.summary)")
                    }
                    let front = run.front
                        ? try await ChildProcess.run(try alone(viaFront), frontArguments, environment: viaFront.environment,
                                                     standardInput: run.stdin)
                        : try await viaFront.ferry(frontArguments, stdin: run.stdin)
                    let cli = try await ChildProcess.run(try fullCLI(), run.arguments.map { $0 == "BUS" ? viaCLI.bus.address : $0 },
                                                         environment: viaCLI.environment, standardInput: run.stdin)
                    #expect(front.status == cli.status && front.standardOutput == cli.standardOutput && front.stderr == cli.stderr,
                            "\(run.arguments): \(front.summary) vs \(cli.summary)")
                    let frontState = try await state(of: viaFront)
                    let cliState = try await state(of: viaCLI)
                    #expect(frontState == cliState, "\(run.arguments):\n\(frontState)\nvs\n\(cliState)")
                }
            }
        }
    }

    @Test("a write the broker refuses after standard input was read: the front says what ferry-cli says, by itself")
    func refusedAfterReading() async throws {
        try await CLIBroker.with(ferrydArguments: ["--disk-budget", "64K"]) { viaFront in
            try await CLIBroker.with(ferrydArguments: ["--disk-budget", "64K"]) { viaCLI in
                let data = noise(200 << 10, seed: 3)
                for broker in [viaFront, viaCLI] { #expect(try await broker.ferry("copy", "--text", "kept").succeeded) }
                let front = try await ChildProcess.run(try alone(viaFront), ["copy", "-t", "public.data"], environment: viaFront.environment,
                                                       standardInput: data)
                let cli = try await ChildProcess.run(try fullCLI(), ["copy", "-t", "public.data"], environment: viaCLI.environment,
                                                     standardInput: data)
                #expect(front.status != 0 && front.status == cli.status && front.stderr == cli.stderr && front.standardOutput.isEmpty,
                        "\(front.summary) vs \(cli.summary)")
                #expect(try await viaFront.ferry("paste").standardOutput == Data("kept".utf8))
                #expect(try await state(of: viaFront) == state(of: viaCLI))
            }
        }
    }

    @Test("standard input from a file goes to ferry-cli before a byte is read")
    func standardInputHandedOver() async throws {
        try await CLIBroker.with { broker in
            let file = try broker.file("input.txt", Data("from a file\n".utf8))
            // A regular file as standard input (ferry-cli passes it on as a file).
            let script = "exec \"$0\" copy -t text < \"$1\""
            let alone = try await ChildProcess.run("/bin/sh", ["-c", script, try alone(broker), file.path], environment: broker.environment)
            #expect(alone.status == 1 && alone.stderr.contains("cannot run"), "\(alone.summary)")
            let front = try await ChildProcess.run("/bin/sh", ["-c", script, try FerryCLI.binary().path, file.path], environment: broker.environment)
            #expect(front.succeeded, "\(front.summary)")
            #expect(try await broker.ferry("paste").standardOutput == Data("from a file\n".utf8))
        }
    }

    /// What a user can see of a broker: the types of `general` and `notes.v2` (item ids and
    /// times left out: they differ between brokers), their content and the history.
    private func state(of broker: CLIBroker) async throws -> String {
        var lines: [String] = []
        for board in ["general", "notes.v2"] {
            let types = try await broker.ferry("types", "--json", "-p", board)
            lines.append("types \(board): \(types.status) \(normalized(types.standardOutput)) \(types.stderr)")
            let pasted = try await broker.ferry("paste", "-p", board)
            lines.append("paste \(board): \(pasted.status) \(pasted.standardOutput.base64EncodedString()) \(pasted.stderr)")
        }
        let history = try await broker.ferry("history", "--json")
        lines.append("history: \(history.status) \(normalized(history.standardOutput)) \(history.stderr)")
        return lines.joined(separator: "\n")
    }

    /// JSON with the keys that differ between two brokers for the same writes removed.
    private func normalized(_ json: Data) -> String {
        func strip(_ value: Any) -> Any {
            if let object = value as? [String: Any] {
                return object.filter { !["id", "replacedAt", "sourceAppID"].contains($0.key) }.mapValues(strip)
            }
            if let array = value as? [Any] { return array.map(strip) }
            return value
        }
        guard let object = try? JSONSerialization.jsonObject(with: json),
              let data = try? JSONSerialization.data(withJSONObject: strip(object), options: [.sortedKeys]) else {
            return String(decoding: json, as: UTF8.self)
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// A copy of the front with no `ferry-cli` beside it (shared by the tests of this suite).
    private func alone(_ broker: CLIBroker) throws -> String {
        let copy = broker.folder.appendingPathComponent("alone/ferry")
        if !FileManager.default.fileExists(atPath: copy.path) {
            try FileManager.default.createDirectory(at: copy.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: try FerryCLI.binary(), to: copy)
        }
        return copy.path
    }

    private func fullCLI() throws -> String {
        try FerryCLI.binary().deletingLastPathComponent().appendingPathComponent("ferry-cli").path
    }
}
