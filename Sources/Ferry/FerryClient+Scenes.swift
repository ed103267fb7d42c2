import DBus
import FerryBus
import FerryModel
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The broker's apps, scenes and remote activities, for any client: a tool that lists or opens
/// scenes of other apps (the `ferry` CLI) needs no ``Application``. An app's own requests
/// (``Application/requestSceneSessionActivation(_:userActivity:options:)`` and the others) go
/// through these same calls.
extension FerryClient {
    static let scenesPath: ObjectPath = "/org/ferry/Scenes"
    static let scenesInterface: InterfaceName = "org.ferry.Scenes1"

    /// The apps registered with the broker, sorted by app id.
    /// - Throws: `FerryError` `.bus` for a malformed answer (naming the entry and key),
    ///   `.noBroker`.
    ///
    /// D-Bus: `org.ferry.Broker1.ListApps`.
    public func registeredApps() async throws(FerryError) -> [RegisteredApp] {
        let reply = try await callBroker("ListApps")
        return try Self.readingEach(reply.first, path: "apps", RegisteredApp.init(wire:))
    }

    /// Every scene session the broker keeps, connected or archived (or only `app`'s): apps sorted
    /// by id, each app's sessions front to back.
    /// - Parameter app: an app id, nil for every app's sessions.
    /// - Throws: `FerryError` `.bus` for a malformed answer (naming the entry and key),
    ///   `.noBroker`.
    ///
    /// D-Bus: `org.ferry.Scenes1.ListSessions`.
    public func sceneSessions(app: String? = nil) async throws(FerryError) -> [DesktopScene] {
        var options: [String: DBusValue] = [:]
        if let app { options["app"] = .string(app) }
        let reply = try await FerryError.bridging {
            try await callHot(path: Self.scenesPath, interface: Self.scenesInterface, member: "ListSessions",
                              arguments: options, timeout: .seconds(30))
        }
        return try Self.readingEach(reply, path: "sessions", DesktopScene.init(wire:))
    }

    /// The desktop's screens and edge-zone width.
    /// - Throws: `FerryError` `.bus` for a malformed answer (naming the key), `.noBroker`.
    ///
    /// D-Bus: `org.freedesktop.DBus.Properties.GetAll` of `org.ferry.Scenes1`.
    public func desktopLayout() async throws(FerryError) -> DesktopLayout {
        let reply = try await FerryError.bridging {
            try await connection.call(destination: Self.brokerName, path: Self.scenesPath,
                                      interface: "org.freedesktop.DBus.Properties", member: "GetAll",
                                      body: [.string(Self.scenesInterface.rawValue)])
        }
        return try Self.reading(reply.first, path: "properties", DesktopLayout.init(wire:))
    }

    /// Brings an existing session of any app forward, or asks for a new scene of `app` (Apple's
    /// `requestSceneSessionActivation`, from outside the app).
    ///
    /// With `persistentIdentifier` nil: a new scene showing `userActivity` (its
    /// `targetContentIdentifier` may pick an existing scene by its activation conditions instead,
    /// which then gets the activity). For an app that is running, its scene has connected when
    /// this returns; for one that is not, the session waits until the app registers.
    /// - Parameters:
    ///   - app: the app id; may be empty when `persistentIdentifier` names a session.
    ///   - persistentIdentifier: the session to bring forward, nil for a new one.
    ///   - userActivity: the activity for the connection options; its type must be one the app
    ///     declares in `NSUserActivityTypes`.
    ///   - options: requesting scene, placement, URLs, screen, role.
    /// - Returns: the persistent identifier of the session activated.
    /// - Throws: `FerryError`: `.multipleScenesNotSupported` (the app supports one scene and has
    ///   it), `.unavailable` (the app is running but registered without scenes), `.notFound` (an
    ///   unknown app or session), `.invalidArgument` (an undeclared or malformed activity, naming
    ///   its key path; a bad option), `.timeout` (the app did not answer in time), `.noBroker`.
    ///
    /// D-Bus: `org.ferry.Scenes1.RequestActivation`.
    @discardableResult
    public func requestSceneSessionActivation(app: String, session persistentIdentifier: String?, userActivity: UserActivity?,
                                              options: SceneActivationRequestOptions = .init()) async throws(FerryError) -> String {
        var wire: [String: DBusValue] = [:]
        if let userActivity {
            let dictionary = try FerryError.bridgingSync {
                try userActivity.validate()
                return try userActivity.wireDictionary()
            }
            wire["userActivity"] = dictionary.dbusValue
        }
        if !options.urls.isEmpty {
            wire["urls"] = .array(of: .string, options.urls.map { .string($0.absoluteString) })
        }
        if let requesting = options.requestingScene { wire["requestingScene"] = .string(requesting) }
        if let placement = options.placement { wire["placement"] = .string(placement.rawValue) }
        if let screen = options.screen {
            guard let index = UInt32(exactly: screen) else {
                throw FerryError(.invalidArgument, "screen: \(screen) is not a screen index")
            }
            wire["screen"] = .uint32(index)
        }
        if let role = options.role { wire["role"] = .string(role.rawValue) }
        let reply = try await callScenes("RequestActivation", [.string(app), .string(persistentIdentifier ?? ""), wire.dbusValue],
                                         timeout: .seconds(60))
        return try Self.persistentIdentifier(reply, of: "RequestActivation")
    }

