/// A user activity that another device of the user's advertises and that an app here can
/// continue (Handoff). Its `userInfo` stays on its device until it is continued.
///
/// D-Bus: one entry of `org.ferry.Scenes1.ListRemoteActivities` (and the argument of
/// `RemoteActivityAvailable`).
public struct HandoffActivity: Sendable, Hashable {
    /// Its name, `DEVICE/ID`: what continuing it takes.
    public var identifier: String
    /// The device that advertises it.
    public var device: String
    /// The app id of the app showing it there.
    public var sourceApp: String
    /// The activity's type.
    public var activityType: String
    /// Its title, when it has one.
    public var title: String?
    /// Its `targetContentIdentifier`, when it has one.
    public var targetContentIdentifier: String?
    /// The apps here that can continue it, the default first.
    public var apps: [String]
    /// When it stops being offered, in microseconds since 1970.
    public var expirationMicroseconds: Int64

    /// Makes an entry.
    public init(identifier: String, device: String, sourceApp: String, activityType: String, title: String? = nil,
                targetContentIdentifier: String? = nil, apps: [String] = [], expirationMicroseconds: Int64 = 0) {
        self.identifier = identifier
        self.device = device
        self.sourceApp = sourceApp
        self.activityType = activityType
        self.title = title
        self.targetContentIdentifier = targetContentIdentifier
        self.apps = apps
        self.expirationMicroseconds = expirationMicroseconds
    }

    /// Reads one entry (keys `activity`, `device`, `app`, `activityType`, `title`,
    /// `targetContentIdentifier`, `apps`, `expirationDate`; an absent string reads as empty).
    /// - Throws: `FerryModelError` `.invalidArgument` naming a key of another type.
    public init(wire: WireReader) throws {
        identifier = try wire.string("activity") ?? ""
        device = try wire.string("device") ?? ""
        sourceApp = try wire.string("app") ?? ""
        activityType = try wire.string("activityType") ?? ""
        title = try wire.string("title")
        targetContentIdentifier = try wire.string("targetContentIdentifier")
        apps = try wire.strings("apps") ?? []
        expirationMicroseconds = try wire.int64("expirationDate") ?? 0
    }
}
