import ArgumentParser
import FerryModel
import FerryTestSupport
import Foundation
import Testing
@testable import ferry
@testable import ferry_front

/// `ferry paste` is parsed in two places: the front's hand parser (`PlainPaste`: the front cannot
/// link ArgumentParser, whose start-up it exists to save) and the full CLI's `PasteCommand`,
/// through ArgumentParser alone. The front may decline a command line (it hands it to ferry-cli,
/// which parses and reports it), but whatever it takes, ferry-cli must take with the same meaning;
/// and through both executables every command line must end the same way.
@Suite("ferry paste: the front's parser and ferry-cli's agree")
struct PasteParsersTests {
    /// Arguments after `paste`, whether the front parses them itself, whether ferry-cli accepts
    /// them. `BUS` stands for the broker's bus address.
    static let table: [(arguments: [String], front: Bool, cli: Bool)] = [
        ([], true, true),
        (["-t", "public.plain-text"], true, true),
        (["--type", "public.utf8-plain-text"], true, true),
        (["-i", "0"], true, true),
        (["--item", "+0"], true, true),
        (["--item", "1"], true, true),
        (["-p", "general"], true, true),
        (["--pasteboard", "notes.v2"], true, true),
        (["--primary"], true, true),
        (["--timeout", "5", "-i", "0", "-t", "public.text"], true, true),
        (["--bus", "BUS"], true, true),
        (["--bus", "-"], true, true),
        // Left to ferry-cli, which accepts them.
        (["-t", "text/plain"], false, true),
        (["--type=public.plain-text"], false, true),
        (["-i", "1", "-i", "0"], false, true),
        (["-o", "-"], false, true),
        (["--list-types"], false, true),
        (["-l"], false, true),
        (["--force"], false, true),
        (["-t", "com.example.unknown"], false, true),
        (["-p", "bad name"], false, true),
        (["--bus", ""], false, true),
        (["--primary", "--primary"], false, true),
        // Left to ferry-cli, which refuses them (status 64).
        (["-t"], false, false),
        (["-i", "-1"], false, false),
        (["-i", "x"], false, false),
        (["-i", "0x1"], false, false),
        (["--timeout", "0"], false, false),
        (["--timeout", "1e3"], false, false),
        (["--primary", "-p", "notes.v2"], false, false),
        (["extra"], false, false),
        (["--", "-i"], false, false),
        (["--into", "org.ferry.notes/"], false, false),
        (["--into", "org.ferry.notes", "-i", "1"], false, false),
        (["-l", "-t", "public.text"], false, false),
        (["--bogus"], false, false),
    ]

    @Test("the table: the front takes a command line only when ferry-cli does, meaning the same paste")
    func table() throws {
        for row in Self.table {
            let arguments = row.arguments.map { $0 == "BUS" ? "unix:path=/nonexistent/ferry-parsers" : $0 }
            let front = PlainPaste(arguments: (["paste"] + arguments)[...])
            let cli = Result { try PasteCommand.parse(arguments) }
            #expect((front != nil) == row.front, "\(row.arguments): the front \(front == nil ? "declines" : "parses")")
            let accepted = (try? cli.get()) != nil
            #expect(accepted == row.cli, "\(row.arguments): ferry-cli \(accepted ? "accepts" : "refuses")")
            try Self.expectSameMeaning(arguments)
        }
    }

    @Test("every command line of up to four words from what paste takes: the front never takes more than ferry-cli")
    func combinations() throws {
        // Short forms only (the table has the long ones): 15 words, about 54,000 command lines.
        let words = ["-t", "public.png", "text/plain", "-i", "0", "-1", "-p", "notes", "bad name", "--primary", "--timeout", "5",
                     "--bus", "-", "--"]
        var lines: [[String]] = [[]]
        var frontier: [[String]] = [[]]
        for _ in 1...4 {
            frontier = frontier.flatMap { line in words.map { line + [$0] } }
            lines += frontier
        }
        var parsedByFront = 0
        for arguments in lines where PlainPaste(arguments: (["paste"] + arguments)[...]) != nil {
            parsedByFront += 1
            try Self.expectSameMeaning(arguments)
        }
        // The rule was exercised, not vacuously true (the front parses about 190 of them).
        #expect(parsedByFront > 100, "\(parsedByFront)")
    }

    @Test("the table through `ferry` and `ferry-cli` on a real broker: the same status, output and error line")
    func executables() async throws {
        try await CLIBroker.with { broker in
            #expect(try await broker.ferry("copy", "--text", "plain text").succeeded)
            #expect(try await broker.ferry("copy", "-p", "notes.v2", "--text", "named").succeeded)
            let fullCLI = try FerryCLI.binary().deletingLastPathComponent().appendingPathComponent("ferry-cli").path
            for row in Self.table {
                let arguments = ["paste"] + row.arguments.map { $0 == "BUS" ? broker.bus.address : $0 }
                let front = try await broker.ferry(arguments)
                let cli = try await ChildProcess.run(fullCLI, arguments, environment: broker.environment)
                #expect(front.status == cli.status, "\(arguments): \(front.summary) vs \(cli.summary)")
                #expect(front.standardOutput == cli.standardOutput && front.stderr == cli.stderr,
                        "\(arguments): \(front.summary) vs \(cli.summary)")
                if !row.cli {
                    #expect(cli.status == 64 && cli.stderr.hasSuffix(" (see 'ferry paste --help')\n"), "\(arguments): \(cli.summary)")
                }
            }
        }
    }

    /// When the front parses `arguments` (after `paste`), ferry-cli parses them too, into the
    /// same plain paste: same pasteboard (a valid name), item, type sent, timeout and bus, and
    /// none of what the front does not do.
    static func expectSameMeaning(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
        guard let front = PlainPaste(arguments: (["paste"] + arguments)[...]) else { return }
        let command: PasteCommand
        do {
            command = try PasteCommand.parse(arguments)
        } catch {
            Issue.record("the front parses \(arguments), ferry-cli refuses: \(PasteCommand.message(for: error))",
                         sourceLocation: sourceLocation)
            return
        }
        #expect(command.into == nil && command.output == nil && !command.force && !command.listTypes, "\(arguments)",
                sourceLocation: sourceLocation)
        #expect(front.pasteboard == command.board, "\(arguments)", sourceLocation: sourceLocation)
        #expect((try? PasteboardName.validate(command.board)) != nil, "\(arguments)", sourceLocation: sourceLocation)
        #expect(Int(front.item) == command.item, "\(arguments)", sourceLocation: sourceLocation)
        #expect(front.timeout == command.timeout, "\(arguments)", sourceLocation: sourceLocation)
        #expect(front.bus == command.bus.bus, "\(arguments)", sourceLocation: sourceLocation)
        let sent = try command.type.map { try resolveTypeArgument($0).identifier } ?? ContentType.item.identifier
        #expect(front.type == sent, "\(arguments)", sourceLocation: sourceLocation)
    }
}