    /// Asks for a session's scene to be redrawn (Apple's `requestSceneSessionRefresh`); nothing
    /// happens for an archived session.
    /// - Throws: `FerryError` `.notFound` for an unknown session, `.noBroker`.
    ///
    /// D-Bus: `org.ferry.Scenes1.RequestRefresh`.
    public func requestSceneSessionRefresh(_ persistentIdentifier: String) async throws(FerryError) {
        _ = try await callScenes("RequestRefresh", [.string(persistentIdentifier)])
    }

    /// Destroys a session (Apple's `requestSceneSessionDestruction`): its scene disconnects and
    /// its app discards it (when the app next registers, if it is not running).
    /// - Throws: `FerryError` `.notFound` for an unknown session, `.noBroker`.
    ///
    /// D-Bus: `org.ferry.Scenes1.RequestDestruction`.
    public func requestSceneSessionDestruction(_ persistentIdentifier: String,
                                               options: SceneDestructionRequestOptions = .init()) async throws(FerryError) {
        let wire: [String: DBusValue] = ["animation": .string(options.animation.name)]
        _ = try await callScenes("RequestDestruction", [.string(persistentIdentifier), wire.dbusValue], timeout: .seconds(60))
    }

    /// A paste action in the scene of session `persistentIdentifier`, as if the user chose Paste
    /// there: its app checks its paste configuration against the pasteboard and, when it
    /// accepts, reads it.
    /// - Parameters:
    ///   - persistentIdentifier: the scene's session.
    ///   - pasteboard: the pasteboard to paste from (`general` by default); it is not created.
    /// - Returns: whether the scene accepted, what it read or why it declined.
    /// - Throws: `FerryError` `.notFound` (no such connected scene, no such pasteboard),
    ///   `.notInteractive` (a scene of the external-display role), `.timeout`, `.noBroker`.
    ///
    /// D-Bus: `org.ferry.Scenes1.Paste` (the app has 30 s).
    public func paste(intoScene persistentIdentifier: String, from pasteboard: String = PasteboardName.general)
        async throws(FerryError) -> ScenePasteResult {
        try await paste(persistentIdentifier, options: [:], pasteboard: pasteboard)
    }

    /// A paste action in `app`'s front-most connected scene (see ``paste(intoScene:from:)``).
    /// - Throws: `FerryError` `.notFound` (an app without connected scenes, no such pasteboard),
    ///   `.timeout`, `.noBroker`.
    ///
    /// D-Bus: `org.ferry.Scenes1.Paste` with option `app`.
    public func paste(intoFrontSceneOf app: String, from pasteboard: String = PasteboardName.general)
        async throws(FerryError) -> ScenePasteResult {
        try await paste("", options: ["app": .string(app)], pasteboard: pasteboard)
    }

    private func paste(_ persistentIdentifier: String, options: [String: DBusValue], pasteboard: String)
        async throws(FerryError) -> ScenePasteResult {
        let reply = try await callScenes("Paste", [.string(persistentIdentifier), .string(pasteboard), options.dbusValue],
                                         timeout: .seconds(40))
        return try Self.reading(reply.first, path: "result", ScenePasteResult.init(wire:))
    }

    /// The activities the user's other devices advertise that an app here can continue
    /// (Handoff); none when continuity is off.
    /// - Parameter all: also those no app here can continue.
    /// - Throws: `FerryError` `.bus` for a malformed answer (naming the entry and key),
    ///   `.noBroker`.
    ///
    /// D-Bus: `org.ferry.Scenes1.ListRemoteActivities`.
    public func remoteActivities(all: Bool = false) async throws(FerryError) -> [HandoffActivity] {
        let options: [String: DBusValue] = all ? ["all": .boolean(true)] : [:]
        let reply = try await callScenes("ListRemoteActivities", [options.dbusValue])
        return try Self.readingEach(reply.first, path: "activities", HandoffActivity.init(wire:))
    }

