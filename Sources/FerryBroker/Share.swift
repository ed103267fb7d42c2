import DBus
import FerryModel

/// One running share as the broker keeps it (a share sheet that is open): who opened it, whose
/// items it carries, what may be performed with them, and what the last listing found.
///
/// A value the ``ShareService`` actor owns; its items live on the share pasteboard
/// `org.ferry.share.<number>`.
struct Share: Sendable {
    /// The scene whose activity items are shared (BeginShare's option `scene`).
    struct Source: Sendable {
        /// The scene's persistent identifier.
        var sceneID: String
        /// Its app.
        var appID: String
        /// The app's registered connection.
        var uniqueName: String
        /// The app's call queue (ProvideActivityItems, ShareCompleted).
        var callbacks: AppCallbacks
    }

    /// An app activity the last listing found performable, with the app that answered.
    struct Able: Sendable, Hashable {
        var type: ActivityType
        var uniqueName: String
    }

    /// The number ferryd gave the share (1, 2, … per run).
    let number: Int
    /// The share's id on the bus ("3").
    var id: String { String(number) }
    /// The share pasteboard's name (`org.ferry.share.<n>`).
    let pasteboard: String
    /// The share pasteboard's object path.
    let pasteboardPath: ObjectPath
    /// The unique name of the connection that called BeginShare.
    let sharer: String
    /// The shared scene, nil when the sharer writes the items itself.
    let source: Source?
    /// The app whose activities are listed first: the scene's app, or the sharer's own
    /// registered app when it shares its own items; nil for a tool.
    let sourceApp: String?
    /// Never listed, never performed.
    let excluded: Set<ActivityType>
    /// When the share began (it ends unperformed after the idle timeout).
    let began: ContinuousClock.Instant

    /// The shared set's title, when the source gave one.
    var title: String?
    /// What the items support: the scene app's answer, or the sharer's `interactions` option (both by default).
    var interactions: ActivityItemsConfiguration.Interaction = .all
    /// Per-item metadata, by index (the source's ProvideActivityItems answer).
    var metadata: [ActivityItemsConfiguration.ItemMetadata] = []
    /// The app activities the last listing's CanPerformActivities answers allowed.
    var able: Set<Able> = []
    /// Whether Perform is running (the share ends after it).
    var performing = false
    /// How the share ends when a running Perform gives it back without performing (its sharer
    /// or source left meanwhile); nil while nobody left.
    var endAfterPerform: (completion: ShareCompletion, reason: String)?

    /// Whether the items' interactions allow listing `type`: without "copy" no Copy; without
    /// "share" nothing but Copy.
    func interactionsAllow(_ type: ActivityType) -> Bool {
        type == .copy ? interactions.contains(.copy) : interactions.contains(.share)
    }

    /// Whether `type` may be listed or performed at all (not excluded, allowed by the interactions).
    func admits(_ type: ActivityType) -> Bool {
        !excluded.contains(type) && interactionsAllow(type)
    }
}
