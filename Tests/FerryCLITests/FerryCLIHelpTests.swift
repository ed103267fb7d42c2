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
              (["copy", "--help"], "ferry-copy.help.txt"),
              (["paste", "--help"], "ferry-paste.help.txt"),
              (["types", "--help"], "ferry-types.help.txt"),
              (["detect", "--help"], "ferry-detect.help.txt"),
              (["watch", "--help"], "ferry-watch.help.txt"),
              (["history", "--help"], "ferry-history.help.txt"),
              (["history", "list", "--help"], "ferry-history-list.help.txt"),
              (["history", "show", "--help"], "ferry-history-show.help.txt"),
              (["history", "restore", "--help"], "ferry-history-restore.help.txt"),
              (["history", "delete", "--help"], "ferry-history-delete.help.txt"),
              (["history", "clear", "--help"], "ferry-history-clear.help.txt"),
              (["clear", "--help"], "ferry-clear.help.txt"),
              (["log", "--help"], "ferry-log.help.txt"),
              (["pasteboards", "--help"], "ferry-pasteboards.help.txt"),
              (["pasteboards", "list", "--help"], "ferry-pasteboards-list.help.txt"),
              (["pasteboards", "remove", "--help"], "ferry-pasteboards-remove.help.txt"),
              (["bridge", "--help"], "ferry-bridge.help.txt"),
              (["bridge", "status", "--help"], "ferry-bridge-status.help.txt"),
              (["policy", "--help"], "ferry-policy.help.txt"),
              (["policy", "pending", "--help"], "ferry-policy-pending.help.txt"),
              (["policy", "allow", "--help"], "ferry-policy-allow.help.txt"),
              (["policy", "deny", "--help"], "ferry-policy-deny.help.txt"),
              (["activities", "--help"], "ferry-activities.help.txt"),
              (["continue", "--help"], "ferry-continue.help.txt"),
              (["continuity", "--help"], "ferry-continuity.help.txt"),
              (["continuity", "status", "--help"], "ferry-continuity-status.help.txt"),
              (["continuity", "init", "--help"], "ferry-continuity-init.help.txt"),
              (["continuity", "join", "--help"], "ferry-continuity-join.help.txt"),
              (["continuity", "approve", "--help"], "ferry-continuity-approve.help.txt"),
              (["continuity", "devices", "--help"], "ferry-continuity-devices.help.txt"),
              (["continuity", "revoke", "--help"], "ferry-continuity-revoke.help.txt"),
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
        for line in ["0   success", "1   error", "2   not found", "3   permission denied", "4   unavailable", "5   timeout",
                     "64  usage error", "69  no broker"] {
            #expect(help.contains(line), "missing: \(line)")
        }
    }
}
