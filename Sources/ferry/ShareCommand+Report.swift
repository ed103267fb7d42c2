import FerryModel
import FerryTerminal

/// What `ferry share` prints: the activities (`--list`) or the completion (`--activity`), as
/// lines or as one JSON object (`--json`), and the exit status a completion means.
struct ShareReport {
    var json: Bool
    /// The share's id ("3").
    var share: String

    /// One line per activity, `TYPE<TAB>TITLE<TAB>CATEGORY<TAB>APP` (`(built-in)` for the
    /// broker's own); with `--json` one object `{share, activities}`.
    func list(_ activities: [ListedActivity]) throws -> String {
        if json { return try jsonLine(ListJSON(share: share, activities: activities.map(ActivityJSON.init))) }
        return activities.map { activity in
            [activity.type.rawValue, activity.title, activity.category.rawValue, activity.app ?? "(built-in)"]
                .map { $0.printableLine() }.joined(separator: "\t") + "\n"
        }.joined()
    }

    /// The completion: its message (or what happened), then one line per returned item
    /// (`key=value` pairs, keys sorted, separated by tabs); with `--json` one object.
    func completion(_ completion: ShareCompletion) throws -> String {
        if json { return try jsonLine(CompletionJSON(share: share, completion)) }
        var text = Self.summary(completion).printableLine() + "\n"
        for item in completion.returnedItems where !item.isEmpty {
            text += item.sorted { $0.key < $1.key }.map { "\($0.key.printableLine())=\($0.value.printableLine())" }
                .joined(separator: "\t") + "\n"
        }
        return text
    }

    /// `Saved 1 item`; `completed org.ferry.activity.copy` without a message; `not completed:
    /// the activity's app org.example went away (org.ferry.Error.Unavailable)`.
    static func summary(_ completion: ShareCompletion) -> String {
        let type = completion.activityType?.rawValue ?? "no activity"
        if completion.completed {
            guard let message = completion.message, !message.isEmpty else { return "completed \(type)" }
            return message
        }
        let reason = [completion.error, completion.message].compactMap { $0 }.first { !$0.isEmpty }
            ?? "\(type) did not complete"
        return "not completed: \(reason)" + (completion.errorName.map { " (\($0))" } ?? "")
    }

    /// 0 completed; 4 when the activity's app went away (`org.ferry.Error.Unavailable`); 1 for
    /// any other completion that is not completed (refused or failed).
    static func status(of completion: ShareCompletion) -> ExitStatus {
        if completion.completed { return .success }
        return completion.errorName == "org.ferry.Error.Unavailable" ? .unavailable : .failure
    }

    struct ListJSON: Encodable {
        var share: String
        var activities: [ActivityJSON]
    }

    /// An activity as `--list --json` prints it (the keys of `Sharing1.ListActivities`).
    struct ActivityJSON: Encodable {
        var activityType: String
        var title: String
        var category: String
        var app: String?
        var builtIn: Bool

        init(_ activity: ListedActivity) {
            activityType = activity.type.rawValue
            title = activity.title
            category = activity.category.rawValue
            app = activity.app
            builtIn = activity.isBuiltIn
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(activityType, forKey: .activityType)
            try c.encode(title, forKey: .title)
            try c.encode(category, forKey: .category)
            try c.encode(app, forKey: .app)
            try c.encode(builtIn, forKey: .builtIn)
        }

        enum CodingKeys: String, CodingKey { case activityType, title, category, app, builtIn }
    }

    /// A completion as `--activity --json` prints it (the keys of the completion `a{sv}`).
    struct CompletionJSON: Encodable {
        var share: String
        var completed: Bool
        var activityType: String?
        var returnedItems: [[String: String]]
        var message: String?
        var errorName: String?
        var error: String?

        init(share: String, _ completion: ShareCompletion) {
            self.share = share
            completed = completion.completed
            activityType = completion.activityType?.rawValue
            returnedItems = completion.returnedItems
            message = completion.message
            errorName = completion.errorName
            error = completion.error
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(share, forKey: .share)
            try c.encode(completed, forKey: .completed)
            try c.encode(activityType, forKey: .activityType)
            try c.encode(returnedItems, forKey: .returnedItems)
            try c.encode(message, forKey: .message)
            try c.encode(errorName, forKey: .errorName)
            try c.encode(error, forKey: .error)
        }

        enum CodingKeys: String, CodingKey { case share, completed, activityType, returnedItems, message, errorName, error }
    }
}
