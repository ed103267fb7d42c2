import BrokerCore
import DBus
import FerryBus
import FerryModel
import Logging
import FerrySystem

/// The options of `org.ferry.Sharing1.BeginShare`, read and checked.
struct ShareBeginRequest: Sendable {
    /// The connected scene whose activity items are shared.
    var scene: String?
    /// Never listed or performed.
    var excluded: Set<ActivityType> = []
    /// The shared set's title, for items the sharer writes.
    var title: String?
    /// Per-item metadata, for items the sharer writes.
    var metadata: [ActivityItemsConfiguration.ItemMetadata] = []
    /// What the items the sharer writes support (a scene's app gives its own).
    var interactions: ActivityItemsConfiguration.Interaction = .all

    /// The longest title, and each item's title, in UTF-8 bytes.
    static let maximumTitleLength = 1024
    /// The longest message body, in UTF-8 bytes.
    static let maximumMessageBodyLength = 64 << 10

    /// Reads `options`; unknown keys are ignored.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key (`options.excludedActivityTypes[1]`).
    init(_ options: VariantDictionary) throws {
        let dictionary = WireReader(dbus: options, path: "options")
        if let scene = try dictionary.string("scene") {
            guard !scene.isEmpty else { throw FerryModelError(.invalidArgument, "must not be empty", keyPath: "options.scene") }
            self.scene = scene
        }
        for (index, name) in (try dictionary.strings("excludedActivityTypes", of: "activity types") ?? []).enumerated() {
            let type = ActivityType(rawValue: name)
            do { try type.validate() } catch let error as FerryModelError {
                throw error.nested(under: "options.excludedActivityTypes[\(index)]")
            }
            excluded.insert(type)
        }
        try readMetadata(options)
        try readInteractions(dictionary)
    }

    /// `interactions`: only without `scene`; known names, at least one.
    private mutating func readInteractions(_ dictionary: WireReader) throws {
        guard let names = try dictionary.strings("interactions", of: "interactions") else { return }
        let keyPath = "options.interactions"
        guard scene == nil else { throw FerryModelError(.invalidArgument, "the scene's app gives the interactions", keyPath: keyPath) }
        typealias Interaction = ActivityItemsConfiguration.Interaction
        interactions = []
        for (index, name) in names.enumerated() {
            guard let interaction = Interaction(name: name) else {
                throw FerryModelError(.invalidArgument, "unknown interaction \"\(name.printableLine(limit: 40))\" "
                                      + "(known: \(Interaction.all.names.joined(separator: ", ")))", keyPath: "\(keyPath)[\(index)]")
            }
            interactions.insert(interaction)
        }
        guard !interactions.isEmpty else {
            throw FerryModelError(.invalidArgument, "at least one of \(Interaction.all.names.joined(separator: ", "))", keyPath: keyPath)
        }
    }

    /// `title` and `metadata`: only without `scene` (the scene's app gives them then).
    private mutating func readMetadata(_ options: VariantDictionary) throws {
        let dictionary = WireReader(dbus: options, path: "options")
        if let title = try dictionary.string("title") {
            guard scene == nil else { throw FerryModelError(.invalidArgument, "the scene's app gives the title", keyPath: "options.title") }
            guard title.utf8.count <= Self.maximumTitleLength else {
                throw FerryModelError(.tooLarge, "at most \(Self.maximumTitleLength) bytes", keyPath: "options.title")
            }
            self.title = title
        }
        guard let value = options["metadata"] else { return }
        let keyPath = "options.metadata"
        guard scene == nil else { throw FerryModelError(.invalidArgument, "the scene's app gives the metadata", keyPath: keyPath) }
        let entries: [WireValue]
        switch try WireValue(dbusValue: value, keyPath: keyPath) {
        case .array(let elements): entries = elements
        default:
            let found = value.unwrappingVariants.signature.rawValue
            throw FerryModelError(.invalidArgument, "expected a list of dictionaries (aa{sv}), found \(found)", keyPath: keyPath)
        }
        guard entries.count <= PasteboardWrite.maximumItems else {
            throw FerryModelError(.tooLarge, "\(entries.count) entries; at most \(PasteboardWrite.maximumItems)", keyPath: keyPath)
        }
        metadata = try entries.enumerated().map { index, entry in
            let at = "\(keyPath)[\(index)]"
            guard case .dictionary(let wire) = entry else {
                throw FerryModelError(.invalidArgument, "expected a dictionary (a{sv})", keyPath: at)
            }
            let item: ActivityItemsConfiguration.ItemMetadata
            do { item = try .init(wireDictionary: wire) } catch let error as FerryModelError { throw error.nested(under: at) }
            guard (item.title?.utf8.count ?? 0) <= Self.maximumTitleLength else {
                throw FerryModelError(.tooLarge, "at most \(Self.maximumTitleLength) bytes", keyPath: at + ".title")
            }
            guard (item.messageBody?.utf8.count ?? 0) <= Self.maximumMessageBodyLength else {
                throw FerryModelError(.tooLarge, "at most \(Self.maximumMessageBodyLength) bytes", keyPath: at + ".messageBody")
            }
            return item
        }
    }
}

