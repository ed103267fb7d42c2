#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FerryModel
import GRDB

/// One row of the `sceneSession` table, column for column, as GRDB fetches and saves it: what is
/// stored, nothing checked. ``SceneStore`` turns it into a ``StoredSceneSession`` (and back) in a
/// separate step that validates every field (`SceneStore+Coding.swift`).
///
/// Reading is stricter than GRDB's conversions, which would take a blob for text (SQLite does)
/// or a real for an integer: a value of another storage class is a damaged row, named by its
/// column, never a trap and never a session that loads with a different identifier.
struct SceneSessionRecord: Hashable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "sceneSession"

    var persistentIdentifier: String
    var appID: String
    var role: String
    var configurationName: String?
    var title: String?
    var frameX: Double?
    var frameY: Double?
    var frameWidth: Double?
    var frameHeight: Double?
    var screen: Int64
    var stackOrder: Int64
    /// The `userInfo` wire archive, NULL when it is empty.
    var userInfo: Data?
    var stateRestorationActivity: Data?
    var canActivateFor: String
    var prefersToActivateFor: String
    var pendingOptions: Data?

    init(persistentIdentifier: String, appID: String, role: String, configurationName: String?, title: String?,
         frame: [Double?], screen: Int64, stackOrder: Int64, userInfo: Data?, stateRestorationActivity: Data?,
         canActivateFor: String, prefersToActivateFor: String, pendingOptions: Data?) {
        self.persistentIdentifier = persistentIdentifier
        self.appID = appID
        self.role = role
        self.configurationName = configurationName
        self.title = title
        (frameX, frameY, frameWidth, frameHeight) = (frame[0], frame[1], frame[2], frame[3])
        self.screen = screen
        self.stackOrder = stackOrder
        self.userInfo = userInfo
        self.stateRestorationActivity = stateRestorationActivity
        self.canActivateFor = canActivateFor
        self.prefersToActivateFor = prefersToActivateFor
        self.pendingOptions = pendingOptions
    }

    /// Reads a row.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the column that is missing or of
    ///   another storage class.
    init(row: Row) throws {
        let text = Column(row, "text") { if case .string(let s) = $0 { s } else { nil } }
        let blob = Column(row, "a blob") { if case .blob(let d) = $0 { d } else { nil } }
        let integer = Column(row, "an integer") { if case .int64(let n) = $0 { n } else { nil } }
        let real = Column(row, "a real") { storage -> Double? in
            switch storage {
            case .double(let d): d
            case .int64(let n): Double(n)
            default: nil
            }
        }
        self.init(persistentIdentifier: try text.required("persistentIdentifier"), appID: try text.required("appID"),
                  role: try text.required("role"), configurationName: try text("configurationName"), title: try text("title"),
                  frame: try ["frameX", "frameY", "frameWidth", "frameHeight"].map { try real($0) },
                  screen: try integer.required("screen"), stackOrder: try integer.required("stackOrder"),
                  userInfo: try blob("userInfo"), stateRestorationActivity: try blob("stateRestorationActivity"),
                  canActivateFor: try text.required("canActivateFor"),
                  prefersToActivateFor: try text.required("prefersToActivateFor"), pendingOptions: try blob("pendingOptions"))
    }

    func encode(to container: inout PersistenceContainer) {
        container["persistentIdentifier"] = persistentIdentifier
        container["appID"] = appID
        container["role"] = role
        container["configurationName"] = configurationName
        container["title"] = title
        container["frameX"] = frameX
        container["frameY"] = frameY
        container["frameWidth"] = frameWidth
        container["frameHeight"] = frameHeight
        container["screen"] = screen
        container["stackOrder"] = stackOrder
        container["userInfo"] = userInfo
        container["stateRestorationActivity"] = stateRestorationActivity
        container["canActivateFor"] = canActivateFor
        container["prefersToActivateFor"] = prefersToActivateFor
        container["pendingOptions"] = pendingOptions
    }

    /// Strict access to one storage class of a row's columns.
    private struct Column<Value> {
        let row: Row
        let expected: String
        let extract: (DatabaseValue.Storage) -> Value?

        init(_ row: Row, _ expected: String, _ extract: @escaping (DatabaseValue.Storage) -> Value?) {
            self.row = row
            self.expected = expected
            self.extract = extract
        }

        /// The column's value, nil for NULL.
        func callAsFunction(_ column: String) throws -> Value? {
            let value: DatabaseValue = row[column]
            if value.isNull { return nil }
            guard let extracted = extract(value.storage) else {
                throw FerryModelError(.invalidArgument, "expected \(expected), found \(value)", keyPath: column)
            }
            return extracted
        }

        /// The column's value, which must not be NULL.
        func required(_ column: String) throws -> Value {
            guard let value = try self(column) else { throw FerryModelError(.invalidArgument, "missing", keyPath: column) }
            return value
        }
    }
}
