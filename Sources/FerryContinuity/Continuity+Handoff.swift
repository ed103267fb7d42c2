import Foundation
import Dispatch
import FerryBroker
import FerryModel
import Logging
import Synchronization

/// A device's Handoff advertisement (sealed in the `ferry_activity` bucket under the device's
/// key): its current activity without `userInfo`, or none.
struct Advertisement: Codable, Sendable, Equatable {
    /// The activity on offer.
    struct Offer: Codable, Sendable, Equatable {
        /// Stable while the same activity stays current; a new one for another activity.
        var id: String
        var appID: String
        var activityType: String
        var title: String?
        var targetContentIdentifier: String?
        /// When it stops being offered (milliseconds since 1970).
        var expires: UInt64
    }

    var device: String
    var stamp: ClockStamp
    /// nil: the device offers nothing now.
    var offer: Offer?
}

/// A request for the current activity of a device, naming the offer seen.
struct ActivityRequest: Codable, Sendable {
    var from: String
    var id: String
}

/// Handoff's part of ``Continuity/State``.
struct HandoffState {
    var bucket: EngineLink.Bucket?
    var watch: EngineLink.Watch?
    /// What this device advertised last, when, and the scene it came from.
    var advertised: Advertisement?
    var advertisedAt: ContinuousClock.Instant?
    var session: String?
    /// The other devices' offers, by device.
    var remote: [String: RemoteActivity] = [:]
    /// Whether the refresh timer runs.
    var refreshing = false
}

/// Handoff (issue #22 item 3): the current activity of the scene the user is in is advertised
/// to the user's other devices; one of them continues it by asking this device for it.
extension Continuity: HandoffHooks {
    enum ActivityStatus {
        static let activity: UInt8 = 0
        static let refused: UInt8 = 1
    }

    // MARK: - Advertising (the source's side)

    /// HandoffHooks: the scenes' current activity may have changed (on the scene actor).
    package func currentActivityChanged() {
        advertising.yield(())
    }

    func startHandoff() {
        guard scenes != nil, let bucket = state.withLock({ $0.handoff.bucket }) else { return }
        do {
            let watch = try bucket.watchAll { [weak self] key, value in self?.receivedAdvertisement(key: key, value: value) }
            let old = state.withLock { state in defer { state.handoff.watch = watch }; return state.handoff.watch }
            old?.stop()
        } catch {
            logger.error("continuity: cannot watch the activity bucket: \(error)")
        }
        // What this device offers now (again, after a reconnect), and refreshed before it expires.
        state.withLock { $0.handoff.advertised = nil }
        advertising.yield(())
        let first = state.withLock { state in defer { state.handoff.refreshing = true }; return !state.handoff.refreshing }
        if first { scheduleRefresh() }
    }

    func stopHandoff() {
        let watch = state.withLock { state in defer { state.handoff.watch = nil; state.handoff.bucket = nil }; return state.handoff.watch }
        watch?.stop()
    }

    /// Asks again every half lifetime, so an activity that stays current stays offered.
    func scheduleRefresh() {
        let half = configuration.handoffLifetime / 2
        let wait = Double(half.components.seconds) + Double(half.components.attoseconds) / 1e18
        queue.asyncAfter(deadline: .now() + wait) { [weak self] in
            guard let self, !self.state.withLock({ $0.stopped }) else { return }
            self.advertising.yield(())
            self.scheduleRefresh()
        }
    }

