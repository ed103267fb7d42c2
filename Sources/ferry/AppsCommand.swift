import ArgumentParser
import FerryModel

/// `ferry apps`: the apps registered with the broker.
struct AppsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps",
        abstract: "List the running apps registered with the broker.",
        discussion: """
            One line per app, sorted by app id: its id, name, state (its highest scene state: \
            foregroundActive, foregroundInactive, background, or unattached without connected \
            scenes), how many scenes it has connected, and its process id.

            JSON keys: apps (array of objects with appID, name, state, scenes, pid, showsScenes, \
            supportsMultipleScenes).
            """)

    @Flag(name: .long, help: "Print one JSON object (keys are listed in the discussion).")
    var json = false

    @OptionGroup var bus: BusOptions

    struct Report: Encodable {
        var apps: [SceneCommand.App]
    }

    func run() async throws {
        let apps = try await SceneCommand.Broker.connect(bus).apps()
        if json {
            return try printJSON(Report(apps: apps))
        }
        if apps.isEmpty { return }
        let rows = [["APP", "NAME", "STATE", "SCENES", "PID"]]
            + apps.map {
                [$0.appID, $0.name.isEmpty ? "-" : $0.name.printableLine(limit: tableTitleLimit), $0.state, String($0.scenes),
                 String($0.pid)]
            }
        try writeOut(formatTable(rows))
    }
}
