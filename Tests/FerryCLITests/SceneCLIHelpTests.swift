import Testing

@Suite("ferry apps/scenes/scene/desktop --help goldens")
struct SceneCLIHelpTests {
    @Test("help text of the scene commands matches Fixtures/cli (FERRY_UPDATE_GOLDENS=1 regenerates)",
          arguments: [
              (["apps", "--help"], "ferry-apps.help.txt"),
              (["scenes", "--help"], "ferry-scenes.help.txt"),
              (["scene", "--help"], "ferry-scene.help.txt"),
              (["scene", "open", "--help"], "ferry-scene-open.help.txt"),
              (["scene", "activate", "--help"], "ferry-scene-activate.help.txt"),
              (["scene", "refresh", "--help"], "ferry-scene-refresh.help.txt"),
              (["scene", "close", "--help"], "ferry-scene-close.help.txt"),
              (["desktop", "--help"], "ferry-desktop.help.txt"),
          ])
    func help(arguments: [String], golden: String) throws {
        let result = try FerryCLI.runArray(arguments)
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        try Goldens.check(result.stdout, against: golden)
    }

    @Test("the root help lists the scene commands and what status 1, 2 and 64 mean for them")
    func rootHelp() throws {
        let help = try FerryCLI.run("--help").stdout
        for command in ["apps", "scenes", "scene", "desktop"] {
            #expect(help.contains("\n  \(command) "), "missing subcommand: \(command)")
        }
        #expect(help.contains("'scene open': the app"))
        #expect(help.contains("'paste --into': the scene declined"))
        #expect(help.contains("app or scene session"))
        #expect(help.contains("session prefix shorter than 4 characters"))
        #expect(try FerryCLI.run("paste", "--help").stdout.contains("--into <app[/session]>"))
    }
}
