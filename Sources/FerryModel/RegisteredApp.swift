/// An app registered with the broker, as its app list shows it (what `ferry apps` prints).
///
/// D-Bus: one entry of `org.ferry.Broker1.ListApps`.
public struct RegisteredApp: Sendable, Hashable {
    /// The app id (its manifest's `CFBundleIdentifier`).
    public var appID: String
    /// Its display name (`CFBundleName`), empty when the manifest has none.
    public var name: String
    /// The highest state of its connected scenes; ``SceneActivationState/unattached`` without any.
    public var activationState: SceneActivationState
    /// How many scenes it shows now.
    public var connectedScenes: Int
    /// The process id of its connection (0 when the broker did not say).
    public var processID: Int64
    /// Whether it registered with scenes (so the broker connects scenes to it).
    public var showsScenes: Bool
    /// Whether its manifest allows more than one scene (`UIApplicationSupportsMultipleScenes`).
    public var supportsMultipleScenes: Bool

    /// Makes an entry.
    public init(appID: String, name: String = "", activationState: SceneActivationState = .unattached, connectedScenes: Int = 0,
                processID: Int64 = 0, showsScenes: Bool = false, supportsMultipleScenes: Bool = false) {
        self.appID = appID
        self.name = name
        self.activationState = activationState
        self.connectedScenes = connectedScenes
        self.processID = processID
        self.showsScenes = showsScenes
        self.supportsMultipleScenes = supportsMultipleScenes
    }

    /// Reads one entry of the app list (keys `app-id`, `name`, `state`, `scenes`, `pid`,
    /// `shows-scenes`, `supports-multiple-scenes`; others are ignored).
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key: `app-id` missing, a value of
    ///   another type, a state that is no ``SceneActivationState/name``.
    public init(wire: WireReader) throws {
        appID = try wire.required("app-id", wire.string)
        name = try wire.string("name") ?? ""
        let state = try wire.string("state") ?? SceneActivationState.unattached.name
        guard let activationState = SceneActivationState(name: state) else {
            throw FerryModelError.invalid("\"\(state.printableLine())\" is not a scene state", at: wire.keyPath("state"))
        }
        self.activationState = activationState
        connectedScenes = Int(clamping: try wire.int64("scenes") ?? 0)
        processID = try wire.int64("pid") ?? 0
        showsScenes = try wire.bool("shows-scenes") ?? false
        supportsMultipleScenes = try wire.bool("supports-multiple-scenes") ?? false
    }
}