    /// Advertises the current activity when it differs from what was advertised, or renews it;
    /// withdraws it when there is none.
    func advertiseCurrent() async {
        guard let scenes else { return }
        let current = await scenes.currentHandoffActivity()
        let now = ContinuousClock.now
        let (bucket, previous, previousAt, previousSession) = state.withLock {
            ($0.handoff.bucket, $0.handoff.advertised, $0.handoff.advertisedAt, $0.handoff.session)
        }
        guard let bucket, let seal else { return }
        let lifetime = configuration.handoffLifetime
        var offer: Advertisement.Offer?
        if let current {
            let activity = current.activity
            var expires = Date().addingTimeInterval(Double(lifetime.components.seconds))
            if let end = activity.expirationDate { expires = min(expires, end) }
            let same = previous?.offer.map {
                previousSession == current.persistentID && $0.appID == current.appID && $0.activityType == activity.activityType
                    && $0.title == activity.title && $0.targetContentIdentifier == activity.targetContentIdentifier
            } ?? false
            offer = Advertisement.Offer(id: same ? previous!.offer!.id : Self.newOfferID(), appID: current.appID,
                                        activityType: activity.activityType, title: activity.title,
                                        targetContentIdentifier: activity.targetContentIdentifier,
                                        expires: UInt64(expires.timeIntervalSince1970 * 1000))
        }
        // Nothing new, and not yet due for a renewal (a quarter of the lifetime old: the timer
        // asks every half, so a renewal is never skipped by a hair).
        if let previous, previous.offer?.id == offer?.id, offer == nil || (previousAt.map { now - $0 < lifetime / 4 } ?? false) {
            return
        }
        let advertisement = Advertisement(device: device, stamp: clock.tick(), offer: offer)
        do {
            let plain = try JSONEncoder().encode(advertisement)
            try bucket.put(device, try seal.seal([UInt8](plain), context: Subjects.advertisement(device)))
            state.withLock { state in
                state.handoff.advertised = advertisement
                state.handoff.advertisedAt = now
                state.handoff.session = current?.persistentID
            }
            if let offer, offer.id != previous?.offer?.id {
                logger.debug("continuity: advertising \(offer.activityType) of \(offer.appID) as \(device)/\(offer.id)")
            }
        } catch {
            logger.warning("continuity: cannot advertise the current activity: \(error)")
        }
    }

    static func newOfferID() -> String {
        String(UUID().uuidString.lowercased().prefix(8))
    }

    // MARK: - Receiving (the other devices' side)

    func receivedAdvertisement(key: String, value: [UInt8]) {
        guard key != device, let seal else { return }
        guard Subjects.isValidDevice(key),
              let plain = try? seal.open(value, context: Subjects.advertisement(key)),
              let advertisement = try? JSONDecoder().decode(Advertisement.self, from: Data(plain)),
              advertisement.device == key, advertisement.stamp.device == key
        else {
            logger.warning("continuity: ignored an activity advertisement under \(key) that does not open with this user's key")
            return
        }
        clock.observe(advertisement.stamp)
        var arrived: RemoteActivity?
        if let offer = advertisement.offer, UserActivity.isValidActivityType(offer.activityType),
           AppManifest.isValidBundleIdentifier(offer.appID), offer.id.utf8.count <= 64 {
            arrived = RemoteActivity(device: key, id: offer.id, appID: offer.appID, activityType: offer.activityType,
                                     title: offer.title, targetContentIdentifier: offer.targetContentIdentifier,
                                     expires: Date(timeIntervalSince1970: Double(offer.expires) / 1000))
        }
        if let candidate = arrived, candidate.expires <= Date() { arrived = nil }
        let old = state.withLock { state in
            let old = state.handoff.remote[key]
            state.handoff.remote[key] = arrived
            return old
        }
        let withdrawn = old.flatMap { $0.id == arrived?.id ? nil : $0.name }
        let fresh = arrived.flatMap { $0.id == old?.id ? nil : $0 }
        if let arrived {
            // Every receiver enforces the end of the offer, also with the engine away.
            let wait = max(0, arrived.expires.timeIntervalSinceNow)
            queue.asyncAfter(deadline: .now() + wait + 0.01) { [weak self] in self?.expire(arrived) }
        }
        guard withdrawn != nil || fresh != nil, let scenes else { return }
        Task { await scenes.remoteActivityChanged(arrived: fresh, withdrawn: withdrawn) }
    }

    func expire(_ activity: RemoteActivity) {
        let gone = state.withLock { state -> Bool in
            guard let current = state.handoff.remote[activity.device], current.id == activity.id,
                  current.expires <= Date() else { return false }
            state.handoff.remote[activity.device] = nil
            return true
        }
        guard gone, let scenes else { return }
        Task { await scenes.remoteActivityChanged(arrived: nil, withdrawn: activity.name) }
    }

    /// The link dropped: the other devices' offers go, as remote items do.
    func handoffLinkLost() {
        let (gone, watch) = state.withLock { state in
            defer { state.handoff.remote = [:]; state.handoff.watch = nil }
            return (Array(state.handoff.remote.values), state.handoff.watch)
        }
        // Stopping waits for the watch's thread (up to half a second): not on the queue, where
        // local copies take their clock stamps in order.
        if let watch { DispatchQueue.global().async { watch.stop() } }
        guard let scenes else { return }
        for activity in gone {
            Task { await scenes.remoteActivityChanged(arrived: nil, withdrawn: activity.name) }
        }
    }

