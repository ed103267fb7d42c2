import DBus
import FerryBus
import FerryModel
import Synchronization

/// What sharing asks of the app: its application activities, registered with the broker, and
/// the broker's `org.ferry.Client1` sharing calls as delegate calls.
extension Application {
    /// Asks the delegate for its activities (``ApplicationDelegate/applicationActivities(for:)``),
    /// checks them and keeps them for the broker's calls.
    /// - Returns: the activities to register.
    /// - Throws: `FerryError` `.invalidArgument` naming the bad one (`activities[1].title`) or a
    ///   repeated type; `.tooLarge` past 64.
    @discardableResult
    func prepareActivities() throws(FerryError) -> [any ApplicationActivity] {
        let activities = delegate.applicationActivities(for: self)
        guard activities.count <= Self.maximumActivities else {
            throw FerryError(.tooLarge, "activities: \(activities.count) activities; at most \(Self.maximumActivities)")
        }
        var seen: Set<ActivityType> = []
        for (index, activity) in activities.enumerated() {
            do { try activity.activity.validate() } catch {
                throw FerryError(.invalidArgument, "activities[\(index)].\(FerryError.converting(error).message)")
            }
            guard seen.insert(activity.activity.type).inserted else {
                throw FerryError(.invalidArgument, "activities[\(index)].activityType: \(activity.activity.type) is listed twice")
            }
        }
        applicationActivities.withLock { $0 = activities }
        return activities
    }

    /// The most activities an app registers (`Sharing1.RegisterActivities`).
    static let maximumActivities = 64

    /// Registers the kept activities with the broker; nothing when there are none.
    /// - Throws: `FerryError` from the broker (`.permissionDenied`, `.invalidArgument`), `.noBroker`.
    ///
    /// D-Bus: `org.ferry.Sharing1.RegisterActivities`.
    func registerActivities() async throws(FerryError) {
        let activities = applicationActivities.withLock { $0 }
        guard !activities.isEmpty else { return }
        var entries: [DBusValue] = []
        for activity in activities {
            entries.append(try FerryError.bridgingSync { try activity.activity.dbusValue() })
        }
        _ = try await client.callSharing("RegisterActivities", [.array(of: "a{sv}", entries)])
    }

    /// After a re-registration with a broker that restarted: the delegate's activities again, to
    /// the new broker. Failures are dropped (the app just offers nothing there).
    func reregisterActivities() async {
        guard (try? prepareActivities()) != nil else { return }
        try? await registerActivities()
    }

    /// The kept activity of a type.
    func applicationActivity(_ type: ActivityType) -> (any ApplicationActivity)? {
        applicationActivities.withLock { all in all.first { $0.activity.type == type } }
    }

    // MARK: Source

    /// `ProvideActivityItems`: the scene delegate's `activityItemsConfiguration`, written on the
    /// share pasteboard (large representations promised, served until `ShareCompleted`).
    /// - Returns: count (0: nothing to share — no configuration, no items, or neither the share
    ///   nor the copy interaction), title, interactions, metadata.
    /// - Throws: `FerryError` `.invalidArgument` for a title or metadata holding NUL (before anything
    ///   is written); from the write (`.tooLarge`, `.invalidArgument` for an empty item …).
    func provideActivityItems(_ share: String, scene: Scene, pasteboard path: ObjectPath)
        async throws(FerryError) -> [String: DBusValue] {
        guard let name = PasteboardName.name(fromObjectPath: path.rawValue) else {
            throw FerryError(.invalidArgument, "pasteboard: \(path.rawValue) is not a pasteboard's object path")
        }
        guard let configuration = scene.delegate.activityItemsConfiguration(for: scene),
              !configuration.itemProviders.isEmpty,
              !configuration.supportedInteractions.intersection(.all).isEmpty else {
            return ["count": .uint32(0)]
        }
        let providers = configuration.itemProviders
        // The answer is made (and its strings checked) first: an answer that cannot be sent
        // would leave promises for a share the broker never completes.
        func checked(_ text: String, _ key: String) throws(FerryError) -> String {
            guard !text.utf8.contains(0) else { throw FerryError(.invalidArgument, "activityItemsConfiguration.\(key): holds NUL") }
            return text
        }
        var metadata: [DBusValue] = []
        for index in providers.indices {
            let item = configuration.metadata(forItemAt: index)
            _ = try checked(item.title ?? "", "perItemMetadata[\(index)].title")
            _ = try checked(item.messageBody ?? "", "perItemMetadata[\(index)].messageBody")
            metadata.append(try FerryError.bridgingSync { try item.dbusValue() })
        }
        var result: [String: DBusValue] = [
            "count": .uint32(UInt32(clamping: providers.count)),
            "interactions": .array(of: .string, configuration.supportedInteractions.names.map(DBusValue.string)),
            "metadata": .array(of: "a{sv}", metadata),
        ]
        if let title = configuration.title { result["title"] = .string(try checked(title, "title")) }
        let pasteboard = Pasteboard(source: .client(client), name: name, path: path)
        providedShares.withLock { _ = $0.insert(share) }
        do {
            try await pasteboard.writeDragItems(providers, append: false)
        } catch {
            providedShares.withLock { _ = $0.remove(share) }
            await releasePromises(ofShare: share)
            throw error
        }
        return result
    }