extension ShareService {
    /// `BeginShare`: a share starts. Its pasteboard is made; with a scene, the scene's app writes
    /// its activity items (`Client1.ProvideActivityItems`) before the reply.
    /// - Returns: the share's id and the share pasteboard's object path.
    /// - Throws: `FerryModelError` `.notFound` (unknown or not connected scene, nothing to share),
    ///   `.timeout` (the scene's app did not answer within 5 s), `.unavailable` (a party went
    ///   away meanwhile).
    func beginShare(_ request: ShareBeginRequest, caller: Caller) async throws -> (share: String, pasteboard: ObjectPath) {
        var source: Share.Source?
        if let sceneID = request.scene {
            guard let found = await scenes.shareSource(sceneID) else {
                throw FerryModelError(.notFound, "there is no connected scene \"\(sceneID.printableLine(limit: 80))\"",
                                      keyPath: "options.scene")
            }
            source = found
        }
        let number = nextNumber
        nextNumber += 1
        let pasteboard = TransientPasteboard.Kind.share.name(number)
        let access: TransientPasteboardAccess
        if let source {
            access = TransientPasteboardAccess(writers: [source.uniqueName], metadataReaders: [caller.uniqueName, source.uniqueName],
                                               contentReaders: [source.uniqueName])
        } else {
            access = TransientPasteboardAccess(writers: [caller.uniqueName], metadataReaders: [caller.uniqueName],
                                               contentReaders: [caller.uniqueName])
        }
        let pasteboardPath = try await pasteboards.createTransientPasteboard(pasteboard, access: access)
        var share = Share(number: number, pasteboard: pasteboard, pasteboardPath: pasteboardPath, sharer: caller.uniqueName,
                          source: source, sourceApp: source?.appID ?? registry.app(of: caller.uniqueName)?.appID,
                          excluded: request.excluded, began: .now)
        share.title = request.title
        share.metadata = request.metadata
        share.interactions = request.interactions
        if let source {
            do {
                let provided = try await provideItems(number: number, source: source, pasteboardPath: pasteboardPath)
                share.title = provided.title
                share.interactions = provided.interactions
                share.metadata = provided.metadata
            } catch {
                // The app may have written (and promised) items before its answer failed or came
                // too late: like every share it was asked about, this one ends with ShareCompleted,
                // so the app lets them go.
                shares[number] = share
                await end(number, .dismissed("the share did not begin: \(error)"), reason: "no items from \(source.appID)")
                throw error
            }
        }
        shares[number] = share
        idleWake.signal()
        let what = source.map { "scene \($0.sceneID) of \($0.appID)" } ?? "items of \(share.sourceApp ?? caller.uniqueName)"
        logger.info("share \(number) began: \(what)")
        // The sharer or the source may have left while the items were written: then their
        // NameOwnerChanged has passed already.
        for name in Set([caller.uniqueName] + (source.map { [$0.uniqueName] } ?? []))
        where (try? await connection.owner(of: BusName(name))) == nil {
            await end(number, .dismissed("\(name) went away while the share began"), reason: "\(name) went away")
            throw FerryModelError(.unavailable, "\(name) went away while share \(number) began")
        }
        return (share.id, pasteboardPath)
    }

    /// What the source app answered `ProvideActivityItems`.
    struct ProvidedItems: Sendable {
        var title: String?
        var interactions: ActivityItemsConfiguration.Interaction
        var metadata: [ActivityItemsConfiguration.ItemMetadata]
    }

    /// `Client1.ProvideActivityItems`: the scene's app writes its activity items to the share pasteboard.
    /// - Throws: `FerryModelError` `.notFound` "nothing to share" for no items (or no interaction
    ///   at all), `.timeout`, `.unavailable`.
    private func provideItems(number: Int, source: Share.Source, pasteboardPath: ObjectPath) async throws -> ProvidedItems {
        let reply = try await source.callbacks.call("ProvideActivityItems", [
            .string(String(number)), .string(source.sceneID), .objectPath(pasteboardPath), VariantDictionary().dbusValue,
        ], timeout: Self.provideTimeout)
        guard reply.count == 1, let result = try? VariantDictionary(dbusValue: reply[0].unwrappingVariants) else {
            throw FerryModelError(.unavailable, "\(source.appID) answered ProvideActivityItems with "
                                  + "\(reply.map(\.signature.rawValue).joined()) instead of a{sv}")
        }
        let dictionary = WireReader(dbus: result, path: "result")
        let nothing = FerryModelError(.notFound, "nothing to share: \(source.appID) provided no items for scene \(source.sceneID)")
        guard let count = try? dictionary.int64("count"), count > 0 else { throw nothing }
        var provided = ProvidedItems(title: try? dictionary.string("title"), interactions: .all, metadata: [])
        if let names = try? dictionary.strings("interactions") {
            typealias Interaction = ActivityItemsConfiguration.Interaction
            provided.interactions = Interaction(names.compactMap { Interaction(name: $0) })
            guard !provided.interactions.isEmpty else { throw nothing }
        }
        // An entry that does not decode keeps its place, empty: metadata go with items by index.
        if case .array(let entries)? = try? dictionary.lookup("metadata") {
            provided.metadata = entries.map { entry in
                guard case .dictionary(let wire) = entry,
                      let metadata = try? ActivityItemsConfiguration.ItemMetadata(wireDictionary: wire) else { return .init() }
                return metadata
            }
        }
        return provided
    }
}
