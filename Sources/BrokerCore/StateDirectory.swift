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
import FerryTerminal

/// Where ferryd keeps its durable state: `$XDG_STATE_HOME/ferry`, by default `~/.local/state/ferry`.
///
/// Inside: `ferry.sqlite` (with its `-wal` and `-shm` files), `blobs/` for large representations,
/// `ferry.lock`, which one store at a time holds with `flock` and in which ferryd records its
/// pid and bus (``StateLockHolder``), and `ferry.reserve`, 1 MiB kept free for clearing on a full
/// file system.
package enum StateDirectory {
    /// The default state directory for this user, following the XDG base directory specification:
    /// `$XDG_STATE_HOME/ferry` when that is an absolute path, else `$HOME/.local/state/ferry`.
    /// - Parameter environment: the environment to read (the process's by default).
    package static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        StateLockHolder.defaultDirectory { environment[$0] }
    }

    /// Creates `path` (and missing parents) and makes sure it is a directory of mode 0700.
    /// - Throws: `FerryModelError` `.storageFailed` when it cannot.
    static func prepare(_ path: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw FerryModelError.storage("cannot create the state directory \(path): \(error)")
        }
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw FerryModelError.storage("\(path) is not a directory")
        }
        if info.st_mode & 0o777 != 0o700, chmod(path, 0o700) != 0 {
            throw FerryModelError.storage("cannot make \(path) private (mode 0700): errno \(errno)")
        }
    }

    /// Takes the directory's exclusive lock, so that two daemons never share one state directory,
    /// and records `holder` in the lock file for whoever finds it held.
    /// - Parameter holder: who takes the lock (ferryd's pid and bus); nil records nothing.
    /// - Returns: the open lock file; closing it releases the lock (so does the process's death).
    /// - Throws: `FerryModelError` `.unavailable` when another process holds the lock (naming the
    ///   holder it recorded, if any).
    static func lock(_ path: String, holder: StateLockHolder? = nil) throws -> Int32 {
        let fd = open(path + "/ferry.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw FerryModelError.storage("cannot open \(path)/ferry.lock: errno \(errno)") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            let by = StateLockHolder.recorded(in: path).map { " (\($0.description))" } ?? ""
            throw FerryModelError(.unavailable, "the state directory \(path) is in use by another store\(by)")
        }
        // Written under the lock; a failure to record is not a reason to refuse the directory.
        let record = Array((holder?.fileContents ?? "").utf8)
        if ftruncate(fd, 0) == 0, !record.isEmpty {
            _ = record.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        }
        return fd
    }
}

extension FerryModelError.Code {
    /// The state directory or database could not be read or written (disk full, permissions,
    /// a corrupt database). D-Bus: `org.ferry.Error.StorageFailed`.
    package static let storageFailed = FerryModelError.Code(rawValue: "StorageFailed")
}

extension FerryModelError {
    static func storage(_ message: String) -> FerryModelError { FerryModelError(.storageFailed, message) }

    /// Runs `body` against a store's database: a model error passes through, anything else (a
    /// GRDB or SQLite error) becomes `.storageFailed` ("`what` error: …").
    static func mappingStorageErrors<T>(_ what: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as FerryModelError {
            throw error
        } catch let error as DatabaseError where error.resultCode == .SQLITE_FULL {
            throw FerryModelError(.tooLarge, "the state directory's file system is full (\(what): \(error)); "
                                  + "clear a pasteboard or the history to make room")
        } catch {
            throw storage("\(what) error: \(error)")
        }
    }
}
