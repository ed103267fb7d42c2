#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import FerryModel
import GRDB

extension StateDirectory {
    /// A database file that could not be read, moved aside so ferryd starts without it.
    package struct SetAside: Sendable, Hashable, CustomStringConvertible {
        /// The file as it was named (`…/ferry.sqlite`).
        package var original: String
        /// Where it is now (`…/ferry.sqlite.damaged-20261126T164500Z`); its `-wal` beside it.
        package var damaged: String
        /// What was wrong with it.
        package var reason: String

        /// `ferry.sqlite is damaged (…); kept as ….damaged-…; starting without it`.
        package var description: String {
            "\(original) is damaged (\(reason)); kept as \(damaged); starting without what it held"
        }
    }

    /// Opens a database and migrates it; when the file is damaged (not a database, failing
    /// SQLite's `quick_check`, or failing to migrate for that reason) it is renamed with a
    /// `.damaged-<UTC time>` suffix, with its `-wal` and `-shm`, and a new one is made.
    /// `beforeRetry` runs between the two (to set aside what depended on the file).
    /// - Returns: the database, and what was set aside (nil when nothing was).
    /// - Throws: what opening throws for any other reason (permissions, a full disk).
    static func openDatabase(_ file: String, configuration: Configuration, migrator: DatabaseMigrator,
                             beforeRetry: () throws -> Void = {}) throws -> (DatabaseQueue, SetAside?) {
        func attempt() throws -> DatabaseQueue {
            let database = try DatabaseQueue(path: file, configuration: configuration)
            do {
                let verdict = try database.read { db in try String.fetchAll(db, sql: "PRAGMA quick_check") }
                guard verdict == ["ok"] else { throw Damage(reason: verdict.prefix(3).joined(separator: "; ")) }
                try migrator.migrate(database)
            } catch {
                try? database.close()
                throw error
            }
            return database
        }
        do {
            return (try attempt(), nil)
        } catch let error where isDamage(error) {
            let reason = (error as? Damage)?.reason ?? "\(error)"
            let damaged = try setAside(file)
            try beforeRetry()
            return (try attempt(), SetAside(original: file, damaged: damaged, reason: reason))
        }
    }

    private struct Damage: Error { var reason: String }

    private static func isDamage(_ error: any Error) -> Bool {
        if error is Damage { return true }
        guard let database = error as? DatabaseError else { return false }
        return database.resultCode == .SQLITE_CORRUPT || database.resultCode == .SQLITE_NOTADB
    }

    /// Renames `path` (and its `-wal` and `-shm`, when present) with a `.damaged-<UTC time>`
    /// suffix. Returns the new name.
    static func setAside(_ path: String, now: Date = Date()) throws -> String {
        let stamp = Date.ISO8601FormatStyle(dateSeparator: .omitted, timeSeparator: .omitted, timeZone: .gmt).format(now)
        var target = path + ".damaged-" + stamp
        var n = 1
        while FileManager.default.fileExists(atPath: target) { n += 1; target = path + ".damaged-\(stamp)-\(n)" }
        guard rename(path, target) == 0 else {
            throw FerryModelError.storage("cannot set the damaged \(path) aside: errno \(errno)")
        }
        for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            _ = rename(path + suffix, target + suffix)
        }
        return target
    }
}
