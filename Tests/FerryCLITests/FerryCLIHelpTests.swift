import Testing

@Suite("ferry --help goldens")
struct FerryCLIHelpTests {
    @Test("help text matches Fixtures/cli (FERRY_UPDATE_GOLDENS=1 regenerates)",
          arguments: [
              (["--help"], "ferry.help.txt"),
              (["type", "--help"], "ferry-type.help.txt"),
              (["type", "info", "--help"], "ferry-type-info.help.txt"),
              (["type", "of", "--help"], "ferry-type-of.help.txt"),
              (["type", "conforms", "--help"], "ferry-type-conforms.help.txt"),
          ])
    func help(arguments: [String], golden: String) throws {
        let result = try FerryCLI.runArray(arguments)
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        try Goldens.check(result.stdout, against: golden)
    }

    @Test("the root help documents the exit codes")
    func exitCodesDocumented() throws {
        let help = try FerryCLI.run("--help").stdout
        for line in ["0   success", "1   'type conforms'", "2   error", "64  usage error"] {
            #expect(help.contains(line), "missing: \(line)")
        }
    }
}
