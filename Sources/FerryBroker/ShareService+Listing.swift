import BrokerCore
import DBus
import FerryBus
import FerryModel
import Logging

extension ShareService {
    /// An activity that matches a share's items by type, before its app is asked: a built-in
    /// (no registration) or an app's.
    struct Candidate: Sendable {
        var activity: ActivityDescription
        var registration: ActivityRegistration?

        var listed: ListedActivity {
            ListedActivity(type: activity.type, title: activity.title, category: activity.category,
                           app: registration?.appID)
        }
    }

    /// `ListActivities`: the activities that can perform with the share's items, in order.
    /// - Throws: `FerryModelError` `.notFound` (ended), `.permissionDenied` (not the sharer).
    func listActivities(_ id: String, sender: String) async throws -> [ListedActivity] {
        let share = try share(id, sender: sender)
        let found = try await performableCandidates(share, reusing: nil)
        guard shares[share.number] != nil else { throw Self.ended(share.number) }
        shares[share.number]?.able = found.able
        return found.candidates.map(\.listed)
    }

    /// The candidates performable now, in listing order, and the app activities whose apps said
    /// yes. Apps are asked `CanPerformActivities` about the activities `answers` does not cover.
    /// - Parameters:
    ///   - answers: yeses to reuse (the last listing's, for Perform); nil asks every app.
    ///   - type: only this activity (Perform); nil for all.
    /// - Throws: `FerryModelError` `.notFound` when the share pasteboard is gone.
    func performableCandidates(_ share: Share, reusing answers: Set<Share.Able>?,
                               only type: ActivityType? = nil) async throws -> (candidates: [Candidate], able: Set<Share.Able>) {
        let items = try await pasteboards.transientItems(share.pasteboard)
        guard !items.isEmpty else { return ([], []) }
        var candidates = candidates(share, items: items)
        if let type { candidates = candidates.filter { $0.activity.type == type } }
        var questions: [String: (registration: ActivityRegistration, types: [ActivityType])] = [:]
        var able: Set<Share.Able> = []
        for candidate in candidates {
            guard let registration = candidate.registration else { continue }
            let key = Share.Able(type: candidate.activity.type, uniqueName: registration.uniqueName)
            if let answers, answers.contains(key) {
                able.insert(key)
            } else {
                questions[registration.uniqueName, default: (registration, [])].types.append(candidate.activity.type)
            }
        }
        able.formUnion(await askApps(share, items: items, questions: Array(questions.values)))
        let performable = candidates.filter { candidate in
            guard let registration = candidate.registration else { return true }
            return able.contains(Share.Able(type: candidate.activity.type, uniqueName: registration.uniqueName))
        }
        return (Self.ordered(performable, sourceApp: share.sourceApp), able)
    }

    /// The built-ins and registered app activities that match the items by type and count, are
    /// not excluded and are allowed by the items' interactions.
    func candidates(_ share: Share, items: [StoredItem]) -> [Candidate] {
        // Copy and save-to-folder hand the bytes to the sharer: only what it may see counts for
        // them. open-in-new-scene reads the user activity itself.
        let brokerTypes = Self.itemTypes(items, visibleTo: nil)
        let sharerTypes = Self.itemTypes(items, sharerApp: registry.app(of: share.sharer)?.appID)
        var out = ActivityDescription.builtIns
            .filter { share.admits($0.type) && $0.canPerform(withItemTypes: $0.type == .openInNewScene ? brokerTypes : sharerTypes) }
            .map { Candidate(activity: $0, registration: nil) }
        for registration in currentRegistrations() {
            let types = Self.itemTypes(items, visibleTo: registration.appID)
            for activity in registration.activities where share.admits(activity.type) && activity.canPerform(withItemTypes: types) {
                out.append(Candidate(activity: activity, registration: registration))
            }
        }
        return out
    }