    /// `ShareCompleted`: the promised items of the share go, then the scene's delegate hears the
    /// completion. A scene that is gone hears nothing.
    func shareCompleted(_ share: String, scene identifier: String, completion: ShareCompletion) async {
        providedShares.withLock { _ = $0.remove(share) }
        await releasePromises(ofShare: share)
        guard let scene = scene(for: identifier) else { return }
        await scene.delegate.scene(scene, shareDidComplete: completion, share: share)
    }

    /// The broker that ran this app's shares is gone: the promised items of those its scenes
    /// provided go (a new broker numbers its shares from 1 again).
    func forgetShares() async {
        let shares = providedShares.withLock { all in defer { all = [] }; return all }
        for share in shares { await releasePromises(ofShare: share) }
    }

    /// The share's pasteboard is gone: its promised providers may go (after reads in flight).
    private func releasePromises(ofShare share: String) async {
        if let path = try? ObjectPath(PasteboardName.objectPath("org.ferry.share.\(share)")) {
            client.promises.reconcile(path: path, live: [])
        }
    }

    // MARK: Activities

    /// `CanPerformActivities`: the asked types this app registered whose activity's
    /// `canPerform(with:)` holds for the items (metadata only, no providers).
    func performableActivities(_ types: [ActivityType], items: ActivityItems) -> [ActivityType] {
        types.filter { type in applicationActivity(type)?.canPerform(with: items) ?? false }
    }

    /// `PerformActivity`: the activity's `perform(with:)`, its providers reading the share
    /// pasteboard as a user action (allowed during this call only), cancelled when the broker's
    /// time limit passes (it has stopped waiting then).
    /// - Returns: the result's `{completed, message, returnedItems}`.
    /// - Throws: `FerryError` `.notFound` for a type this app did not register, what the
    ///   pasteboard's metadata throws, `.timeout` past the limit; any error `perform` throws, as it is.
    func performActivity(_ type: ActivityType, share: String, info: DBusValue) async throws -> DBusValue {
        guard let activity = applicationActivity(type) else {
            throw FerryError(.notFound, "\(appID) has no activity \(type)")
        }
        let described = try ActivityItems.decode(share: share, info: info)
        let path = try FerryError.bridgingSync { try ObjectPath(PasteboardName.objectPath(described.pasteboardName)) }
        let pasteboard = Pasteboard(source: .client(client), name: described.pasteboardName, path: path)
        let stored = try await pasteboard.items
        let reads = PasteReads()
        let providers = stored.enumerated().map { index, item in
            reads.provider(for: item, index: index, on: pasteboard, changeCount: nil)
        }
        let items = ActivityItems(share: share, itemTypes: described.itemTypes, title: described.title,
                                  metadata: described.metadata, sourceApp: described.sourceApp,
                                  pasteboardName: described.pasteboardName, itemProviders: providers)
        let limit = Self.timeLimit(info)
        let result = try await withThrowingTaskGroup(of: ActivityResult?.self) { group in
            group.addTask { try await activity.perform(with: items) }
            group.addTask {
                try await Task.sleep(for: limit)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let result = first else {
                throw FerryError(.timeout, "\(type) did not finish within the broker's \(limit): cancelled")
            }
            return result
        }
        return try result.dbusValue()
    }

    /// How long `perform(with:)` may run: the `timeLimit` (seconds) the broker sends in the
    /// `PerformActivity` info, 30 s when it sends none.
    static func timeLimit(_ info: DBusValue) -> Duration {
        guard let dictionary = try? VariantDictionary(dbusValue: info.unwrappingVariants),
              case .double(let seconds)? = dictionary["timeLimit"]?.unwrappingVariants,
              seconds.isFinite, seconds > 0 else { return .seconds(30) }
        return .milliseconds(Int64(min(seconds, 86_400) * 1000))
    }
}
