import Foundation
import Testing

@Suite("ferry drag --help golden")
struct DragCLIHelpTests {
    @Test("ferry drag --help matches Fixtures/cli/ferry-drag.help.txt (FERRY_UPDATE_GOLDENS=1 regenerates)")
    func help() throws {
        let result = try FerryCLI.runArray(["drag", "--help"])
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        try Goldens.check(result.stdout, against: "ferry-drag.help.txt")
    }

    @Test("the root help lists drag and says what statuses 0, 1 and 4 mean for it")
    func rootHelp() throws {
        let help = try FerryCLI.run("--help").stdout
        #expect(help.contains("\n  drag "), "missing subcommand: drag")
        #expect(help.contains("'drag': the drop\n      transferred the items or opened a scene"), "\(help)")
        #expect(help.contains("'drag': the drop ended as cancel or forbidden"))
        #expect(help.contains("a drag's source app went away before the drop"))
        let drag = try FerryCLI.run("drag", "--help").stdout
        for status in ["Exit status 0 when the drop", "1 when it ended as cancel or forbidden", "4 when the"] {
            #expect(drag.replacingOccurrences(of: "\n", with: " ").contains(status), "missing: \(status)")
        }
    }
}
