/// What a paste action in a scene did: whether the scene's paste configuration accepted what the
/// pasteboard holds, and what the app read or why it declined.
///
/// D-Bus: the result of `org.ferry.Scenes1.Paste` (and of `org.ferry.Client1.PerformPaste`).
public struct ScenePasteResult: Sendable, Hashable {
    /// Whether the scene accepted the pasteboard's items.
    public var accepted: Bool
    /// The type identifiers the scene accepts (its paste configuration).
    public var configuration: [String]
    /// The type identifiers the app read, in order, when it accepted.
    public var types: [String]
    /// Why the scene declined, when it did.
    public var reason: String
    /// The app's one-line summary of what it did with the paste.
    public var message: String

    /// Makes a result.
    public init(accepted: Bool = false, configuration: [String] = [], types: [String] = [], reason: String = "", message: String = "") {
        self.accepted = accepted
        self.configuration = configuration
        self.types = types
        self.reason = reason
        self.message = message
    }

    /// Reads a result (keys `accepted`, `configuration`, `types`, `reason`, `message`; an
    /// absent key reads as false or empty).
    /// - Throws: `FerryModelError` `.invalidArgument` naming a key of another type.
    public init(wire: WireReader) throws {
        accepted = try wire.bool("accepted") ?? false
        configuration = try wire.strings("configuration") ?? []
        types = try wire.strings("types") ?? []
        reason = try wire.string("reason") ?? ""
        message = try wire.string("message") ?? ""
    }
}
