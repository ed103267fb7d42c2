import DBus
import Ferry
import FerryModel
import FerryTestSupport
import Foundation
import Synchronization
import Testing

// The sharing tests' fixture: two apps (each an ``Application`` with application activities and
// a scene that declares activity items) and a tool (a plain client, the sharer) on a private bus
// with the real ferryd.

/// What the apps' activities and scene delegates did, as lines.
final class ShareEvents: Sendable {
    private let lines = Mutex<[String]>([])
    private let bytes = Mutex<[String: Data]>([:])
    func add(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
    func starting(_ prefix: String) -> [String] { all.filter { $0.hasPrefix(prefix) } }
    /// Bytes an activity read, by activity type.
    func received(_ data: Data, by type: ActivityType) { bytes.withLock { $0[type.rawValue, default: Data()].append(data) } }
    func bytes(readBy type: ActivityType) -> Data? { bytes.withLock { $0[type.rawValue] } }
}

/// An activity that records what it sees and does what it is told.
struct RecordingActivity: ApplicationActivity {
    enum Behaviour: Sendable {
        /// Reads every item as this type and answers its sizes.
        case read(ContentType)
        /// canPerform says no.
        case refuse
        /// perform throws this.
        case fail(any Error & Sendable)
        /// perform answers not completed.
        case decline
        /// perform waits this long (an app that hangs, or dies meanwhile); "cancelled" when it is.
        case hang(Duration)
    }

    let activity: ActivityDescription
    let behaviour: Behaviour
    let events: ShareEvents

    func canPerform(with items: ActivityItems) -> Bool {
        events.add("can \(activity.type) share=\(items.share) items=\(items.count) providers=\(items.itemProviders.count)")
        if case .refuse = behaviour { return false }
        return true
    }

    func perform(with items: ActivityItems) async throws -> ActivityResult {
        let titles = items.metadata.map { $0.title ?? "-" }.joined(separator: ",")
        events.add("perform \(activity.type) share=\(items.share) items=\(items.count) title=\(items.title ?? "-") "
                   + "metadata=\(titles) source=\(items.sourceApp ?? "-") types=\(items.itemTypes.map { $0.map(\.identifier).joined(separator: "+") })")
        switch behaviour {
        case .read(let type):
            var sizes: [[String: String]] = []
            for provider in items.itemProviders {
                let loaded = try await provider.loadData(for: type)
                events.received(loaded.data, by: activity.type)
                sizes.append(["size": String(loaded.data.count), "type": loaded.contentType.identifier])
            }
            return ActivityResult(message: "read \(items.itemProviders.count) item(s)", returnedItems: sizes)
        case .refuse:
            return ActivityResult(completed: false, message: "refused")
        case .fail(let error):
            throw error
        case .decline:
            return ActivityResult(completed: false, message: "declined")
        case .hang(let duration):
            do {
                try await Task.sleep(for: duration)
            } catch {
                events.add("cancelled \(activity.type)")
                throw error
            }
            return ActivityResult(message: "woke up")
        }
    }
}

/// A plain error an activity may throw (not a `FerryError`).
struct AlbumFullError: Error, CustomStringConvertible {
    var description: String { "the album is full" }
}

/// An app's delegate: its activities, and scenes sharing `configuration`.
final class ShareAppDelegate: ApplicationDelegate {
    let events: ShareEvents
    let activities: [any ApplicationActivity]
    let configuration: Mutex<ActivityItemsConfiguration?>

    init(events: ShareEvents, activities: [any ApplicationActivity], configuration: ActivityItemsConfiguration?) {
        self.events = events
        self.activities = activities
        self.configuration = Mutex(configuration)
    }

    func applicationActivities(for application: Application) -> [any ApplicationActivity] {
        events.add("activities asked")
        return activities
    }

    func application(_ application: Application, sceneDelegateFor session: SceneSession) -> any SceneDelegate {
        ShareSceneDelegate(app: self)
    }
}

/// A scene that shares its app delegate's configuration and records completions.
final class ShareSceneDelegate: SceneDelegate {
    let app: ShareAppDelegate
    init(app: ShareAppDelegate) { self.app = app }

    func activityItemsConfiguration(for scene: Scene) -> ActivityItemsConfiguration? {
        app.events.add("provide \(scene.persistentIdentifier)")
        return app.configuration.withLock { $0 }
    }

    func scene(_ scene: Scene, shareDidComplete completion: ShareCompletion, share: String) async {
        app.events.add("completed \(scene.persistentIdentifier) share=\(share) \(completion.activityType?.rawValue ?? "-") "
                       + "\(completion.completed) \(completion.returnedItems.count)")
    }
}

/// Two apps and a tool on the real ferryd: `album` (activities taking images, one always
/// refusing) and `notes` (an activity taking text; its scene shares a note), each with one scene.
struct ShareStage {
    static let albumID = "org.ferry.test.album"
    static let notesID = "org.ferry.test.notes"
    static let addToAlbum: ActivityType = "org.ferry.test.album.add"
    static let neverAlbum: ActivityType = "org.ferry.test.album.never"
    static let append: ActivityType = "org.ferry.test.notes.append"

