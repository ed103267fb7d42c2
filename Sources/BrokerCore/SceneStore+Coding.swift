#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FerryModel
import GRDB

/// How a stored session maps onto a ``SceneSessionRecord`` (a `sceneSession` row), and the
/// validation that turns a fetched record back into a session.
///
/// Plain fields are columns; the frame is four nullable reals; activation conditions are their
/// two NSPredicate format strings. `userInfo` (NULL when empty), `stateRestorationActivity` and
/// `pendingOptions` are their wire shapes (docs/wire.md) in a ``SceneStore/WireArchive``: exact
/// for every value, as the bus carries it (an activity keeps only its transmitted userInfo;
/// dates keep microseconds). Everything is validated when read back, by the same readers that
/// check values arriving from the bus.
extension SceneStore {
    /// The row for a session.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the field that cannot be stored.
    static func record(_ stored: StoredSceneSession) throws -> SceneSessionRecord {
        let session = stored.session
        try validate(session)
        guard stored.screen >= 0 else {
            throw FerryModelError(.invalidArgument, "\(stored.screen) is not a screen index", keyPath: "screen")
        }
        var frame: [Double?] = [nil, nil, nil, nil]
        if let rect = session.frame {
            frame = [rect.minX, rect.minY, rect.size.width, rect.size.height]
            guard frame.allSatisfy({ $0!.isFinite }) else {
                throw FerryModelError(.invalidArgument, "the frame must be finite", keyPath: "frame")
            }
        }
        let userInfo: Data?
        do {
            userInfo = session.userInfo.isEmpty ? nil
                : try WireArchive.encode(validated: try PropertyListValue.dictionary(session.userInfo).wireValue())
        } catch let error as FerryModelError { throw error.nested(under: "userInfo") }
        let activity: Data?
        do {
            activity = try session.stateRestorationActivity.map { try WireArchive.encode(validated: .dictionary(try $0.wireDictionary())) }
        } catch let error as FerryModelError { throw error.nested(under: "stateRestorationActivity") }
        let options: Data?
        do {
            options = try stored.pendingOptions.map { try WireArchive.encode(validated: .dictionary(try $0.wireDictionary())) }
        } catch let error as FerryModelError { throw error.nested(under: "pendingOptions") }
        let conditions = session.activationConditions
        return SceneSessionRecord(
            persistentIdentifier: session.persistentIdentifier, appID: session.bundleIdentifier, role: session.role.rawValue,
            configurationName: session.configurationName, title: session.title, frame: frame, screen: Int64(stored.screen),
            stackOrder: stored.stackOrder, userInfo: userInfo, stateRestorationActivity: activity,
            canActivateFor: conditions.canActivateForTargetContentIdentifierPredicate.predicateFormat,
            prefersToActivateFor: conditions.prefersToActivateForTargetContentIdentifierPredicate.predicateFormat,
            pendingOptions: options)
    }

    /// Checks what a row's decoding will check, so that nothing stored fails to load.
    private static func validate(_ session: SceneSession) throws {
        let count = session.persistentIdentifier.utf8.count
        guard count > 0, count <= 255, !session.persistentIdentifier.utf8.contains(0) else {
            throw FerryModelError(.invalidArgument, "a persistent identifier must be 1-255 bytes without NUL",
                                  keyPath: "persistentIdentifier")
        }
        guard AppManifest.isValidBundleIdentifier(session.bundleIdentifier) else {
            throw FerryModelError(.invalidArgument, "\"\(session.bundleIdentifier)\" is not a bundle identifier",
                                  keyPath: "bundleIdentifier")
        }
        guard !session.role.rawValue.isEmpty else {
            throw FerryModelError(.invalidArgument, "must not be empty", keyPath: "role")
        }
        // SQLite text would be cut at a NUL; D-Bus strings cannot hold one anyway.
        for (keyPath, text) in [("role", session.role.rawValue), ("configurationName", session.configurationName),
                                ("title", session.title)] where text?.utf8.contains(0) == true {
            throw FerryModelError(.invalidArgument, "must not contain NUL", keyPath: keyPath)
        }
    }

