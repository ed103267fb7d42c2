#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FerryModel
import GRDB

/// How a stored session maps onto a `sceneSession` row.
///
/// Plain fields are columns; the frame is four nullable reals; activation conditions are their
/// two NSPredicate format strings. `userInfo` (NULL when empty), `stateRestorationActivity` and
/// `pendingOptions` are their wire shapes (docs/wire.md) in a ``SceneStore/WireArchive``: exact
/// for every value, as the bus carries it (an activity keeps only its transmitted userInfo;
/// dates keep microseconds). Everything is validated when read back, by the same readers that
/// check values arriving from the bus.
extension SceneStore {
    static let upsertSQL = """
        INSERT OR REPLACE INTO sceneSession (persistentIdentifier, appID, role, configurationName, title,
            frameX, frameY, frameWidth, frameHeight, screen, stackOrder, userInfo, stateRestorationActivity,
            canActivateFor, prefersToActivateFor, pendingOptions)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """

    /// The row's values for ``upsertSQL``.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the field that cannot be stored.
    static func encode(_ stored: StoredSceneSession) throws -> StatementArguments {
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
        let values: [(any DatabaseValueConvertible)?] = [
            session.persistentIdentifier, session.bundleIdentifier, session.role.rawValue, session.configurationName,
            session.title, frame[0], frame[1], frame[2], frame[3], stored.screen, stored.stackOrder, userInfo, activity,
            conditions.canActivateForTargetContentIdentifierPredicate.predicateFormat,
            conditions.prefersToActivateForTargetContentIdentifierPredicate.predicateFormat, options,
        ]
        return StatementArguments(values)
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

    /// Reads a row back.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the column that does not decode.
    static func decode(_ row: Row) throws -> StoredSceneSession {
        func text(_ column: String) throws -> String {
            guard let value = try optionalText(column) else {
                throw FerryModelError(.invalidArgument, "missing", keyPath: column)
            }
            return value
        }
        func optionalText(_ column: String) throws -> String? {
            let value: DatabaseValue = row[column]
            switch value.storage {
            case .null: return nil
            case .string(let string): return string
            default: throw FerryModelError(.invalidArgument, "expected text, found \(value)", keyPath: column)
            }
        }
        func optionalBlob(_ column: String) throws -> Data? {
            let value: DatabaseValue = row[column]
            switch value.storage {
            case .null: return nil
            case .blob(let data): return data
            default: throw FerryModelError(.invalidArgument, "expected a blob, found \(value)", keyPath: column)
            }
        }
        func integer(_ column: String) throws -> Int64 {
            let value: DatabaseValue = row[column]
            guard case .int64(let number) = value.storage else {
                throw FerryModelError(.invalidArgument, "expected an integer, found \(value)", keyPath: column)
            }
            return number
        }
        func real(_ column: String) throws -> Double? {
            let value: DatabaseValue = row[column]
            switch value.storage {
            case .null: return nil
            case .double(let number) where number.isFinite: return number
            case .int64(let number): return Double(number)
            default: throw FerryModelError(.invalidArgument, "expected a finite real, found \(value)", keyPath: column)
            }
        }

        let identifier = try text("persistentIdentifier")
        let count = identifier.utf8.count
        guard count > 0, count <= 255, !identifier.utf8.contains(0) else {
            throw FerryModelError(.invalidArgument, "a persistent identifier must be 1-255 bytes without NUL",
                                  keyPath: "persistentIdentifier")
        }
        let appID = try text("appID")
        guard AppManifest.isValidBundleIdentifier(appID) else {
            throw FerryModelError(.invalidArgument, "\"\(appID)\" is not a bundle identifier", keyPath: "appID")
        }
        let role = try text("role")
        guard !role.isEmpty else { throw FerryModelError(.invalidArgument, "must not be empty", keyPath: "role") }

        var frame: Rect?
        let edges = try ["frameX", "frameY", "frameWidth", "frameHeight"].map(real)
        if let x = edges[0], let y = edges[1], let width = edges[2], let height = edges[3] {
            frame = Rect(x: x, y: y, width: width, height: height)
        } else if edges.contains(where: { $0 != nil }) {
            throw FerryModelError(.invalidArgument, "a frame needs all four values or none", keyPath: "frame")
        }

        let screen = try integer("screen")
        guard let screenIndex = Int(exactly: screen), screenIndex >= 0 else {
            throw FerryModelError(.invalidArgument, "\(screen) is not a screen index", keyPath: "screen")
        }
        let stackOrder = try integer("stackOrder")

        var userInfo: [String: PropertyListValue] = [:]
        if let data = try optionalBlob("userInfo") {
            userInfo = try decoding("userInfo") {
                let wire = try WireArchive.decode(data)
                guard case .dictionary = wire, case .dictionary(let entries) = try PropertyListValue(wireValue: wire) else {
                    throw FerryModelError(.invalidArgument, "not a dictionary")
                }
                return entries
            }
        }
        let activity = try optionalBlob("stateRestorationActivity").map { data in
            try decoding("stateRestorationActivity") { try UserActivity(wireDictionary: try dictionary(data)) }
        }
        let conditions = try decoding("activationConditions") {
            try activationConditions(canActivateFor: try text("canActivateFor"),
                                     prefersToActivateFor: try text("prefersToActivateFor"))
        }
        let options = try optionalBlob("pendingOptions").map { data in
            try decoding("pendingOptions") { try SceneConnectionOptions(wireDictionary: try dictionary(data)) }
        }
        let session = try SceneSession(
            persistentIdentifier: identifier, bundleIdentifier: appID, role: SceneRole(rawValue: role),
            configurationName: try optionalText("configurationName"), title: try optionalText("title"), frame: frame,
            stateRestorationActivity: activity, userInfo: userInfo, activationConditions: conditions)
        return StoredSceneSession(session: session, screen: screenIndex, stackOrder: stackOrder, pendingOptions: options)
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
