extension ItemProvider.RepresentationInfo: WireCodable {
    /// `{type: s, visibility: s, estimatedSize: x?, file: b, openInPlace: b}`.
    public func wireDictionary() throws -> [String: WireValue] {
        var out: [String: WireValue] = [
            "type": .string(contentType.identifier), "visibility": .string(visibility.rawValue),
            "file": .bool(isFile), "openInPlace": .bool(openInPlace),
        ]
        if let estimatedSize { out["estimatedSize"] = .int64(estimatedSize) }
        return out
    }

    /// Reads representation metadata. `type` is required; `visibility` defaults to `all`, the
    /// booleans to false.
    /// - Throws: `FerryModelError` `.invalidArgument` naming `type`, `visibility` or `estimatedSize`.
    public init(wireDictionary: [String: WireValue]) throws {
        let wire = WireReader(wireDictionary)
        let type = try wire.required("type", wire.contentType)
        var visibility = ItemProvider.Visibility.all
        if let name = try wire.string("visibility") {
            guard let known = ItemProvider.Visibility(rawValue: name) else {
                throw FerryModelError.invalid("expected \"all\" or \"ownApp\", found \"\(name)\"", at: "visibility")
            }
            visibility = known
        }
        let size = try wire.int64("estimatedSize")
        if let size, size < 0 { throw FerryModelError.invalid("must not be negative", at: "estimatedSize") }
        self.init(contentType: type, visibility: visibility, estimatedSize: size,
                  isFile: try wire.bool("file") ?? false, openInPlace: try wire.bool("openInPlace") ?? false)
    }
}

extension ItemProvider.Metadata: WireCodable {
    /// `{representations: av of a{sv}, suggestedName: s?, preferredPresentationSize: a{sv}?}`;
    /// the size is left out when zero.
    public func wireDictionary() throws -> [String: WireValue] {
        var out: [String: WireValue] = [
            "representations": .array(try representations.map { .dictionary(try $0.wireDictionary()) })
        ]
        if let suggestedName { out["suggestedName"] = .string(suggestedName) }
        if preferredPresentationSize != .zero {
            out["preferredPresentationSize"] = .dictionary(try preferredPresentationSize.wireDictionary())
        }
        return out
    }

    /// Reads item metadata; `representations` is required (it may be empty), a type may appear once.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key, e.g. `representations[1].type`.
    public init(wireDictionary: [String: WireValue]) throws {
        let wire = WireReader(wireDictionary)
        let entries = try wire.required("representations", wire.dictionaries)
        var seen: Set<ContentType> = []
        let representations = try entries.map { entry in
            let info = try entry.decodeHere(ItemProvider.RepresentationInfo.self)
            guard seen.insert(info.contentType).inserted else {
                throw FerryModelError.invalid("\(info.contentType.identifier) appears twice", at: entry.keyPath("type"))
            }
            return info
        }
        self.init(representations: representations, suggestedName: try wire.string("suggestedName"),
                  preferredPresentationSize: try wire.decode(Size.self, "preferredPresentationSize") ?? .zero)
    }
}

extension ActivityItemsConfiguration {
    /// What a configuration says without its data: items' metadata, per-item metadata, interactions.
    public struct Summary: Sendable, Hashable, WireCodable {
        /// The items' metadata, in order.
        public var items: [ItemProvider.Metadata]
        /// Per-item title and message body, by index.
        public var itemMetadata: [Int: ItemMetadata]
        /// The allowed interactions.
        public var supportedInteractions: Interaction
        /// A title for the whole set.
        public var title: String?

        /// Makes a summary.
        public init(items: [ItemProvider.Metadata], itemMetadata: [Int: ItemMetadata] = [:],
                    supportedInteractions: Interaction = .all, title: String? = nil) {
            self.items = items
            self.itemMetadata = itemMetadata
            self.supportedInteractions = supportedInteractions
            self.title = title
        }

        /// `{items: av of a{sv}, supportedInteractions: as, title: s?}`; each item is an item
        /// metadata dictionary plus optional `title` and `messageBody`.
        public func wireDictionary() throws -> [String: WireValue] {
            var out: [String: WireValue] = [
                "supportedInteractions": .strings(supportedInteractions.names),
                "items": .array(try items.enumerated().map { index, item in
                    var entry = try item.wireDictionary()
                    if let meta = itemMetadata[index] {
                        if let title = meta.title { entry["title"] = .string(title) }
                        if let body = meta.messageBody { entry["messageBody"] = .string(body) }
                    }
                    return .dictionary(entry)
                }),
            ]
            if let title { out["title"] = .string(title) }
            return out
        }

        /// Reads a summary; `items` is required, `supportedInteractions` defaults to both.
        /// - Throws: `FerryModelError` `.invalidArgument` naming the key, e.g.
        ///   `items[0].representations[0].type` or `supportedInteractions[1]`.
        public init(wireDictionary: [String: WireValue]) throws {
            let wire = WireReader(wireDictionary)
            var items: [ItemProvider.Metadata] = []
            var metadata: [Int: ItemMetadata] = [:]
            for (index, entry) in try wire.required("items", wire.dictionaries).enumerated() {
                items.append(try entry.decodeHere(ItemProvider.Metadata.self))
                let meta = ItemMetadata(title: try entry.string("title"), messageBody: try entry.string("messageBody"))
                if meta != ItemMetadata() { metadata[index] = meta }
            }
            var interactions: Interaction = .all
            if let names = try wire.strings("supportedInteractions") {
                interactions = []
                for (index, name) in names.enumerated() {
                    guard let interaction = Interaction(name: name) else {
                        throw FerryModelError.invalid("expected \"share\" or \"copy\", found \"\(name)\"",
                                                      at: KeyPath.index("supportedInteractions", index))
                    }
                    interactions.insert(interaction)
                }
            }
            self.init(items: items, itemMetadata: metadata, supportedInteractions: interactions,
                      title: try wire.string("title"))
        }
    }

    /// The configuration without its data, for the wire. `.ownApp` representations are included
    /// with their visibility; the receiver enforces it.
    public var summary: Summary {
        Summary(items: itemProviders.map { $0.metadata() }, itemMetadata: perItemMetadata,
                supportedInteractions: supportedInteractions, title: title)
    }
}
