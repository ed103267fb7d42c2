import ArgumentParser
import Ferry
import FerryModel
import FerryTerminal

/// `ferry activities`: what the user's other devices are doing that an app here can continue
/// (Handoff).
struct ActivitiesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "activities",
        abstract: "List activities of your other devices that an app here can continue (Handoff).",
        discussion: """
            One line per activity that another device of yours advertises (ferryd with \
            continuity on, see docs/continuity.md) and that an app here declares in \
            NSUserActivityTypes: the name to give 'ferry continue' (DEVICE/ID), the source \
            app, the activity type, the apps here that can continue it (the first is the \
            default) and the title. Nothing is printed when there is none, or when continuity \
            is off. The activity's userInfo stays on its device until it is continued.

            JSON keys: activities (array of objects with activity, device, app, activityType, \
            title (string or null), targetContentIdentifier (string or null), apps, expires \
            (seconds since 1970)).
            """)

    @Flag(name: .long, help: "Print one JSON object (keys are listed in the discussion).")
    var json = false

    @OptionGroup var bus: BusOptions

    struct Entry: Encodable {
        var activity: String
        var device: String
        var app: String
        var activityType: String
        var title: String?
        var targetContentIdentifier: String?
        var apps: [String]
        var expires: Double

        init(_ activity: HandoffActivity) {
            self.activity = activity.identifier
            device = activity.device
            app = activity.sourceApp
            activityType = activity.activityType
            title = activity.title
            targetContentIdentifier = activity.targetContentIdentifier
            apps = activity.apps
            expires = Double(activity.expirationMicroseconds) / 1_000_000
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(activity, forKey: .activity)
            try c.encode(device, forKey: .device)
            try c.encode(app, forKey: .app)
            try c.encode(activityType, forKey: .activityType)
            try c.encode(title, forKey: .title)
            try c.encode(targetContentIdentifier, forKey: .targetContentIdentifier)
            try c.encode(apps, forKey: .apps)
            try c.encode(expires, forKey: .expires)
        }

        enum CodingKeys: String, CodingKey { case activity, device, app, activityType, title, targetContentIdentifier, apps, expires }
    }

    struct Report: Encodable {
        var activities: [Entry]
    }

    func run() async throws {
        let broker = try await SceneCommand.Broker.connect(bus)
        let activities = try await broker.client.remoteActivities().map(Entry.init)
        if json { return try printJSON(Report(activities: activities)) }
        if activities.isEmpty { return }
        let rows = [["ACTIVITY", "APP", "TYPE", "CONTINUE IN", "TITLE"]]
            + activities.map {
                [$0.activity, $0.app, $0.activityType, $0.apps.joined(separator: ","),
                 $0.title.map { $0.printableLine(limit: tableTitleLimit) } ?? "-"]
            }
        try writeOut(formatTable(rows))
    }
}

/// `ferry continue DEVICE/ID`: continue another device's activity here (Handoff).
struct ContinueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "continue",
        abstract: "Continue an activity of another device of yours in an app here (Handoff).",
        discussion: """
            Fetches the activity that 'ferry activities' lists as DEVICE/ID from that device \
            (its app saves it at that moment, with its userInfo) and opens it here as 'ferry \
            scene open' does: a scene whose activation conditions prefer the activity's target \
            gets it, else a new scene. Prints the persistent identifier of that scene. Exit \
            status 4 when the source device is gone or no longer shows the activity, 5 when \
            it did not answer in time, 2 when no device offers that activity or no app here \
            can continue it.
            """)

    @ArgumentParser.Argument(help: ArgumentHelp("The activity, as 'ferry activities' lists it.", valueName: "device/id"))
    var activity: String

    @Option(name: .long, help: ArgumentHelp("The app to continue it in (default: the first 'ferry activities' lists).", valueName: "app"))
    var app: String?

    @OptionGroup var bus: BusOptions

    func validate() throws {
        let parts = activity.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw ValidationError("'\(activity)' is not DEVICE/ID (as 'ferry activities' lists it).")
        }
        if let app, app.isEmpty { throw ValidationError("--app needs an app id.") }
    }

    func run() async throws {
        let broker = try await SceneCommand.Broker.connect(bus)
        var app = self.app
        if let name = app { app = try await broker.appID(name) }
        let identifier = try await broker.client.continueRemoteActivity(activity, app: app)
        try writeOut("\(identifier)\n")
    }
}
