#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FerryModel
import GRDB

/// A scene session as the broker keeps it between runs: the session, its window's screen and
/// place in the stacking order, and the connection options waiting for its next connection.
package struct StoredSceneSession: Sendable, Hashable {
    /// The session; its `activationState` is not stored (it loads as `.unattached`).
    package var session: SceneSession
    /// The index of the screen its window is on.
    package var screen: Int
    /// Its window's place in the stacking order (``Desktop/Window/stackOrder``).
    package var stackOrder: Int64
    /// The options for its next connection (an activation request made while its app was not
    /// running), if any.
    package var pendingOptions: SceneConnectionOptions?

    /// Makes a stored session.
    package init(session: SceneSession, screen: Int, stackOrder: Int64, pendingOptions: SceneConnectionOptions? = nil) {
        self.session = session
        self.screen = screen
        self.stackOrder = stackOrder
        self.pendingOptions = pendingOptions
    }
}

/// The durable storage of scene sessions, the apps that have registered, and the discards an
/// app has yet to be told of: `scenes.sqlite` beside `ferry.sqlite` (GRDB, WAL,
/// `synchronous = FULL`).
///
/// Every mutating method is durable before it returns. Methods are synchronous and may block on
/// an fsync; calls are serialized by the database queue, and the store is safe to use from any
/// thread or actor.
///
/// Errors are `FerryModelError`: `.invalidArgument` for a session that cannot be stored (bad
/// identifiers, a frame that is not finite, a restoration activity or userInfo that does not
/// encode), `.storageFailed` for disk trouble (and any call after ``close()``).
///
/// A stored session that no longer decodes (a damaged row) is skipped by ``sessions()``; use
/// ``sessions(corrupt:)`` to learn which ones. Damaged rows are left in place, not deleted.
package final class SceneStore: Sendable {
    /// The name of the database file inside the state directory.
    package static let fileName = "scenes.sqlite"

    /// The state directory.
    package let directory: String

    let database: DatabaseQueue
    /// The damaged `scenes.sqlite` that ``open(directory:)`` set aside to start afresh, for the
    /// caller to log; nil when the store opened as it was.
    package let setAside: StateDirectory.SetAside?

    private init(directory: String, database: DatabaseQueue, setAside: StateDirectory.SetAside? = nil) {
        self.directory = directory
        self.setAside = setAside
        self.database = database
    }

    /// Opens or creates `<directory>/scenes.sqlite`. The directory is already prepared and
    /// locked by PasteboardStore (ferryd opens that first); this store takes no lock of its own.
    /// - Throws: `FerryModelError` `.storageFailed` when the database cannot be opened or migrated.
    package static func open(directory: String) throws -> SceneStore {
        do {
            var configuration = Configuration()
            configuration.label = "ferry.scenes"
            configuration.prepareDatabase { db in
                // The directory lock keeps every other process out (see PasteboardStore.open).
                _ = try String.fetchOne(db, sql: "PRAGMA locking_mode = EXCLUSIVE")
                _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
                try db.execute(sql: "PRAGMA synchronous = FULL")
            }
            let (database, damaged) = try StateDirectory.openDatabase(directory + "/" + fileName, configuration: configuration,
                                                                     migrator: migrator)
            return SceneStore(directory: directory, database: database, setAside: damaged)
        } catch {
            throw FerryModelError.storage("cannot open the scene store in \(directory): \(error)")
        }
    }

    /// Closes the database. Later calls fail with `.storageFailed`.
    package func close() {
        try? database.close()
    }

    // MARK: - Sessions

    /// Every stored session that decodes, in no particular order; damaged rows are skipped.
    /// - Throws: `FerryModelError` `.storageFailed`.
    package func sessions() throws -> [StoredSceneSession] {
        var ignored: [CorruptSession] = []
        return try sessions(corrupt: &ignored)
    }

    /// A stored row that no longer decodes: which session it was and why it cannot be read.
    package struct CorruptSession: Error, Sendable, Hashable, CustomStringConvertible {
        /// The row's persistent identifier (as stored; may itself be the problem).
        package var persistentIdentifier: String
        /// What is wrong, with the column as its key path (e.g. `userInfo`).
        package var error: FerryModelError

        /// Makes a report.
        package init(persistentIdentifier: String, error: FerryModelError) {
            self.persistentIdentifier = persistentIdentifier
            self.error = error
        }

        /// `scene session <id> is damaged: <error>`.
        package var description: String { "scene session \(persistentIdentifier) is damaged: \(error)" }
    }

    /// Every stored session that decodes, in no particular order; each damaged row is skipped
    /// and appended to `corrupt`, for the caller to log.
    /// - Throws: `FerryModelError` `.storageFailed`.
    package func sessions(corrupt: inout [CorruptSession]) throws -> [StoredSceneSession] {
        let rows = try reading { db in try Row.fetchAll(db, sql: "SELECT * FROM sceneSession") }
        var out: [StoredSceneSession] = []
        out.reserveCapacity(rows.count)
        for row in rows {
            do {
                out.append(try SceneStore.session(try SceneSessionRecord(row: row)))
            } catch {
                let stored: DatabaseValue = row["persistentIdentifier"]
                let identifier = SceneStore.text(stored) ?? stored.description
                let problem = error as? FerryModelError ?? FerryModelError(.invalidArgument, "\(error)")
                corrupt.append(CorruptSession(persistentIdentifier: identifier, error: problem))
            }
        }
        return out
    }

    /// Inserts or replaces sessions by persistent identifier, all in one transaction.
    /// - Throws: `FerryModelError` `.invalidArgument` (nothing is written) for a session that
    ///   cannot be stored, with its index in the key path (`[2].userInfo`); `.storageFailed`.
    package func save(_ sessions: [StoredSceneSession]) throws {
        let records = try sessions.enumerated().map { index, stored in
            do { return try SceneStore.record(stored) } catch let error as FerryModelError {
                throw error.nested(under: "[\(index)]")
            }
        }
        guard !records.isEmpty else { return }
        try writing { db in
            for record in records { try record.insert(db, onConflict: .replace) }
        }
    }

    /// Forgets a session; unknown identifiers are ignored.
    /// - Throws: `FerryModelError` `.storageFailed`.
    package func remove(_ persistentIdentifier: String) throws {
        try writing { db in
            try db.execute(sql: "DELETE FROM sceneSession WHERE persistentIdentifier = ?", arguments: [persistentIdentifier])
        }
    }

    // MARK: - Apps

    /// Every app that has registered: app id → its manifest (Info.plist) bytes. A damaged row
    /// (wrong value types) is skipped.
    /// - Throws: `FerryModelError` `.storageFailed`.
    package func knownApps() throws -> [String: [UInt8]] {
        try reading { db in
            var out: [String: [UInt8]] = [:]
            let rows = try Row.fetchCursor(db, sql: "SELECT appID, manifest FROM knownApp")
            while let row = try rows.next() {
                guard let appID = SceneStore.text(row["appID"]) else { continue }
                let manifest: DatabaseValue = row["manifest"]
                guard case .blob(let bytes) = manifest.storage else { continue }
                out[appID] = [UInt8](bytes)
            }
            return out
        }
    }

    /// When each known app last registered. A damaged row is skipped.
    /// - Throws: `FerryModelError` `.storageFailed`.
    package func appRegistrationDates() throws -> [String: Date] {
        try reading { db in
            var out: [String: Date] = [:]
            let rows = try Row.fetchCursor(db, sql: "SELECT appID, registeredAt FROM knownApp")
            while let row = try rows.next() {
                guard let appID = SceneStore.text(row["appID"]) else { continue }
                let time: DatabaseValue = row["registeredAt"]
                guard case .double(let seconds) = time.storage else { continue }
                out[appID] = Date(timeIntervalSince1970: seconds)
            }
            return out
        }
    }

    /// Records an app's registration: its manifest bytes, and `now` as its last registration.
    /// - Throws: `FerryModelError` `.storageFailed`.
    package func saveApp(_ appID: String, manifest: [UInt8], now: Date = Date()) throws {
        try writing { db in
            try db.execute(sql: """
                INSERT INTO knownApp (appID, manifest, registeredAt) VALUES (?, ?, ?)
                ON CONFLICT(appID) DO UPDATE SET manifest = excluded.manifest, registeredAt = excluded.registeredAt
                """, arguments: [appID, Data(manifest), now.timeIntervalSince1970])
        }
    }

    // MARK: - Discards

    /// The sessions of an app destroyed while it was not running, oldest first: its next
    /// registration tells it (didDiscardSceneSessions). A damaged row is skipped.
    /// - Throws: `FerryModelError` `.storageFailed`.
    package func pendingDiscards(of appID: String) throws -> [String] {
        try reading { db in
            try DatabaseValue.fetchAll(db, sql: "SELECT persistentIdentifier FROM pendingDiscard WHERE appID = ? ORDER BY rowid",
                                       arguments: [appID]).compactMap(SceneStore.text)
        }
    }

    /// Remembers that an app must be told a session was discarded (once, however often added).
    /// - Throws: `FerryModelError` `.storageFailed`.
    package func addPendingDiscard(_ persistentIdentifier: String, appID: String) throws {
        try writing { db in
            try db.execute(sql: """
                INSERT OR IGNORE INTO pendingDiscard (appID, persistentIdentifier, addedAt) VALUES (?, ?, ?)
                """, arguments: [appID, persistentIdentifier, Date().timeIntervalSince1970])
        }
    }

    /// Forgets the pending discards `persistentIdentifiers` of an app (it has been told of
    /// them); others, added meanwhile, stay.
    /// - Throws: `FerryModelError` `.storageFailed`.
    package func clearPendingDiscards(of appID: String, _ persistentIdentifiers: [String]) throws {
        try writing { db in
            for identifier in persistentIdentifiers {
                try db.execute(sql: "DELETE FROM pendingDiscard WHERE appID = ? AND persistentIdentifier = ?",
                               arguments: [appID, identifier])
            }
        }
    }

    /// Forgets a session and records its discard for its app in one transaction, so the app is
    /// told of it whatever happens next (a crash included) until it confirms
    /// (``clearPendingDiscards(of:_:)``).
    /// - Throws: `FerryModelError` `.storageFailed`.
    package func destroy(_ persistentIdentifier: String, appID: String) throws {
        try writing { db in
            try db.execute(sql: "DELETE FROM sceneSession WHERE persistentIdentifier = ?", arguments: [persistentIdentifier])
            try db.execute(sql: """
                INSERT OR IGNORE INTO pendingDiscard (appID, persistentIdentifier, addedAt) VALUES (?, ?, ?)
                """, arguments: [appID, persistentIdentifier, Date().timeIntervalSince1970])
        }
    }

    // MARK: - Database access

    /// Runs `body` in a write transaction, committed (and synced) before this returns.
    func writing(_ body: (Database) throws -> Void) throws {
        try FerryModelError.mappingStorageErrors("scene database") { try database.write(body) }
    }

    /// Runs `body` on the queue; this queue is the database's only connection.
    func reading<T>(_ body: (Database) throws -> T) throws -> T {
        try FerryModelError.mappingStorageErrors("scene database") { try database.unsafeRead(body) }
    }
}
