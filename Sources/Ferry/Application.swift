import DBus
import FerryBus
import FerryModel
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An app that shows scenes (Apple's `UIApplication`, scene part): registered with the broker
/// with its manifest and a delegate, it connects the scenes the broker asks for, restores
/// archived ones, and asks for new scenes, refreshes and destructions.
///
/// ```swift
/// let client = try await FerryClient.connect()
/// let app = try await Application.register(client: client, manifest: infoPlist, delegate: AppDelegate())
/// try await app.requestSceneSessionActivation(nil, userActivity: activity)
/// ```
/// The broker calls the app through `org.ferry.Client1` (only the owner of `org.ferry.Broker`
/// may); the library turns each call into delegate calls, in order, and stores each scene's state
/// restoration activity with its session after it connects, after each activation-state change
/// and after a continued activity; ``saveState()`` saves every scene (call it before quitting).
public final class Application: Sendable {
    /// The client the app is registered through.
    public let client: FerryClient
    /// The app's parsed manifest (Info.plist).
    public let manifest: AppManifest
    /// The app's delegate.
    public let delegate: any ApplicationDelegate
    let scenes = Mutex<[String: Scene]>([:])
    let saves: SceneSaveQueue
    /// The drags this app's scenes take part in, as source or as drop target.
    let drags = DragTracker()
    /// The delegate's application activities, as last registered (`Application+Share.swift`).
    let applicationActivities = Mutex<[any ApplicationActivity]>([])
    /// The shares whose items this app's scenes provided, until their `ShareCompleted`.
    let providedShares = Mutex<Set<String>>([])

    /// The applications registered through each client (one per client), so the client's
    /// `org.ferry.Client1` finds them. An application lives as long as its process.
    static let installed = Mutex<[ObjectIdentifier: Application]>([:])

    init(client: FerryClient, manifest: AppManifest, delegate: any ApplicationDelegate) {
        self.client = client
        self.manifest = manifest
        self.delegate = delegate
        self.saves = SceneSaveQueue()
    }

    /// Registers the app with scenes (`RegisterApp` with `scenes=true`) from its Info.plist bytes,
    /// with its delegate. Archived sessions start reconnecting right after this returns (the
    /// broker calls the delegate); an app without sessions gets its first scene.
    /// - Parameters:
    ///   - client: the connection to register; one application per client.
    ///   - manifest: the Info.plist bytes (XML or binary), at most 1 MiB; its
    ///     `CFBundleIdentifier` is the app id.
    ///   - delegate: the app's delegate.
    /// - Throws: `FerryError`: `.invalidArgument` (a malformed manifest naming the key path, an
    ///   application already registered through `client`, another app id on this connection, a
    ///   malformed or repeated application activity), `.permissionDenied` (the app id is held by
    ///   another live connection), `.tooLarge`, `.noBroker`.
    ///
    /// D-Bus: `org.ferry.Broker1.RegisterApp`, then `org.ferry.Sharing1.RegisterActivities` when
    /// the delegate has ``ApplicationDelegate/applicationActivities(for:)``.
    public static func register(client: FerryClient, manifest bytes: [UInt8], delegate: any ApplicationDelegate)
        async throws(FerryError) -> Application {
        let manifest: AppManifest
        do {
            manifest = try AppManifest(propertyListData: Data(bytes))
        } catch {
            throw FerryError.converting(error)
        }
        let application = Application(client: client, manifest: manifest, delegate: delegate)
        let key = ObjectIdentifier(client)
        let added = installed.withLock { all in
            guard all[key] == nil else { return false }
            all[key] = application
            return true
        }
        guard added else {
            throw FerryError(.invalidArgument, "an application is already registered through this client")
        }
        application.saves.start(for: application)
        do {
            try application.prepareActivities()
            try await client.register(appID: manifest.bundleIdentifier, manifest: bytes)
            try await application.registerActivities()
        } catch {
            installed.withLock { all in if all[key] === application { all[key] = nil } }
            application.saves.stop()
            throw error
        }
        return application
    }

    /// The application registered through `client`, if any.
    static func of(_ client: FerryClient) -> Application? {
        installed.withLock { $0[ObjectIdentifier(client)] }
    }

    /// The app id (the manifest's `CFBundleIdentifier`).
    public var appID: String { manifest.bundleIdentifier }

    /// Whether the manifest allows more than one scene (`UIApplicationSupportsMultipleScenes`).
    public var supportsMultipleScenes: Bool { manifest.supportsMultipleScenes }

    /// The scenes this process shows, ordered by persistent identifier.
    public var connectedScenes: [Scene] {
        scenes.withLock { $0.values.sorted { $0.persistentIdentifier < $1.persistentIdentifier } }
    }

    /// The connected scene of a session, nil when this process does not show it.
    public func scene(for persistentIdentifier: String) -> Scene? {
        scenes.withLock { $0[persistentIdentifier] }
    }

    /// Every session of the app, connected or archived, front to back per screen (Apple's
    /// `openSessions`).
    /// - Throws: `FerryError`: `.invalidArgument` when the broker sends a malformed session,
    ///   `.noBroker`.
    ///
    /// D-Bus: `org.ferry.Scenes1.ListSessions` with option `app`.
    public var openSessions: [SceneSession] {
        get async throws(FerryError) {
            let reply = try await client.callScenes("ListSessions", [["app": DBusValue.string(appID)].dbusValue])
            guard let value = reply.first else { return [] }
            let dictionaries = try FerryError.bridgingSync { try WireBridge.dictionaries(value) }
            var sessions: [SceneSession] = []
            for dictionary in dictionaries {
                sessions.append(try Self.session(dictionary.dbusValue, what: "session"))
            }
            return sessions
        }
    }

    /// Asks every connected scene's delegate for its state restoration activity and stores it
    /// with the session. Failures are ignored (a scene whose broker is gone keeps its last state).
    ///
    /// D-Bus: `org.ferry.SceneSession1.Update`, once per scene, all scenes at once.
    public func saveState() async {
        await withTaskGroup(of: Void.self) { group in
            for scene in connectedScenes {
                group.addTask { try? await scene.saveState() }
            }
        }
    }

    /// A session from a SceneSession wire dictionary.
    /// - Throws: `FerryError` `.invalidArgument` naming `what` and the bad key.
    static func session(_ value: DBusValue, what: String) throws(FerryError) -> SceneSession {
        do {
            return try SceneSession(dbusValue: value, keyPath: what)
        } catch {
            throw FerryError(.invalidArgument, FerryError.converting(error).message)
        }
    }
}