    /// HandoffHooks.
    package func remoteActivities() -> [RemoteActivity] {
        let now = Date()
        return state.withLock { Array($0.handoff.remote.values) }
            .filter { $0.expires > now }
            .sorted { $0.expires > $1.expires }
    }

    /// HandoffHooks: asks the source device for the activity (request-reply, sealed), on a
    /// worker thread.
    package func fetchRemoteActivity(_ activity: RemoteActivity) async throws -> UserActivity {
        guard let seal else {
            throw FerryModelError(.unavailable, "this device is not paired, so \(activity.device) cannot send \(activity.name)")
        }
        guard let link = state.withLock({ $0.link }), link.isConnected else {
            throw FerryModelError(.unavailable, "the continuity engine is not reachable, so \(activity.device) cannot send \(activity.name)")
        }
        let request = ActivityRequest(from: device, id: activity.id)
        let timeout = configuration.handoffTimeout
        let source = activity.device
        let sealed = try seal.seal([UInt8](try JSONEncoder().encode(request)), context: Subjects.activityRequest(to: source))
        let answer: [UInt8] = try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result {
                    do {
                        return try link.request(Subjects.activities(of: source), sealed, timeout: timeout)
                    } catch let error as EngineError {
                        switch error.code {
                        case .noResponders:
                            throw FerryModelError(.unavailable, "the source device \(source) is gone (no responders)")
                        case .timeout:
                            throw FerryModelError(.timeout, "the source device \(source) did not answer within \(timeout)")
                        case .failed:
                            throw FerryModelError(.unavailable, "the source device \(source) cannot be reached: \(error.message)")
                        }
                    }
                })
            }
        }
        let plain: [UInt8]
        do {
            plain = try seal.open(answer, context: Subjects.activityReply(from: source, request))
        } catch {
            throw FerryModelError(.unavailable, "the answer of \(source) does not open with this user's key")
        }
        guard let status = plain.first else { throw FerryModelError(.unavailable, "the source device \(source) sent an empty answer") }
        let body = Data(plain.dropFirst())
        guard status == ActivityStatus.activity else {
            throw FerryModelError(.unavailable, "the source device \(source) refused \(activity.name): \(String(decoding: body, as: UTF8.self))")
        }
        do {
            return try UserActivity(archivedData: body)
        } catch {
            throw FerryModelError(.unavailable, "the source device \(source) sent an activity that does not read: \(error)")
        }
    }

    // MARK: - Serving (the source's side)

    func serveActivity(_ bytes: [UInt8], reply: String?, link: EngineLink) {
        guard let reply, let seal,
              let plain = try? seal.open(bytes, context: Subjects.activityRequest(to: device)),
              let request = try? JSONDecoder().decode(ActivityRequest.self, from: Data(plain)),
              Subjects.isValidDevice(request.from), request.id.utf8.count <= 64
        else { return }  // not from this user's devices: no answer at all
        let device = self.device
        Task {
            let answer: [UInt8]
            do {
                answer = [ActivityStatus.activity] + [UInt8](try await self.savedActivity(for: request))
            } catch {
                answer = [ActivityStatus.refused] + Array("\(error)".utf8)
            }
            guard let sealed = try? seal.seal(answer, context: Subjects.activityReply(from: device, request)) else { return }
            try? link.publish(reply, sealed)
        }
    }

    /// The archived activity for `request`: only while the offer it names is still this
    /// device's current, eligible activity; the app saves it now.
    func savedActivity(for request: ActivityRequest) async throws -> Data {
        guard let scenes else { throw FerryModelError(.unavailable, "Handoff is off") }
        let (offer, session) = state.withLock { ($0.handoff.advertised?.offer, $0.handoff.session) }
        guard let offer, offer.id == request.id, let session,
              let current = await scenes.currentHandoffActivity(), current.persistentID == session,
              current.activity.activityType == offer.activityType
        else { throw FerryModelError(.notFound, "the activity \(device)/\(request.id) is no longer shown here") }
        let saved = try await scenes.saveHandoffActivity(of: session)
        guard saved.activityType == offer.activityType, saved.isEligibleForHandoff, !saved.isExpired() else {
            throw FerryModelError(.notFound, "the activity \(device)/\(request.id) is no longer eligible for handoff")
        }
        logger.info("continuity: \(request.from) continues \(device)/\(request.id), saved by \(current.appID) just now")
        return try saved.archivedData()
    }
}
