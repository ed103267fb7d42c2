import ArgumentParser
import FerryTerminal

@main
struct Ferry: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ferry",
        abstract: "Move items between apps.",
        discussion: """
            EXIT STATUS
              0   success (for 'type conforms': the type conforms; 'drag': the drop
                  transferred the items or opened a scene; 'share': the activity
                  completed)
              1   error: the bus or the broker failed, reading or writing failed
                  ('type conforms': the type does not conform; 'scene open': the app
                  supports only one scene; 'paste --into': the scene declined;
                  'drag': the drop ended as cancel or forbidden; 'share': the
                  activity did not complete)
              2   not found: nothing to paste, drag or share, nothing conforming to
                  the type, no such item, history entry, pasteboard, app or scene session
                  or activity for the items ('share'), no such pending paste consent
                  request ('policy'); an unknown or invalid type, MIME
                  type or extension; a file that cannot be read
              3   permission denied by the broker (paste policy) or by the bus
              4   unavailable: the app that promised the data went away first; the app
                  shows no scenes or the scene is not connected ('scene', 'paste --into',
                  'drag', 'share'); a drag's source app went away before the drop; a
                  share's activity app went away before it completed; a file changed
                  while it was copied, or a --lazy copy's file was edited or removed;
                  the device whose activity is continued is gone ('continue')
              5   timeout: the source sent nothing for too long, or an app did not
                  answer a scene request, a paste into its scene, a drag or a share
                  in time; the bus gave up waiting for a reply
              64  usage error: bad or missing arguments, a bad pasteboard name, a
                  session prefix shorter than 4 characters or matching several, an
                  app name several apps share, a 'help' topic that is no command
              69  no broker: no bus, or org.ferry.Broker neither running nor activatable

            Errors are reported as one line on standard error; a usage error ends
            with the help to read: (see 'ferry paste --help').
            """,
        subcommands: [
            CopyCommand.self, PasteCommand.self, TypesCommand.self, DetectCommand.self, WatchCommand.self, HistoryCommand.self,
            ClearCommand.self, LogCommand.self, PasteboardsCommand.self, TypeCommand.self,
            AppsCommand.self, ScenesCommand.self, SceneCommand.self, DesktopCommand.self, DragCommand.self,
            ShareCommand.self, BridgeCommand.self, PolicyCommand.self, ActivitiesCommand.self, ContinueCommand.self,
            ContinuityCommand.self,
        ])

    /// `--version` on the root only: ArgumentParser's own version flag would be offered (and
    /// listed in the help) on every subcommand.
    @Flag(help: "Show the version.")
    var version = false

    /// `ferry --version` prints `ferry NUMBER`; `ferry` alone, the help.
    mutating func run() async throws {
        guard version else { throw CleanExit.helpRequest(self) }
        print(FerryVersion.line(for: "ferry"))
    }

    /// Parses the command line, runs the command, and reports what it threw
    /// (``exit(reporting:arguments:)``): commands throw, the root alone prints errors and picks
    /// the exit status.
    static func main() async {
        // Arguments that are not UTF-8 keep their bytes (file names are bytes): see RawArguments.
        let arguments = Array(RawArguments.load().dropFirst())
        do {
            try UsageError.checkHelpTopic(arguments)
            var command = try parseAsRoot(arguments)
            if var asynchronous = command as? any AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
        } catch {
            exit(reporting: error, arguments: arguments)
        }
    }
}
