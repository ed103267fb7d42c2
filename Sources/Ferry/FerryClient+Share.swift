import DBus
import FerryBus
import FerryModel

extension FerryClient {
    static let sharingPath: ObjectPath = "/org/ferry/Sharing"
    static let sharingInterface: InterfaceName = "org.ferry.Sharing1"

    /// Shares these items (the share sheet opens on them): this client writes them to the share
    /// pasteboard right after the share begins — large representations promised when the client
    /// is registered (it must then stay connected until the share ends), loaded now otherwise —
    /// and then lists and performs through the returned session.
    /// - Parameters:
    ///   - items: the items, 1–1000.
    ///   - options: the excluded activity types.
    /// - Returns: the running share.
    /// - Throws: `FerryError`: `.invalidArgument` (no items, an empty item, a malformed excluded
    ///   type), `.tooLarge` (over the share's 16 MiB of held bytes), what a loader throws,
    ///   `.noBroker`.
    ///
    /// D-Bus: `org.ferry.Sharing1.BeginShare`, then `org.ferry.Pasteboard1.SetItems` on the
    /// share pasteboard.
    public func beginShare(_ items: [ItemProvider], options: ShareOptions = .init()) async throws(FerryError) -> ShareSession {
        try await beginShare(items, options: options, origin: nil)
    }

    /// Shares a configuration's items with its title and per-item metadata, which activities
    /// see (``ActivityItems/title``, ``ActivityItems/metadata``), and its supported interactions:
    /// without `.copy`, `org.ferry.activity.copy` is not listed; without `.share`, only it is.
    /// Otherwise as ``beginShare(_:options:)``.
    /// - Throws: as ``beginShare(_:options:)``.
    ///
    /// D-Bus: `org.ferry.Sharing1.BeginShare` with the options `title`, `metadata` and
    /// `interactions`, then
    /// `org.ferry.Pasteboard1.SetItems` on the share pasteboard.
    public func beginShare(_ configuration: ActivityItemsConfiguration, options: ShareOptions = .init())
        async throws(FerryError) -> ShareSession {
        try await beginShare(configuration.itemProviders, options: options, described: configuration, origin: nil)
    }

    /// Shares a connected scene's activity items: the broker asks the scene's app for them (its
    /// scene delegate's ``SceneDelegate/activityItemsConfiguration(for:)``), and that app hears
    /// the completion (``SceneDelegate/scene(_:shareDidComplete:share:)``). The scene's supported
    /// interactions decide: without copy, `org.ferry.activity.copy` is not listed; without share,
    /// only it is.
    /// - Parameters:
    ///   - persistentIdentifier: the scene's session.
    ///   - options: the excluded activity types.
    /// - Returns: the running share.
    /// - Throws: `FerryError`: `.notFound` (an unknown or not-connected scene; "nothing to share"
    ///   when its app provides no items), `.timeout` (the app did not answer in 5 s),
    ///   `.invalidArgument`, `.noBroker`.
    ///
    /// D-Bus: `org.ferry.Sharing1.BeginShare` with the option `scene`.
    public func beginShare(scene persistentIdentifier: String, options: ShareOptions = .init()) async throws(FerryError) -> ShareSession {
        guard !persistentIdentifier.isEmpty else {
            throw FerryError(.invalidArgument, "scene: the persistent identifier is empty")
        }
        var wire = try Self.shareOptions(options)
        wire["scene"] = .string(persistentIdentifier)
        return try await callBeginShare(wire, origin: nil)
    }

    /// Begins a share whose items this client writes (with the title and metadata of
    /// `configuration`, when given); on a failed write the share ends.
    func beginShare(_ items: [ItemProvider], options: ShareOptions, described configuration: ActivityItemsConfiguration? = nil,
                    origin: ShareSession.Origin?) async throws(FerryError) -> ShareSession {
        guard !items.isEmpty else { throw FerryError(.invalidArgument, "items: nothing to share") }
        var wire = try Self.shareOptions(options)
        if let configuration { wire.merge(try Self.descriptionOptions(configuration)) { _, new in new } }
        let session = try await callBeginShare(wire, origin: origin)
        do {
            try await session.pasteboard.writeDragItems(items, append: false)
        } catch {
            try? await session.end()
            throw error
        }
        return session
    }

