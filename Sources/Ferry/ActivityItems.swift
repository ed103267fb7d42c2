import FerryModel

/// The items of a share as an activity sees them (Apple's `activityItems` of
/// `prepare(withActivityItems:)`): their types and metadata, and, while it performs, providers
/// that load them from the share pasteboard.
public struct ActivityItems: Sendable {
    /// The share's id (`"3"`).
    public let share: String
    /// Each item's content types, in order.
    public let itemTypes: [[ContentType]]
    /// The shared set's title, when the source gave one.
    public let title: String?
    /// Per-item metadata, one per item (empty metadata when the source gave none).
    public let metadata: [ActivityItemsConfiguration.ItemMetadata]
    /// The app whose scene is shared; nil when a tool shares its own items.
    public let sourceApp: String?
    /// The share pasteboard's name (`org.ferry.share.3`).
    public let pasteboardName: String
    /// In ``ApplicationActivity/perform(with:)`` only: one provider per item whose loaders read
    /// the share pasteboard (as a drop's do), only during that call; empty in
    /// ``ApplicationActivity/canPerform(with:)``.
    public let itemProviders: [ItemProvider]

    /// Describes a share's items.
    public init(share: String, itemTypes: [[ContentType]], title: String? = nil,
                metadata: [ActivityItemsConfiguration.ItemMetadata] = [], sourceApp: String? = nil,
                pasteboardName: String, itemProviders: [ItemProvider] = []) {
        self.share = share
        self.itemTypes = itemTypes
        self.title = title
        self.metadata = metadata.count >= itemTypes.count ? metadata
            : metadata + Array(repeating: ActivityItemsConfiguration.ItemMetadata(), count: itemTypes.count - metadata.count)
        self.sourceApp = sourceApp
        self.pasteboardName = pasteboardName
        self.itemProviders = itemProviders
    }

    /// The number of items.
    public var count: Int { itemTypes.count }

    /// Every type of every item, first appearance first.
    public var contentTypes: [ContentType] {
        var seen: [ContentType] = []
        for type in itemTypes.joined() where !seen.contains(type) { seen.append(type) }
        return seen
    }
}

/// What an activity answers when it has performed (Apple's `activityDidFinish(_:)` and the
/// returned items of the completion handler).
public struct ActivityResult: Sendable, Hashable {
    /// Whether the activity did its work (false: the user or the app declined).
    public var completed: Bool
    /// A one-line summary for people.
    public var message: String?
    /// What the activity made, as string dictionaries (paths, note ids, …), in order.
    public var returnedItems: [[String: String]]

    /// Describes an activity's result.
    public init(completed: Bool = true, message: String? = nil, returnedItems: [[String: String]] = []) {
        self.completed = completed
        self.message = message
        self.returnedItems = returnedItems
    }
}
