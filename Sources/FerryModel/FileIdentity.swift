#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What says a regular file is still the one that was looked at: its device and inode, size and
/// modification time to the nanosecond. Two reads of a file separated by a rewrite (in place or by
/// rename) see different identities, so a reader that compares the identity before and after
/// copying knows whether its copy matches one version of the file.
public struct FileIdentity: Sendable, Hashable, CustomStringConvertible {
    /// The device holding the file (`st_dev`).
    public var device: UInt64
    /// The file's inode number on that device (`st_ino`).
    public var inode: UInt64
    /// The file's size in bytes (`st_size`).
    public var size: Int64
    /// The last modification time, whole seconds since the epoch (`st_mtim.tv_sec`).
    public var modificationSeconds: Int64
    /// The nanoseconds past `modificationSeconds` (`st_mtim.tv_nsec`).
    public var modificationNanoseconds: Int64

    /// The identity of the regular file open as `descriptor`; nil when it is not a regular file
    /// (a pipe, a socket, a device: nothing to compare) or cannot be examined.
    public init?(descriptor: Int32) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        self.init(info)
    }

    /// The identity of the regular file at `path` (following symbolic links); nil as above.
    public init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        self.init(info)
    }

    private init?(_ info: stat) {
        guard (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modificationSeconds = Int64(info.st_mtim.tv_sec)
        modificationNanoseconds = Int64(info.st_mtim.tv_nsec)
    }

    /// What differs from `earlier`, in words ("its size went from 10 to 12 bytes"), nil when nothing does.
    public func change(since earlier: FileIdentity) -> String? {
        if device != earlier.device || inode != earlier.inode { return "it was replaced by another file" }
        if size != earlier.size { return "its size went from \(earlier.size) to \(size) bytes" }
        if modificationSeconds != earlier.modificationSeconds || modificationNanoseconds != earlier.modificationNanoseconds {
            return "it was modified"
        }
        return nil
    }

    /// `inode 1234, 10 bytes`.
    public var description: String { "inode \(inode), \(size) bytes" }
}