    /// Validates a fetched row and makes its session.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the column that does not decode.
    static func session(_ record: SceneSessionRecord) throws -> StoredSceneSession {
        let identifier = record.persistentIdentifier
        let count = identifier.utf8.count
        guard count > 0, count <= 255, !identifier.utf8.contains(0) else {
            throw FerryModelError(.invalidArgument, "a persistent identifier must be 1-255 bytes without NUL",
                                  keyPath: "persistentIdentifier")
        }
        let appID = record.appID
        guard AppManifest.isValidBundleIdentifier(appID) else {
            throw FerryModelError(.invalidArgument, "\"\(appID)\" is not a bundle identifier", keyPath: "appID")
        }
        let role = record.role
        guard !role.isEmpty else { throw FerryModelError(.invalidArgument, "must not be empty", keyPath: "role") }

        var frame: Rect?
        let edges = [record.frameX, record.frameY, record.frameWidth, record.frameHeight]
        for (column, edge) in zip(["frameX", "frameY", "frameWidth", "frameHeight"], edges) where edge?.isFinite == false {
            throw FerryModelError(.invalidArgument, "expected a finite real, found \(edge!)", keyPath: column)
        }
        if let x = edges[0], let y = edges[1], let width = edges[2], let height = edges[3] {
            frame = Rect(x: x, y: y, width: width, height: height)
        } else if edges.contains(where: { $0 != nil }) {
            throw FerryModelError(.invalidArgument, "a frame needs all four values or none", keyPath: "frame")
        }

        let screen = record.screen
        guard let screenIndex = Int(exactly: screen), screenIndex >= 0 else {
            throw FerryModelError(.invalidArgument, "\(screen) is not a screen index", keyPath: "screen")
        }

        var userInfo: [String: PropertyListValue] = [:]
        if let data = record.userInfo {
            userInfo = try decoding("userInfo") {
                let wire = try WireArchive.decode(data)
                guard case .dictionary = wire, case .dictionary(let entries) = try PropertyListValue(wireValue: wire) else {
                    throw FerryModelError(.invalidArgument, "not a dictionary")
                }
                return entries
            }
        }
        let activity = try record.stateRestorationActivity.map { data in
            try decoding("stateRestorationActivity") { try UserActivity(wireDictionary: try dictionary(data)) }
        }
        let conditions = try decoding("activationConditions") {
            try activationConditions(canActivateFor: record.canActivateFor, prefersToActivateFor: record.prefersToActivateFor)
        }
        let options = try record.pendingOptions.map { data in
            try decoding("pendingOptions") { try SceneConnectionOptions(wireDictionary: try dictionary(data)) }
        }
        let session = try SceneSession(
            persistentIdentifier: identifier, bundleIdentifier: appID, role: SceneRole(rawValue: role),
            configurationName: record.configurationName, title: record.title, frame: frame,
            stateRestorationActivity: activity, userInfo: userInfo, activationConditions: conditions)
        return StoredSceneSession(session: session, screen: screenIndex, stackOrder: record.stackOrder, pendingOptions: options)
    }

    /// A text value, nil for anything else (no GRDB conversion, which traps on a mismatch).
    static func text(_ value: DatabaseValue) -> String? {
        if case .string(let string) = value.storage { return string }
        return nil
    }

    /// Conditions from their two format strings; the defaults (most scenes') without parsing.
    private static func activationConditions(canActivateFor: String, prefersToActivateFor: String) throws
        -> SceneActivationConditions {
        if canActivateFor == "TRUEPREDICATE", prefersToActivateFor == "FALSEPREDICATE" { return SceneActivationConditions() }
        return try SceneActivationConditions(canActivateFor: canActivateFor, prefersToActivateFor: prefersToActivateFor)
    }

    /// The `a{sv}` dictionary in an archive.
    private static func dictionary(_ data: Data) throws -> [String: WireValue] {
        guard case .dictionary(let entries) = try WireArchive.decode(data) else {
            throw FerryModelError(.invalidArgument, "not a dictionary")
        }
        return entries
    }

    /// Runs a decoder, putting `column` in front of the key path of what it throws.
    private static func decoding<T>(_ column: String, _ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as FerryModelError {
            throw error.nested(under: column)
        } catch {
            throw FerryModelError(.invalidArgument, "\(error)", keyPath: column)
        }
    }
}