    /// Asks each app, concurrently, which of its activities can perform (`CanPerformActivities`,
    /// 250 ms); it may read the items' metadata from now on. No answer or a failure: none.
    private func askApps(_ share: Share, items: [StoredItem],
                         questions: [(registration: ActivityRegistration, types: [ActivityType])]) async -> Set<Share.Able> {
        guard !questions.isEmpty else { return [] }
        pasteboards.updateTransientAccess(share.pasteboard) { access in
            for question in questions { access.metadataReaders.insert(question.registration.uniqueName) }
        }
        var calls: [(uniqueName: String, appID: String, callbacks: AppCallbacks, types: [ActivityType], info: DBusValue)] = []
        for question in questions {
            calls.append((question.registration.uniqueName, question.registration.appID, await callbacks(of: question.registration),
                          question.types, info(share, items: items, visibleTo: question.registration.appID)))
        }
        let shareID = share.id
        let logger = logger
        return await withTaskGroup(of: Set<Share.Able>.self) { group in
            for call in calls {
                group.addTask {
                    let asked = Set(call.types)
                    do {
                        let reply = try await call.callbacks.call("CanPerformActivities", [
                            .string(shareID), .array(of: .string, call.types.map { .string($0.rawValue) }), call.info,
                        ], timeout: Self.canPerformTimeout)
                        guard reply.count == 1, case .strings(let names)? = try? WireValue(dbusValue: reply[0]) else {
                            let signature = reply.map(\.signature.rawValue).joined()
                            logger.warning("answered CanPerformActivities with (\(signature)) instead of (as)", metadata: ["app": "\(call.appID)"])
                            return []
                        }
                        return Set(names.map(ActivityType.init(rawValue:)).filter(asked.contains)
                            .map { Share.Able(type: $0, uniqueName: call.uniqueName) })
                    } catch {
                        return []
                    }
                }
            }
            var able: Set<Share.Able> = []
            for await answer in group { able.formUnion(answer) }
            return able
        }
    }

    /// Each item's types as an app sees them (nil: the broker): representations whose bytes can
    /// still be had, `ownApp` ones only for the app that wrote the item.
    static func itemTypes(_ items: [StoredItem], visibleTo appID: String?) -> [[ContentType]] {
        items.map { item in
            item.representations.filter { representation in
                guard representation.storage != .unavailable else { return false }
                return appID == nil || representation.visibility == .all || item.sourceAppID == appID
            }.map(\.contentType)
        }
    }

    /// Each item's types as the sharer may have them (``PasteboardCaller/visibleRepresentations(of:)``):
    /// representations whose bytes can still be had, `ownApp` ones only when the sharer's app
    /// (nil: it has none) wrote the item.
    static func itemTypes(_ items: [StoredItem], sharerApp: String?) -> [[ContentType]] {
        items.map { item in
            item.representations.filter { representation in
                guard representation.storage != .unavailable else { return false }
                return representation.visibility == .all || (sharerApp != nil && item.sourceAppID == sharerApp)
            }.map(\.contentType)
        }
    }

    /// Listing order: the source app's own activities first (by title), then the built-ins in
    /// their order, then the other apps' activities by app id, then title.
    static func ordered(_ candidates: [Candidate], sourceApp: String?) -> [Candidate] {
        func rank(_ candidate: Candidate) -> Int {
            guard let app = candidate.registration?.appID else { return 1 }
            return app == sourceApp ? 0 : 2
        }
        let builtInOrder = ActivityDescription.builtIns.map(\.type)
        return candidates.enumerated().sorted { a, b in
            let (ra, rb) = (rank(a.element), rank(b.element))
            if ra != rb { return ra < rb }
            if ra == 1 {
                let (ia, ib) = (builtInOrder.firstIndex(of: a.element.activity.type), builtInOrder.firstIndex(of: b.element.activity.type))
                return (ia ?? 0) < (ib ?? 0)
            }
            let (appA, appB) = (a.element.registration?.appID ?? "", b.element.registration?.appID ?? "")
            if appA != appB { return appA < appB }
            if a.element.activity.title != b.element.activity.title { return a.element.activity.title < b.element.activity.title }
            return a.offset < b.offset
        }.map(\.element)
    }

    /// The `info` of `CanPerformActivities` and `PerformActivity` (Client1): the pasteboard's
    /// name, the number of items, every type and each item's, title, per-item metadata, source
    /// app; for `PerformActivity` also how long the app has.
    func info(_ share: Share, items: [StoredItem], visibleTo appID: String?, timeLimit: Duration? = nil) -> DBusValue {
        let itemTypes = Self.itemTypes(items, visibleTo: appID)
        var all: [String] = []
        var seen: Set<String> = []
        for type in itemTypes.joined() where seen.insert(type.identifier).inserted { all.append(type.identifier) }
        var entries: VariantDictionary = [
            "pasteboard": .string(share.pasteboard),
            "items": .uint32(UInt32(clamping: items.count)),
            "types": .array(of: .string, all.map(DBusValue.string)),
            "itemTypes": .array(of: "as", itemTypes.map { types in .array(of: .string, types.map { .string($0.identifier) }) }),
            "metadata": .array(of: "a{sv}", items.indices.map { index in
                let metadata = share.metadata.indices.contains(index) ? share.metadata[index] : .init()
                return ((try? metadata.wireDictionary()) ?? [:]).dbusValue
            }),
            "sourceApp": .string(share.sourceApp ?? ""),
        ]
        if let title = share.title { entries["title"] = .string(title) }
        if let timeLimit { entries["timeLimit"] = .double(timeLimit / .seconds(1)) }
        return entries.dbusValue
    }

    static func ended(_ number: Int) -> FerryModelError {
        FerryModelError(.notFound, "share \(number) has ended")
    }
}
