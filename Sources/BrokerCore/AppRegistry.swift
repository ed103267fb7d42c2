#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FerryModel
import Synchronization

/// Who is calling the broker: a unique bus name and the credentials the bus vouches for.
package struct Caller: Sendable, Hashable {
    /// The caller's unique bus name (`:1.7`), set by the bus and unforgeable.
    package var uniqueName: String
    /// The caller's user id.
    package var uid: UInt32
    /// The caller's process id, when the bus knows it.
    package var pid: UInt32?

    /// Makes a caller.
    package init(uniqueName: String, uid: UInt32, pid: UInt32?) {
        self.uniqueName = uniqueName
        self.uid = uid
        self.pid = pid
    }
}

/// One app registered with the broker, bound to the connection that registered it.
package struct AppRegistration: Sendable, Hashable {
    /// The app id (the manifest's `CFBundleIdentifier`).
    package var appID: String
    /// The parsed manifest.
    package var manifest: AppManifest
    /// The connection that registered it, with its credentials.
    package var caller: Caller
    /// The object path of the app's `org.ferry.Client1` object.
    package var clientPath: String
    /// Whether it registered with the option scenes=true (the broker manages its scenes).
    package var showsScenes: Bool = false
}

/// The apps registered with the broker: one per connection, one connection per app id.
///
/// D-Bus: backs `org.ferry.Broker1.RegisterApp`, `UnregisterApp` and `ListApps`.
package actor AppRegistry {
    /// The largest manifest accepted, in bytes (1 MiB).
    package static let maximumManifestSize = 1 << 20

    private var apps: [String: AppRegistration] = [:] {  // by unique name
        didSet { byUniqueName.withLock { [apps] in $0 = apps } }
    }
    /// A copy of `apps` readable without a hop to the actor (a paste looks its reader up).
    private nonisolated let byUniqueName = Mutex<[String: AppRegistration]>([:])
    private let ownUID: UInt32
    private let types: TypeDatabase

    /// Makes an empty registry.
    /// - Parameters:
    ///   - ownUID: the broker's own user id; callers of another uid are refused.
    ///   - types: where the apps' type declarations are registered.
    package init(ownUID: UInt32, types: TypeDatabase = .shared) {
        self.ownUID = ownUID
        self.types = types
    }

    /// Refuses a caller whose uid is not the broker's.
    /// - Throws: `FerryModelError` `.permissionDenied`.
    package static func checkSameUser(_ caller: Caller, ownUID: UInt32) throws {
        guard caller.uid == ownUID else {
            throw FerryModelError(.permissionDenied,
                                  "\(caller.uniqueName) runs as uid \(caller.uid), the broker as uid \(ownUID)")
        }
    }

    /// Parses a manifest sent by an app and checks that it names `appID`.
    /// - Throws: `FerryModelError` `.tooLarge` past ``maximumManifestSize``, `.invalidArgument`
    ///   for a malformed manifest (with its key path) or an app id that is not the bundle id.
    package static func parseManifest(_ bytes: [UInt8], appID: String) throws -> AppManifest {
        guard bytes.count <= maximumManifestSize else {
            throw FerryModelError(.tooLarge, "the manifest has \(bytes.count) bytes; at most \(maximumManifestSize)")
        }
        let manifest: AppManifest
        do {
            manifest = try AppManifest(propertyListData: Data(bytes))
        } catch let error as FerryModelError {
            throw FerryModelError(.invalidArgument, "malformed manifest: \(error.message)", keyPath: error.keyPath)
        } catch {
            throw FerryModelError(.invalidArgument, "malformed manifest: \(error)")
        }
        guard manifest.bundleIdentifier == appID else {
            throw FerryModelError(.invalidArgument,
                                  "app id \"\(appID)\" is not the manifest's CFBundleIdentifier \"\(manifest.bundleIdentifier)\"")
        }
        return manifest
    }

    /// Registers (or re-registers) the caller's app.
    /// - Returns: the registration.
    /// - Throws: `FerryModelError`: `.permissionDenied` for another uid or an app id another
    ///   connection holds; `.invalidArgument` when this connection already holds another app id
    ///   or the manifest is bad; `.tooLarge` for a manifest over 1 MiB.
    /// - Parameter showsScenes: the registration's `scenes` option.
    package func register(appID: String, manifest bytes: [UInt8], clientPath: String,
                         caller: Caller, showsScenes: Bool = false) throws -> AppRegistration {
        try Self.checkSameUser(caller, ownUID: ownUID)
        let manifest = try Self.parseManifest(bytes, appID: appID)
        if let existing = apps[caller.uniqueName], existing.appID != appID {
            throw FerryModelError(.invalidArgument,
                                  "\(caller.uniqueName) already registered \(existing.appID): one app per connection")
        }
        if let holder = apps.values.first(where: { $0.appID == appID && $0.caller.uniqueName != caller.uniqueName }) {
            throw FerryModelError(.permissionDenied, "\(appID) is already registered by \(holder.caller.uniqueName)")
        }
        do {
            try types.register(manifest.exportedTypeDeclarations, exported: true)
            try types.register(manifest.importedTypeDeclarations, exported: false)
        } catch {
            throw FerryModelError(.invalidArgument, "the manifest's type declarations: \(error)")
        }
        let app = AppRegistration(appID: appID, manifest: manifest, caller: caller, clientPath: clientPath,
                                showsScenes: showsScenes)
        apps[caller.uniqueName] = app
        return app
    }

    /// The type declarations of every app that registered with this registry (they stay in
    /// its type database after the app unregisters), answered without waiting for the actor.
    ///
    /// D-Bus: `org.ferry.Broker1.TypeDeclarations`.
    package nonisolated var typeDeclarations: AppTypeDeclarations { types.appDeclarations }

    /// Removes the caller's registration.
    /// - Throws: `FerryModelError` `.notFound` when it has none.
    package func unregister(_ caller: Caller) throws -> AppRegistration {
        guard let app = apps.removeValue(forKey: caller.uniqueName) else {
            throw FerryModelError(.notFound, "\(caller.uniqueName) has no registered app")
        }
        return app
    }

    /// Removes whatever a vanished connection had registered.
    package func connectionClosed(_ uniqueName: String) -> AppRegistration? {
        apps.removeValue(forKey: uniqueName)
    }

    /// The app the connection `uniqueName` registered, nil when none; answered without waiting
    /// for the actor.
    package nonisolated func app(of uniqueName: String) -> AppRegistration? {
        byUniqueName.withLock { $0[uniqueName] }
    }

    /// Every registered app, sorted by app id.
    package var registeredApps: [AppRegistration] {
        apps.values.sorted { $0.appID < $1.appID }
    }

    /// The registered apps, for a caller of the broker's own user.
    /// - Throws: `FerryModelError` `.permissionDenied` for a caller of another uid.
    package func registeredApps(visibleTo caller: Caller) throws -> [AppRegistration] {
        try Self.checkSameUser(caller, ownUID: ownUID)
        return registeredApps
    }
}
