import FerryTestSupport
import Foundation
import Testing

/// Reading, listing, clearing and watching a named pasteboard never creates it; writing does.
@Suite("ferry: reading never creates a pasteboard")
struct ReadNeverCreatesTests {
    @Test("paste, types, clear and watch -p on a missing pasteboard exit 2 and leave nothing behind",
          arguments: [["paste", "-p", "typo"], ["paste", "--pasteboard=typo", "--type", "public.plain-text"],
                      ["paste", "-p", "typo", "-o", "/dev/null"], ["types", "-p", "typo"],
                      ["types", "--json", "-p", "typo"], ["clear", "-p", "typo"], ["watch", "-p", "typo"]])
    func readersDoNotCreate(_ arguments: [String]) async throws {
        try await CLIBroker.with { (broker: CLIBroker) async throws in
            let result = try await broker.ferry(arguments, timeout: .seconds(15))
            #expect(result.status == 2, "\(arguments): \(result.summary)")
            #expect(result.stderr == "ferry: no pasteboard named 'typo'\n", "\(arguments)")
            #expect(result.standardOutput.isEmpty)
            #expect(try await broker.ferry("pasteboards").stdout == "general\n", "\(arguments) created a pasteboard")
        }
    }

    @Test("copy -p creates the pasteboard; then reading it works and it stays after clear")
    func writersCreate() async throws {
        try await CLIBroker.with { (broker: CLIBroker) async throws in
            #expect(try await broker.ferry("copy", "-p", "notes", "--text", "hello").succeeded)
            #expect(try await broker.ferry("pasteboards").stdout == "general\nnotes\n")
            #expect(try await broker.ferry("paste", "-p", "notes").stdout == "hello")
            #expect(try await broker.ferry("types", "-p", "notes").stdout.contains("public.utf8-plain-text"))
            #expect(try await broker.ferry("clear", "-p", "notes").succeeded)
            #expect(try await broker.ferry("pasteboards").stdout == "general\nnotes\n")
        }
    }
}
