import FerryModel

/// Which demo app a folder holds, and everything that differs between them: the activity that
/// opens one item, the configuration that shows it, what a paste accepts, the titles.
enum DemoKind: String, Sendable, CaseIterable {
    /// `Fixtures/Apps/Notes`: text notes.
    case notes
    /// `Fixtures/Apps/Gallery`: images.
    case gallery

    /// The kind whose activity type the manifest declares, nil for another app.
    init?(manifest: AppManifest) {
        guard let kind = DemoKind.allCases.first(where: { manifest.declaresActivityType($0.activityType) }) else { return nil }
        self = kind
    }

    /// The activity that opens one item: `org.ferry.notes.open-note`, `org.ferry.gallery.view-photo`.
    var activityType: String {
        switch self {
        case .notes: "org.ferry.notes.open-note"
        case .gallery: "org.ferry.gallery.view-photo"
        }
    }

    /// The configuration that shows one item: `Editor`, `Viewer`.
    var detailConfiguration: String {
        switch self {
        case .notes: "Editor"
        case .gallery: "Viewer"
        }
    }

    /// The configuration that shows the whole collection.
    static let defaultConfiguration = "Default"

    /// The userInfo key naming the item in an activity and in a session's userInfo.
    var userInfoKey: String {
        switch self {
        case .notes: "noteID"
        case .gallery: "photoID"
        }
    }

    /// The key naming the item in event lines: `note=groceries`, `photo=lake.png`.
    var eventKey: String {
        switch self {
        case .notes: "note"
        case .gallery: "photo"
        }
    }

    /// The folder of the state directory holding the items.
    var contentFolder: String {
        switch self {
        case .notes: "notes"
        case .gallery: "photos"
        }
    }

    /// The types a scene accepts on paste and drop: Notes `public.plain-text` and `public.image`
    /// (an image becomes an attachment of the note), Gallery `public.image`.
    var pasteConfiguration: PasteConfiguration {
        switch self {
        case .notes: PasteConfiguration(acceptableTypes: [.plainText, .image])
        case .gallery: PasteConfiguration(acceptableTypes: [.image])
        }
    }

    /// The configuration for a scene that opens with `activityType` (nil: none): the detail
    /// configuration for this app's activity, else `Default` — the seed's
    /// `configurationForConnecting`.
    func configurationName(forActivityType activityType: String?) -> String {
        activityType == self.activityType ? detailConfiguration : Self.defaultConfiguration
    }

    /// A window title: `Notes`, `Notes — groceries`, `Gallery — lake.png`.
    func title(appName: String, item: String?) -> String {
        guard let item else { return appName }
        return "\(appName) — \(item)"
    }

    /// The activity that reopens `item`: this app's activity type, the item in userInfo and as
    /// the target content identifier.
    func activity(for item: String, appName: String) -> UserActivity {
        // The activity type is a constant that `UserActivity` accepts.
        var activity = try! UserActivity(activityType: activityType)
        activity.title = title(appName: appName, item: item)
        activity.userInfo = [userInfoKey: .string(item)]
        activity.targetContentIdentifier = item
        return activity
    }

    /// The item an activity names: userInfo's `noteID`/`photoID`, else its target content
    /// identifier; nil for another activity type or a malformed id.
    func item(in activity: UserActivity) -> String? {
        guard activity.activityType == activityType else { return nil }
        let named = activity.userInfo[userInfoKey]?.stringValue ?? activity.targetContentIdentifier
        guard let named, ContentLibrary.isValidID(named) else { return nil }
        return named
    }
}