    /// Calls `BeginShare` and makes the session from its answer.
    private func callBeginShare(_ options: [String: DBusValue], origin: ShareSession.Origin?)
        async throws(FerryError) -> ShareSession {
        // The scene's app gets 5 s to write its items. The answer's sender is the broker that
        // keeps the share: the session talks to it alone, so a broker started later (whose share
        // numbers start again at 1) is never asked about this share.
        let answer = try await FerryError.bridging {
            try await connection.call(Message.methodCall(destination: Self.brokerName, path: Self.sharingPath,
                                                         interface: Self.sharingInterface, member: "BeginShare",
                                                         body: [options.dbusValue]), timeout: .seconds(15))
        }
        let reply = try FerryError.bridgingSync { try answer.body }
        guard reply.count == 2, case .string(let id) = reply[0], !id.isEmpty, case .objectPath(let path) = reply[1],
              let broker = answer.sender else {
            throw FerryError(.bus, "Sharing1.BeginShare answered with an unexpected reply")
        }
        let name = PasteboardName.name(fromObjectPath: path.rawValue) ?? "org.ferry.share.\(id)"
        return ShareSession(client: self, id: id, broker: broker, pasteboardName: name, pasteboardPath: path, origin: origin)
    }

    /// The `BeginShare` options for `options`, the excluded types checked.
    /// - Throws: `FerryError` `.invalidArgument` naming a malformed excluded type.
    static func shareOptions(_ options: ShareOptions) throws(FerryError) -> [String: DBusValue] {
        var wire: [String: DBusValue] = [:]
        guard !options.excludedActivityTypes.isEmpty else { return wire }
        for (index, type) in options.excludedActivityTypes.enumerated() {
            do { try type.validate() } catch {
                throw FerryError(.invalidArgument, "excludedActivityTypes[\(index)]: \(FerryError.converting(error).message)")
            }
        }
        wire["excludedActivityTypes"] = .array(of: .string, options.excludedActivityTypes.map { .string($0.rawValue) })
        return wire
    }

    /// The `BeginShare` options `title`, `metadata` (one entry per item, when any item has some)
    /// and `interactions` (when not both).
    /// - Throws: `FerryError` `.invalidArgument` for metadata that cannot be encoded.
    static func descriptionOptions(_ configuration: ActivityItemsConfiguration) throws(FerryError) -> [String: DBusValue] {
        var wire: [String: DBusValue] = [:]
        if let title = configuration.title { wire["title"] = .string(title) }
        let interactions = configuration.supportedInteractions.intersection(.all)
        if interactions != .all {
            guard !interactions.isEmpty else { throw FerryError(.invalidArgument, "supportedInteractions: neither share nor copy") }
            wire["interactions"] = .array(of: .string, interactions.names.map(DBusValue.string))
        }
        let metadata = configuration.itemProviders.indices.map(configuration.metadata(forItemAt:))
        if metadata.contains(where: { $0 != .init() }) {
            do {
                wire["metadata"] = .array(of: "a{sv}", try metadata.map { try $0.wireDictionary().mapValues(\.dbusValue).dbusValue })
            } catch {
                throw FerryError(.invalidArgument, "metadata: \(FerryError.converting(error).message)")
            }
        }
        return wire
    }

    /// Calls a `org.ferry.Sharing1` method of `broker` (by default whoever is the broker now).
    func callSharing(_ member: MemberName, _ body: [DBusValue] = [], timeout: Duration = .seconds(30),
                     broker: BusName = brokerName) async throws(FerryError) -> [DBusValue] {
        try await FerryError.bridging {
            try await connection.call(destination: broker, path: Self.sharingPath, interface: Self.sharingInterface,
                                      member: member, body: body, timeout: timeout)
        }
    }
}