    /// Continues another device's activity here (Handoff): the source device's app saves it with
    /// its `userInfo`, and it opens a scene as
    /// ``requestSceneSessionActivation(app:session:userActivity:options:)`` does.
    /// - Parameters:
    ///   - identifier: the activity's ``HandoffActivity/identifier`` (`DEVICE/ID`).
    ///   - app: the app to continue it in; nil for the default (the first of
    ///     ``HandoffActivity/apps``).
    /// - Returns: the persistent identifier of the scene's session.
    /// - Throws: `FerryError` `.unavailable` (continuity is off; the source device is gone or no
    ///   longer shows the activity), `.timeout` (it did not answer in time), `.notFound` (no
    ///   device offers it; no app here can continue it), `.invalidArgument` (`app` does not
    ///   declare its type), `.noBroker`.
    ///
    /// D-Bus: `org.ferry.Scenes1.ContinueRemoteActivity` (the source and its app answer within
    /// about 8 s, the new scene's app within 15 s: the call waits up to 40 s).
    public func continueRemoteActivity(_ identifier: String, app: String? = nil) async throws(FerryError) -> String {
        var options: [String: DBusValue] = [:]
        if let app { options["app"] = .string(app) }
        let reply = try await callScenes("ContinueRemoteActivity", [.string(identifier), options.dbusValue], timeout: .seconds(40))
        return try Self.persistentIdentifier(reply, of: "ContinueRemoteActivity")
    }

    /// Calls a `org.ferry.Scenes1` method on the bus.
    func callScenes(_ member: MemberName, _ body: [DBusValue], timeout: Duration = .seconds(30))
        async throws(FerryError) -> [DBusValue] {
        try await FerryError.bridging {
            try await connection.call(destination: Self.brokerName, path: Self.scenesPath, interface: Self.scenesInterface,
                                      member: member, body: body, timeout: timeout)
        }
    }

    /// The persistent identifier of an `(os)` reply.
    private static func persistentIdentifier(_ reply: [DBusValue], of member: String) throws(FerryError) -> String {
        guard reply.count == 2, case .string(let identifier) = reply[1] else {
            throw FerryError(.bus, "Scenes1.\(member) answered '\(reply.map(\.signature.rawValue).joined())', not 'os'")
        }
        return identifier
    }

    /// The broker's `a{sv}` reply value read by `read`; a malformed one is `.bus`, naming the key:
    /// `the broker's reply: sessions[2].frame.x: expected a double (d), found s`.
    static func reading<T>(_ value: DBusValue?, path: String, _ read: (WireReader) throws -> T) throws(FerryError) -> T {
        guard let value else { throw FerryError(.bus, "the broker's reply is empty") }
        return try malformedReply { try read(try WireReader(dbus: value, path: path)) }
    }

    /// The broker's `aa{sv}` reply value, each element read by `read` (see ``reading(_:path:_:)``).
    static func readingEach<T>(_ value: DBusValue?, path: String, _ read: (WireReader) throws -> T) throws(FerryError) -> [T] {
        guard let value else { throw FerryError(.bus, "the broker's reply is empty") }
        return try malformedReply { try WireReader.readers(dbus: value, path: path).map(read) }
    }

    /// The broker's `aa{sv}` reply, each element read by `read`: straight from the message's
    /// bytes into wire values (no tree of D-Bus values) when it holds only values with a wire
    /// shape, else as a value, whose reader names what is wrong with it.
    static func readingEach<T>(_ reply: Message, path: String, _ read: (WireReader) throws -> T) throws(FerryError) -> [T] {
        guard let readers = try FerryError.bridgingSync({ try WireReader.readers(plainReply: reply, path: path) }) else {
            return try readingEach(try FerryError.bridgingSync { try reply.body }.first, path: path, read)
        }
        return try malformedReply { try readers.map(read) }
    }

    private static func malformedReply<T>(_ body: () throws -> T) throws(FerryError) -> T {
        do { return try body() } catch let error as FerryModelError {
            let key = error.keyPath.map { "\($0): " } ?? ""
            throw FerryError(.bus, "the broker's reply: \(key)\(error.message)")
        } catch {
            throw FerryError.converting(error)
        }
    }
}
