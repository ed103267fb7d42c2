import BrokerCore
import DBus
import FerryBus
import FerryModel
import Logging

/// One app's registered activities, bound to the connection that registered the app.
struct ActivityRegistration: Sendable {
    /// The app id.
    var appID: String
    /// The app's registered connection.
    var uniqueName: String
    /// Its activities, in the order it registered them.
    var activities: [ActivityDescription]
    /// A call queue for an app that does not run with scenes (one that does is called through
    /// the scene service's queue); closed when the registration goes.
    var ownCallbacks: AppCallbacks
}

extension ShareService {
    /// `RegisterActivities`: the caller's activities replace those it registered before
    /// ([] removes them).
    /// - Throws: `FerryModelError` `.permissionDenied` for a caller without a registered app,
    ///   `.invalidArgument` naming the entry and key (`activities[1].acceptableTypes`) or a
    ///   duplicate activity type or more than 64 activities.
    func registerActivities(_ entries: [DBusValue], caller: Caller) throws {
        guard let app = registry.app(of: caller.uniqueName) else {
            throw FerryModelError(.permissionDenied,
                                  "\(caller.uniqueName) has no registered app: register the app first (Broker1.RegisterApp)")
        }
        guard entries.count <= Self.maximumActivities else {
            throw FerryModelError(.invalidArgument, "\(entries.count) activities; at most \(Self.maximumActivities)",
                                  keyPath: "activities")
        }
        let activities = try Self.decodeActivities(entries)
        guard !activities.isEmpty else {
            registrations[caller.uniqueName]?.ownCallbacks.close()
            registrations[caller.uniqueName] = nil
            logger.debug("\(app.appID) registered no activities")
            return
        }
        if var current = registrations[caller.uniqueName], current.appID == app.appID,
           current.ownCallbacks.path.rawValue == app.clientPath {
            current.activities = activities
            registrations[caller.uniqueName] = current
        } else {
            registrations[caller.uniqueName]?.ownCallbacks.close()
            let callbacks = AppCallbacks(appID: app.appID, destination: try BusName(caller.uniqueName),
                                         path: try ObjectPath(app.clientPath), connection: connection, logger: logger)
            registrations[caller.uniqueName] = ActivityRegistration(appID: app.appID, uniqueName: caller.uniqueName,
                                                                    activities: activities, ownCallbacks: callbacks)
        }
        let types = activities.map(\.type.rawValue).joined(separator: ", ")
        logger.debug("\(app.appID) registered \(activities.count) activit\(activities.count == 1 ? "y" : "ies"): \(types)")
    }

    /// Reads `RegisterActivities`' entries: each validated, errors named `activities[i].key`, no
    /// activity type twice.
    /// - Throws: `FerryModelError` `.invalidArgument`.
    static func decodeActivities(_ entries: [DBusValue]) throws -> [ActivityDescription] {
        var seen: [ActivityType: Int] = [:]
        return try entries.enumerated().map { index, entry in
            let keyPath = "activities[\(index)]"
            let activity: ActivityDescription
            do {
                let wire = try [String: WireValue](dbusValue: entry)
                activity = try ActivityDescription(wireDictionary: wire)
            } catch let error as FerryModelError {
                throw error.nested(under: keyPath)
            }
            if let earlier = seen[activity.type] {
                throw FerryModelError(.invalidArgument, "\(activity.type) is registered twice (also activities[\(earlier)])",
                                      keyPath: keyPath + ".activityType")
            }
            seen[activity.type] = index
            return activity
        }
    }

    /// The registrations whose app is still registered by the same connection (an app that
    /// unregistered loses its activities here), sorted by app id.
    func currentRegistrations() -> [ActivityRegistration] {
        for (uniqueName, registration) in registrations where registry.app(of: uniqueName)?.appID != registration.appID {
            registration.ownCallbacks.close()
            registrations[uniqueName] = nil
            logger.debug("\(registration.appID)'s activities go: it is no longer registered")
        }
        return registrations.values.sorted { $0.appID < $1.appID }
    }

    /// The queue to call a registration's app through: its scene queue when it runs with scenes.
    func callbacks(of registration: ActivityRegistration) async -> AppCallbacks {
        await scenes.runningApp(registration.appID).flatMap { $0.uniqueName == registration.uniqueName ? $0.callbacks : nil }
            ?? registration.ownCallbacks
    }
}
