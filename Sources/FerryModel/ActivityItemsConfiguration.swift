/// What a view or scene offers to Copy and Share (Apple's `UIActivityItemsConfiguration`).
public struct ActivityItemsConfiguration: Sendable {
    /// The interactions a configuration allows.
    public struct Interaction: OptionSet, Sendable, Hashable {
        /// The option bits.
        public let rawValue: UInt32
        /// Makes an option set from bits.
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        /// The Share command and share sheet.
        public static let share = Interaction(rawValue: 1 << 0)
        /// The Copy command.
        public static let copy = Interaction(rawValue: 1 << 1)
        /// Share and copy (the default).
        public static let all: Interaction = [.share, .copy]

        /// Lower-case names, in a fixed order: `share`, `copy`.
        public var names: [String] {
            var out: [String] = []
            if contains(.share) { out.append("share") }
            if contains(.copy) { out.append("copy") }
            return out
        }

        /// The interaction with a name, or nil for an unknown name.
        public init?(name: String) {
            switch name {
            case "share": self = .share
            case "copy": self = .copy
            default: return nil
            }
        }
    }

    /// Per-item metadata (Apple's `perItemMetadataProvider` keys).
    public struct ItemMetadata: Sendable, Hashable {
        /// A title for the item.
        public var title: String?
        /// A message body to go with the item (mail, messages).
        public var messageBody: String?

        /// Makes item metadata.
        public init(title: String? = nil, messageBody: String? = nil) {
            self.title = title
            self.messageBody = messageBody
        }
    }

    /// The items, as promises.
    public var itemProviders: [ItemProvider]
    /// Which interactions are allowed; both by default.
    public var supportedInteractions: Interaction = .all
    /// A title for the whole set (Apple's `metadataProvider` title key).
    public var title: String?
    /// Metadata per item, by index into ``itemProviders``; missing entries mean none.
    public var perItemMetadata: [Int: ItemMetadata] = [:]

    /// A configuration of item providers (Apple's `init(itemProviders:)`).
    public init(itemProviders: [ItemProvider]) {
        self.itemProviders = itemProviders
    }

    /// A configuration of objects, each becoming one item provider (Apple's `init(objects:)`).
    /// - Throws: what an object's ``ItemProviderWriting/itemProviderRepresentations(visibility:)`` throws.
    public init(objects: [any ItemProviderWriting]) throws {
        self.itemProviders = try objects.map { object in
            var provider = ItemProvider()
            for representation in try object.itemProviderRepresentations(visibility: .all) { provider.register(representation) }
            return provider
        }
    }

    /// Whether the configuration allows an interaction (Apple's `supportsInteraction`).
    public func supportsInteraction(_ interaction: Interaction) -> Bool {
        supportedInteractions.isSuperset(of: interaction)
    }

    /// The metadata of the item at `index`, or empty metadata.
    public func metadata(forItemAt index: Int) -> ItemMetadata {
        perItemMetadata[index] ?? ItemMetadata()
    }

    /// The distinct types of all items, in first-seen order (what sharing activities match against).
    public var contentTypes: [ContentType] {
        var seen: [ContentType] = []
        for type in itemProviders.flatMap(\.registeredContentTypes) where !seen.contains(type) { seen.append(type) }
        return seen
    }
}
