#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import FerryModel
import FerryTerminal
import GRDB
import Synchronization

/// The durable storage under ferryd's pasteboards: items, history, promises and the paste log
/// in SQLite (`ferry.sqlite`, WAL, `synchronous = FULL`), large representations as files in
/// `blobs/`.
///
/// Every mutating method is durable before it returns (but a ``write(_:to:now:durable:)`` asked
/// not to be). Methods are synchronous and may block on disk I/O (a large blob copy, an fsync);
/// calls are serialized by the database queue, and the store is safe to use from any thread or
/// actor. Sensitive items are never stored: see ``write(_:to:now:durable:)``.
///
/// Errors are `FerryModelError`: `.notFound` for unknown pasteboards, items and
/// representations (and expired items), `.invalidArgument` for bad names and items,
/// `.unavailable` for promised bytes whose owner is gone, `.storageFailed` for disk failures.
package final class PasteboardStore: Sendable {
    /// The largest representation kept inside the database; larger ones become blob files.
    package static let inlineLimit = 64 * 1024
    /// The name of the pasteboard that always exists and has a history.
    package static let general = "general"
    /// How many paste log records are kept (older ones are dropped).
    package static let pasteLogLimit = 10_000

    /// The state directory.
    package let directory: String
    /// How many history entries the general pasteboard keeps.
    package let historyLimit: Int
    /// The most bytes the general pasteboard's history may hold (the representations whose
    /// bytes the store keeps, inline or in blobs); the oldest entries go first, and an entry
    /// larger than this never enters the history.
    package let historyBytes: Int64
    /// The default ``historyBytes``: 1 GiB.
    package static let defaultHistoryBytes: Int64 = 1 << 30
    /// How long a descriptor being copied may deliver nothing before the write fails with
    /// `Timeout` (a pipe whose writer never writes).
    package let descriptorTimeout: Duration
    /// The most the blob files may take, in bytes (``open(directory:historyLimit:descriptorTimeout:diskBudget:)``).
    package var diskBudget: Int64 { blobs.budget.limit }
    /// The bytes the blob files take now.
    package var diskUsed: Int64 { blobs.budget.charged }
    /// The default ``diskBudget``: 4 GiB.
    package static let defaultDiskBudget: Int64 = 4 << 30
    /// The size of `ferry.reserve`: space kept so that clearing works on a full file system.
    static let reserveSize = 1 << 20

    let database: DatabaseQueue
    package let blobs: BlobStore
    /// The damaged `ferry.sqlite` (and the `blobs/` it referred to) that ``open(directory:historyLimit:descriptorTimeout:)``
    /// set aside to start afresh, for the caller to log; empty when the store opened as it was.
    package let setAside: [StateDirectory.SetAside]
    /// The open `ferry.lock`, -1 once closed.
    private let lockDescriptor: Mutex<Int32>

    private init(directory: String, historyLimit: Int, historyBytes: Int64, descriptorTimeout: Duration,
                 database: DatabaseQueue, blobs: BlobStore, lock: Int32, setAside: [StateDirectory.SetAside]) {
        self.directory = directory
        self.setAside = setAside
        self.historyLimit = historyLimit
        self.historyBytes = historyBytes
        self.descriptorTimeout = descriptorTimeout
        self.database = database
        self.blobs = blobs
        self.lockDescriptor = Mutex(lock)
    }

    deinit { releaseLock() }

    /// Opens (creating or migrating) the store in `directory`.
    ///
    /// Creates the directory with mode 0700 and takes its lock, migrates the schema, marks every
    /// representation promised by a previous run as unavailable (its owner is gone), and deletes
    /// blob files no row references (left by a crash between a blob's write and its commit).
    /// - Parameters:
    ///   - directory: the state directory; nil means ``StateDirectory/defaultPath(environment:)``.
    ///   - historyLimit: how many history entries the general pasteboard keeps (0: none).
    ///   - historyBytes: the most bytes those entries may hold (1 GiB); see ``historyBytes``.
    ///   - descriptorTimeout: how long a descriptor being copied may deliver nothing (30 s).
    ///   - diskBudget: the most the blob files may take, in bytes (4 GiB); a write past it is
    ///     `.tooLarge`.
    ///   - holder: who opens it, recorded in `ferry.lock` for anyone who finds it held (ferryd
    ///     gives its pid and bus); nil records nothing.
    /// - Throws: `FerryModelError` `.invalidArgument` for a negative limit, budget or timeout,
    ///   `.unavailable` when another store holds the directory, `.storageFailed` when it cannot
    ///   be opened.
    package static func open(directory: String? = nil, historyLimit: Int = 100,
                            historyBytes: Int64 = defaultHistoryBytes,
                            descriptorTimeout: Duration = .seconds(30),
                            diskBudget: Int64 = defaultDiskBudget,
                            holder: StateLockHolder? = nil) throws -> PasteboardStore {
        guard historyLimit >= 0 else { throw FerryModelError(.invalidArgument, "the history limit must not be negative") }
        guard historyBytes >= 0 else { throw FerryModelError(.invalidArgument, "the history byte limit must not be negative") }
        guard diskBudget >= 0 else { throw FerryModelError(.invalidArgument, "the disk budget must not be negative") }
        guard descriptorTimeout > .zero else {
            throw FerryModelError(.invalidArgument, "the descriptor timeout must be positive")
        }
        let path = directory ?? StateDirectory.defaultPath()
        try StateDirectory.prepare(path)
        let lock = try StateDirectory.lock(path, holder: holder)
        do {
            var configuration = Configuration()
            configuration.foreignKeysEnabled = true
            configuration.label = "ferry"
            configuration.prepareDatabase { db in
                // The directory lock already keeps every other process out, so SQLite need not
                // take and drop its file locks (two fcntl calls) around every statement, and the
                // WAL index lives in memory instead of the -shm file.
                _ = try String.fetchOne(db, sql: "PRAGMA locking_mode = EXCLUSIVE")
                _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
                try db.execute(sql: "PRAGMA synchronous = FULL")
            }
            // A damaged database goes aside with the blobs it referred to: they are the bytes,
            // and the fresh store would otherwise delete them as unreferenced.
            var blobsAside: StateDirectory.SetAside?
            let (database, damaged) = try StateDirectory.openDatabase(path + "/ferry.sqlite", configuration: configuration,
                                                                     migrator: migrator) {
                guard FileManager.default.fileExists(atPath: path + "/blobs") else { return }
                let moved = try StateDirectory.setAside(path + "/blobs")
                blobsAside = StateDirectory.SetAside(original: path + "/blobs", damaged: moved,
                                                     reason: "the blobs of the damaged ferry.sqlite")
            }
            let blobs = try BlobStore(directory: path + "/blobs", budget: DiskBudget(limit: diskBudget))
            let store = PasteboardStore(directory: path, historyLimit: historyLimit, historyBytes: historyBytes,
                                        descriptorTimeout: descriptorTimeout, database: database,
                                        blobs: blobs, lock: lock, setAside: [damaged, blobsAside].compactMap { $0 })
            try store.recover()
            store.keepReserve()
            return store
        } catch let error as FerryModelError {
            Glibc.close(lock)
            throw error
        } catch {
            Glibc.close(lock)
            throw FerryModelError.storage("cannot open the store in \(path): \(error)")
        }
    }

    /// Closes the database and releases the directory's lock. Later calls fail with `.storageFailed`.
    package func close() {
        try? database.close()
        releaseLock()
    }

    private func releaseLock() {
        lockDescriptor.withLock { fd in
            if fd >= 0 { Glibc.close(fd) }
            fd = -1
        }
    }

    /// What `open` does after migrating: promises of the previous run are dropped (their owners
    /// are gone: see ``dropPromises(of:now:)``), and so are the unavailable markers earlier versions
    /// left for them; the history is trimmed to the (possibly lowered) limit, orphan blobs go.
    private func recover() throws {
        try writing { db in
            let (_, garbage) = try dropRepresentations(db, where: "storage IN ('promised', 'unavailable')", [], now: Date())
            return garbage + (try trimHistory(db))
        }
        let referenced = try reading { db in
            Set(try String.fetchAll(db, sql: "SELECT blob FROM representation WHERE blob IS NOT NULL"))
        }
        try blobs.collect(keeping: referenced)
    }

    // MARK: - Names

    /// Checks a pasteboard name (``PasteboardName/validate(_:)``).
    /// - Throws: `FerryModelError` `.invalidArgument` naming the problem.
    package static func validatePasteboardName(_ name: String) throws {
        try PasteboardName.validate(name)
    }

    // MARK: - Database access

    /// Runs `body` in a write transaction; after commit, deletes the blobs it returns (still on
    /// the queue, so no reader can be between finding a blob's row and opening its file).
    /// `durable: false` commits this one transaction with `synchronous = NORMAL` (no WAL fsync),
    /// unless it makes garbage.
    func writing<T>(durable: Bool = true, _ body: (Database) throws -> (T, garbage: [String])) throws -> T {
        try FerryModelError.mappingStorageErrors("database") {
            try database.writeWithoutTransaction { db in
                var output: T?
                var garbage: [String] = []
                if !durable { try db.cachedStatement(sql: "PRAGMA synchronous = NORMAL").execute() }
                defer { if !durable { try? db.cachedStatement(sql: "PRAGMA synchronous = FULL").execute() } }
                try db.inTransaction {
                    (output, garbage) = try body(db)
                    return .commit
                }
                if !durable && !garbage.isEmpty {
                    // Blobs are unlinked only after a commit that a power failure cannot undo: a
                    // checkpoint syncs the WAL first (SQLite refuses to change the level inside
                    // the transaction).
                    try db.execute(sql: "PRAGMA synchronous = FULL")
                    _ = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(PASSIVE)")
                }
                blobs.remove(garbage)
                guard let output else { preconditionFailure("a committed transaction has set its result") }
                return output
            }
        }
    }

    /// `writing` for bodies that make no garbage.
    func writing(_ body: (Database) throws -> [String]) throws {
        try writing { db in ((), garbage: try body(db)) }
    }

    /// `writing` for a transaction that makes room (clearing, removing): when the file system
    /// is too full for SQLite to write even that, `ferry.reserve` is deleted and the transaction
    /// tried once more, so space can always be freed through Ferry. The reserve is made again
    /// afterwards, when there is room.
    func freeing<T>(_ body: (Database) throws -> (T, garbage: [String])) throws -> T {
        defer { keepReserve() }
        do {
            return try writing(body)
        } catch let error as FerryModelError where error.code == .tooLarge {
            guard unlink(reservePath) == 0 else { throw error }
            return try writing(body)
        }
    }

    private var reservePath: String { directory + "/ferry.reserve" }

    /// Makes `ferry.reserve` (``reserveSize`` bytes) unless it is there; without room it stays
    /// missing until a later call (best effort: the store works without it).
    func keepReserve() {
        var info = stat()
        if stat(reservePath, &info) == 0, info.st_size >= Self.reserveSize { return }
        let fd = Glibc.open(reservePath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        defer { Glibc.close(fd) }
        let zeros = [UInt8](repeating: 0, count: Self.reserveSize)
        let complete = (try? zeros.withUnsafeBytes { try BlobStore.writeAll(fd, $0) }) != nil && fsync(fd) == 0
        if !complete { unlink(reservePath) }
    }

    /// Runs `body` on the queue, outside a write transaction. No read transaction is needed:
    /// this queue is the database's only connection (the directory lock keeps other processes
    /// out), so no write can interleave with a read.
    func reading<T>(_ body: (Database) throws -> T) throws -> T {
        try FerryModelError.mappingStorageErrors("database") { try database.unsafeRead(body) }
    }
}
