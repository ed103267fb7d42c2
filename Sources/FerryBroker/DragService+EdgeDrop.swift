#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import BrokerCore
import DBus
import FerryModel
import Synchronization

extension DragService {
    /// What an edge drop would open: the app, and the activity or URLs for its new scene's
    /// connection options.
    struct EdgeDropPlan: Sendable {
        var appID: String
        var activity: UserActivity?
        var urls: [URL] = []
    }

    /// Whether an edge drop could open a scene for the drag's items now. The app is found once
    /// per set of items; reading the first item's activity may ask the source app (a promised
    /// representation): a Move waits for that at most 250 ms, then answers without the edge
    /// while the app is still found for the next moves. Whether that app can open a scene now
    /// (a single-scene app that has its scene cannot) is asked on every move, so that the move
    /// never promises a drop that would fail.
    func canOpenAtEdge(_ number: Int) async -> Bool {
        guard let session = sessions[number] else { return false }
        let items = session.isAppIcon ? [] : ((try? await pasteboards.transientItems(session.pasteboard)) ?? []).map(\.id)
        let plan: EdgeDropPlan?
        if let check = sessions[number]?.edgeCheck, check.items == items {
            guard case .found(let found) = check.state else { return false }
            plan = found
        } else {
            sessions[number]?.edgeCheck = DragSession.EdgeCheck(items: items, state: .finding)
            let found = await Self.within(Self.proposalTimeout) {
                let plan = await self.edgeDropPlan(session).plan
                await self.foundEdgeCheck(number, items: items, plan: plan)
                return plan
            }
            guard let found else { return false }
            plan = found
        }
        guard let plan else { return false }
        return await scenes.edgeDropRefusal(appID: plan.appID, activity: plan.activity) == nil
    }

    /// Keeps what ``canOpenAtEdge(_:)`` found, unless the items changed meanwhile.
    private func foundEdgeCheck(_ number: Int, items: [UUID], plan: EdgeDropPlan?) {
        guard sessions[number]?.edgeCheck?.items == items else { return }
        sessions[number]?.edgeCheck?.state = .found(plan)
    }

    /// The app an edge drop opens, as the DragManager1 XML says: an app-icon drag's app; else
    /// the app declaring the user activity of the first item carrying one (the source app
    /// first, then the known apps by id); else the first app by id whose
    /// `CFBundleDocumentTypes` accept a file item's type. Otherwise why none can.
    func edgeDropPlan(_ session: DragSession) async -> (plan: EdgeDropPlan?, reason: String?) {
        if session.isAppIcon { return (EdgeDropPlan(appID: session.sourceApp), nil) }
        let items: [StoredItem]
        do {
            items = try await pasteboards.transientItems(session.pasteboard)
        } catch {
            return (nil, "the drag's items are gone")
        }
        guard !items.isEmpty else { return (nil, "the drag has no items") }
        let manifests = await scenes.knownManifests
        let byID = manifests.keys.sorted()
        var reason: String?
        if let index = items.firstIndex(where: { item in
            item.representations.contains { $0.contentType.conforms(to: .userActivity) && $0.storage != .unavailable }
        }) {
            let activity = await readActivity(session, item: index)
            if let activity {
                if let app = await scenes.appDeclaring(activityType: activity.activityType, preferring: session.sourceApp) {
                    return (EdgeDropPlan(appID: app, activity: activity), nil)
                }
                reason = "no app declares the activity type \"\(activity.activityType)\" in NSUserActivityTypes"
            } else {
                reason = "the user activity of item \(index) cannot be read"
            }
        }
        for (index, item) in items.enumerated()
        where item.representations.contains(where: { $0.contentType.conforms(to: .fileURL) }) {
            guard let bytes = try? await pasteboards.transientBytes(session.pasteboard, item: index, type: .fileURL, limit: 64 * 1024),
                  let text = String(validating: bytes, as: UTF8.self),
                  let url = URL(string: text), url.isFileURL else { continue }
            var types = item.representations.map(\.contentType).filter {
                !$0.conforms(to: .url) && !$0.conforms(to: .userActivity)
            }
            if !url.pathExtension.isEmpty, let type = ContentType(filenameExtension: url.pathExtension) { types.append(type) }
            for type in types {
                if let app = byID.first(where: { manifests[$0]?.opensDocuments(of: type) == true }) {
                    return (EdgeDropPlan(appID: app, urls: [url]), nil)
                }
            }
            reason = reason ?? "no app opens documents of type \(types.first?.identifier ?? "of \(url.lastPathComponent)")"
        }
        return (nil, reason ?? "no item carries a user activity or a file")
    }

    /// The user activity of an item (held or promised), nil when unreadable.
    private func readActivity(_ session: DragSession, item: Int) async -> UserActivity? {
        guard let bytes = try? await pasteboards.transientBytes(session.pasteboard, item: item, type: .userActivity,
                                                           limit: Self.activityLimit) else { return nil }
        return try? UserActivity(archivedData: Data(bytes))
    }

    /// The value of `operation`, or nil when it takes longer than `limit` (it goes on).
    static func within<T: Sendable>(_ limit: Duration, _ operation: @escaping @Sendable () async -> T) async -> T? {
        let task = Task { await operation() }
        return await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
            let pending = FirstAnswer(continuation)
            Task {
                pending.resume(await task.value)
            }
            Task {
                try? await Task.sleep(for: limit)
                pending.resume(nil)
            }
        }
    }
}

/// A continuation resumed by the first of several answers; the others are dropped.
private final class FirstAnswer<T: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<T?, Never>?>

    init(_ continuation: CheckedContinuation<T?, Never>) {
        self.continuation = Mutex(continuation)
    }

    func resume(_ value: T?) {
        continuation.withLock { $0.take() }?.resume(returning: value)
    }
}
