#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import FerryModel
import Synchronization

/// Writes files into one directory without ever overwriting a file or leaving the directory:
/// save-to-folder's file system part, with no bus.
///
/// The directory is opened once (`O_DIRECTORY | O_NOFOLLOW`: a symbolic link is refused) and
/// every file is created relative to it (`openat` with `O_CREAT | O_EXCL | O_NOFOLLOW`), so
/// nothing that exists is opened, no symbolic link is followed and a cleaned name cannot name
/// another directory. A name taken already gets a number ("photo 2.png", "photo 3.png", …). When
/// anything fails, the files this call created are removed again.
package enum FolderSaver {
    /// One file to write.
    package struct File: Sendable, Hashable {
        /// The name asked for (an item's `suggestedName`), cleaned before use; nil: "Item".
        package var suggestedName: String?
        /// The filename extensions of the bytes' type, preferred first; empty for none. A name
        /// already ending with one keeps it.
        package var filenameExtensions: [String]
        /// The bytes.
        package var bytes: Data

        /// Describes a file to write.
        package init(suggestedName: String?, filenameExtensions: [String], bytes: Data) {
            self.suggestedName = suggestedName
            self.filenameExtensions = filenameExtensions
            self.bytes = bytes
        }
    }

    /// The longest base name kept, in UTF-8 bytes (cut on a character boundary).
    package static let maximumNameLength = 200
    /// How many numbered names are tried ("name.ext", "name 2.ext" … "name 1000.ext").
    package static let maximumAttempts = 1000
    /// The name of a file whose item has no usable suggested name.
    package static let defaultName = "Item"
    /// The longest file name Linux file systems take (NAME_MAX).
    static let nameMax = 255
    /// The longest path given to the kernel (PATH_MAX, counting the NUL).
    static let pathMax = 4096

    // MARK: - Saving

    /// Writes each file into `directory` under a fresh name.
    /// - Parameters:
    ///   - files: the files, in order.
    ///   - directory: an absolute path to an existing directory (not a symbolic link).
    /// - Returns: the absolute path of each file written, in order.
    /// - Throws: `FerryModelError`: `.invalidArgument` (keyPath `options.to`) for a bad directory;
    ///   `.permissionDenied`, `.tooLarge` (no space) or `.unavailable` when a file cannot be
    ///   created or written — then none of the files remains.
    package static func save(_ files: [File], in directory: String) throws -> [String] {
        let batch = try Batch(directory: directory)
        do {
            for file in files {
                let (fd, name) = try batch.create(suggestedName: file.suggestedName, filenameExtensions: file.filenameExtensions)
                defer { close(fd) }
                try file.bytes.withUnsafeBytes { try write($0, to: fd, name: name, directory: directory) }
                try sync(fd, name: name, directory: directory)
            }
        } catch {
            batch.discard()
            throw error
        }
        return batch.commit()
    }

    /// A save in progress: files created one at a time in one opened folder (as `save` creates
    /// them), then all kept (`commit`) or all removed (`discard`). For files whose bytes arrive
    /// as a stream; its calls may come from different threads, one at a time.
    package final class Batch: Sendable {
        /// The folder, as given.
        package let directory: String
        private let dir: Int32
        private let created = Mutex<[String]>([])

        /// Opens `directory`.
        /// - Throws: `FerryModelError` `.invalidArgument` (keyPath `options.to`) for a bad directory.
        package init(directory: String) throws {
            self.directory = directory
            dir = try openDirectory(directory)
        }

        deinit { close(dir) }

        /// Creates the next file under a fresh name; the caller writes it (`FolderSaver.write`,
        /// then `sync`) and closes the descriptor.
        /// - Throws: `FerryModelError` `.permissionDenied`, `.tooLarge` or `.io` (then `discard`).
        package func create(suggestedName: String?, filenameExtensions: [String]) throws -> (fd: Int32, name: String) {
            let (base, ext) = fileName(suggestedName: suggestedName, filenameExtensions: filenameExtensions)
            let (fd, name) = try FolderSaver.create(in: dir, base: base, extension: ext, directory: directory)
            created.withLock { $0.append(name) }
            return (fd, name)
        }

        /// Keeps the files created: syncs the folder's new names and returns each file's absolute
        /// path, in order.
        package func commit() -> [String] {
            _ = fsync(dir)  // the new names; a file system that cannot sync a directory still has them
            let prefix = directory.count > 1 && directory.hasSuffix("/")
                ? String(directory.dropLast(trailingSlashes(directory))) : directory
            return created.withLock { $0 }.map { prefix == "/" ? "/" + $0 : prefix + "/" + $0 }
        }

        /// Removes the files created so far.
        package func discard() {
            let names = created.withLock { names in defer { names = [] }; return names }
            for name in names.reversed() { unlinkat(dir, name, 0) }
        }
    }

    /// Checks that `path` can be saved in: absolute, an existing directory, not a symbolic link.
    /// - Throws: `FerryModelError` `.invalidArgument` with keyPath `options.to`.
    package static func checkDirectory(_ path: String) throws {
        close(try openDirectory(path))
    }

    /// Opens the directory for `openat`.
    static func openDirectory(_ path: String) throws -> Int32 {
        func refuse(_ message: String) -> FerryModelError {
            FerryModelError(.invalidArgument, message, keyPath: "options.to")
        }
        guard !path.isEmpty else { throw refuse("must be the absolute path of a folder, not empty") }
        guard !path.utf8.contains(0) else { throw refuse("must not contain NUL") }
        guard path.hasPrefix("/") else { throw refuse("must be an absolute path (\"\(path.printableLine(limit: 80))\" is relative)") }
        guard path.utf8.count < pathMax else { throw refuse("is longer than \(pathMax - 1) bytes") }
        // O_NOFOLLOW guards the last part only as the kernel sees it: with a trailing slash it
        // follows a link there anyway, and after "." or ".." the link is a folder on the way.
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        let last = trimmed.split(separator: "/").last
        guard last != "." && last != ".." else {
            throw refuse("must name the folder itself, not end in '.' or '..' (\"\(path.printableLine(limit: 80))\")")
        }
        let path = String(trimmed)
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if fd >= 0 { return fd }
        let code = errno
        var info = stat()
        let shown = path.printableLine(limit: 200)
        if lstat(path, &info) == 0 {
            switch info.st_mode & S_IFMT {
            case S_IFLNK: throw refuse("\(shown) is a symbolic link (give the folder itself)")
            case S_IFDIR: break
            default: throw refuse("\(shown) is not a folder")
            }
        }
        switch code {
        case ENOENT: throw refuse("\(shown) does not exist")
        case ENOTDIR: throw refuse("\(shown) is not a folder (or a part of its path is not)")
        case ELOOP: throw refuse("\(shown) is a symbolic link (give the folder itself)")
        default: throw refuse("\(shown) cannot be opened: \(describe(code))")
        }
    }

    /// Creates the first free name among "base.ext", "base 2.ext", … in `dir`.
    static func create(in dir: Int32, base: String, extension ext: String?, directory: String) throws -> (Int32, String) {
        var number = 1
        while number <= maximumAttempts {
            let name = candidate(base: base, extension: ext, number: number)
            let fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            if fd >= 0 { return (fd, name) }
            let code = errno
            switch code {
            case EINTR: continue
            case EEXIST: number += 1
            default: throw failure(code, "cannot create \"\(name)\" in \(directory)")
            }
        }
        throw FerryModelError(.io, "\(directory) has \"\(candidate(base: base, extension: ext, number: 1))\" and "
                              + "\(maximumAttempts - 1) numbered names like it already")
    }

    /// "base.ext" for the first attempt, "base N.ext" after.
    static func candidate(base: String, extension ext: String?, number: Int) -> String {
        let numbered = number == 1 ? base : "\(base) \(number)"
        return ext.map { numbered + "." + $0 } ?? numbered
    }

    /// Writes all of `bytes` to the file `name` of `directory` (named in errors).
    package static func write(_ bytes: UnsafeRawBufferPointer, to fd: Int32, name: String, directory: String) throws {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(fd, bytes.baseAddress! + offset, min(bytes.count - offset, 1 << 20))
            if written < 0 {
                let code = errno
                if code == EINTR { continue }
                throw failure(code, "cannot write \"\(name)\" in \(directory)")
            }
            offset += written
        }
    }

    /// Syncs a written file to disk.
    package static func sync(_ fd: Int32, name: String, directory: String) throws {
        guard fsync(fd) == 0 else { throw failure(errno, "cannot write \"\(name)\" in \(directory) to disk") }
    }

    /// A named error for a failed system call.
    static func failure(_ code: Int32, _ what: String) -> FerryModelError {
        let kind: FerryModelError.Code = switch code {
        case EACCES, EPERM, EROFS: .permissionDenied
        case ENOSPC, EDQUOT, EFBIG: .tooLarge
        default: .io
        }
        return FerryModelError(kind, "\(what): \(describe(code))")
    }

    static func describe(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    private static func trailingSlashes(_ path: String) -> Int {
        min(path.reversed().prefix { $0 == "/" }.count, path.count - 1)
    }
}
