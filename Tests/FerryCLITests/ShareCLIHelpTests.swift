import Foundation
import Testing

@Suite("ferry share --help golden")
struct ShareCLIHelpTests {
    @Test("ferry share --help matches Fixtures/cli/ferry-share.help.txt (FERRY_UPDATE_GOLDENS=1 regenerates)")
    func help() throws {
        let result = try FerryCLI.runArray(["share", "--help"])
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        try Goldens.check(result.stdout, against: "ferry-share.help.txt")
    }

    @Test("the root help lists share and says what statuses 0, 1, 2 and 4 mean for it")
    func rootHelp() throws {
        let help = try FerryCLI.run("--help").stdout
        #expect(help.contains("\n  share "), "missing subcommand: share")
        let flat = help.replacingOccurrences(of: "\n      ", with: " ")
        for status in ["'share': the activity completed", "'share': the activity did not complete",
                       "app or scene session or activity for the items ('share')", "a share's activity app went away before it completed"] {
            #expect(flat.contains(status), "missing: \(status)")
        }
        let share = try FerryCLI.run("share", "--help").stdout.replacingOccurrences(of: "\n", with: " ")
        for status in ["Exit status 0 when the activity completed", "1 when it did not", "2 for an activity that is unknown",
                       "4 when the activity's app went away", "64 for bad arguments"] {
            #expect(share.contains(status), "missing: \(status)")
        }
    }
}