    let fixture: ClientFixture
    let albumClient: FerryClient
    let album: Application
    let albumEvents: ShareEvents
    let albumScene: String
    let notesClient: FerryClient
    let notes: Application
    let notesDelegate: ShareAppDelegate
    let notesEvents: ShareEvents
    let notesScene: String
    let tool: FerryClient

    /// The note the notes app's scene shares: text, titled, with metadata.
    static func noteConfiguration(_ text: String = "buy milk", interactions: ActivityItemsConfiguration.Interaction = .all)
        -> ActivityItemsConfiguration {
        var provider = ItemProvider()
        provider.suggestedName = "Groceries"
        provider.registerDataRepresentation(for: .utf8PlainText, data: Data(text.utf8))
        var configuration = ActivityItemsConfiguration(itemProviders: [provider])
        configuration.title = "Groceries"
        configuration.perItemMetadata = [0: .init(title: "Groceries note", messageBody: "from Notes")]
        configuration.supportedInteractions = interactions
        return configuration
    }

    static func with(albumBehaviour: RecordingActivity.Behaviour = .read(.image),
                     appendBehaviour: RecordingActivity.Behaviour = .read(.plainText),
                     notesConfiguration: ActivityItemsConfiguration? = noteConfiguration(),
                     ferrydArguments: [String] = [],
                     _ body: (ShareStage) async throws -> Void) async throws {
        try await ClientFixture.with(ferrydArguments: ferrydArguments) { fixture in
            let albumEvents = ShareEvents(), notesEvents = ShareEvents()
            let albumClient = try await fixture.client()
            let album = try await Application.register(
                client: albumClient, manifest: sceneTestManifest(appID: albumID),
                delegate: ShareAppDelegate(events: albumEvents, activities: [
                    RecordingActivity(activity: ActivityDescription(type: addToAlbum, title: "Add to Album", acceptableTypes: [.image]),
                                      behaviour: albumBehaviour, events: albumEvents),
                    RecordingActivity(activity: ActivityDescription(type: neverAlbum, title: "Never", acceptableTypes: [.image]),
                                      behaviour: .refuse, events: albumEvents),
                ], configuration: nil))
            let notesClient = try await fixture.client()
            let notesDelegate = ShareAppDelegate(events: notesEvents, activities: [
                RecordingActivity(activity: ActivityDescription(type: append, title: "Append to Note", category: .share,
                                                                acceptableTypes: [.plainText]),
                                  behaviour: appendBehaviour, events: notesEvents),
            ], configuration: notesConfiguration)
            let notes = try await Application.register(client: notesClient, manifest: sceneTestManifest(appID: notesID),
                                                       delegate: notesDelegate)
            let tool = try await fixture.client()
            do {
                let albumScene = try await Self.firstScene(of: album)
                let notesScene = try await Self.firstScene(of: notes)
                try await body(ShareStage(fixture: fixture, albumClient: albumClient, album: album, albumEvents: albumEvents,
                                          albumScene: albumScene, notesClient: notesClient, notes: notes,
                                          notesDelegate: notesDelegate, notesEvents: notesEvents, notesScene: notesScene,
                                          tool: tool))
            } catch {
                await tool.close()
                await albumClient.close()
                await notesClient.close()
                throw error
            }
            await tool.close()
            await albumClient.close()
            await notesClient.close()
        }
    }

    /// The app's first connected scene, once the broker counts it connected: the broker brings a
    /// scene to the foreground after recording its connection (the app may see the scene
    /// connect before that).
    static func firstScene(of app: Application) async throws -> String {
        try await DragStage.eventually("the first scene of \(app.appID)") {
            guard let state = app.connectedScenes.first?.activationState else { return false }
            return state == .foregroundActive || state == .foregroundInactive
        }
        return try #require(app.connectedScenes.first).persistentIdentifier
    }

    /// One item holding `data` as `type`.
    static func item(_ data: Data, as type: ContentType, name: String? = nil) -> ItemProvider {
        var provider = ItemProvider()
        provider.suggestedName = name
        provider.registerDataRepresentation(for: type, data: data)
        return provider
    }

    static func text(_ string: String) -> ItemProvider { item(Data(string.utf8), as: .utf8PlainText) }
}

@Suite("Ferry: the sharing fixture")
struct ShareFixtureTests {
    @Test("both apps registered their activities: a photo lists add-to-album, text lists append")
    func activitiesRegistered() async throws {
        try await ShareStage.with { s in
            #expect(s.albumEvents.starting("activities asked").count == 1)
            let photo = try await s.tool.beginShare([ShareStage.item(pngLikeBytes(64), as: .png)])
            #expect(try await photo.activities().map(\.type).contains(ShareStage.addToAlbum))
            try await photo.end()
            let text = try await s.tool.beginShare([ShareStage.text("hi")])
            #expect(try await text.activities().map(\.type).contains(ShareStage.append))
            try await text.end()
        }
    }
}
