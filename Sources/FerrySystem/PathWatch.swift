import CLinux
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Tells whether the file a path names may have changed since the last look, for the price of one
/// `poll` that finds nothing, instead of a `stat` walking the whole path.
///
/// It watches, with inotify, every folder on the way for the one entry that matters there (made,
/// removed, renamed or its attributes changed) and for the folder itself; the file's own inode for
/// its content and attributes (written through any of its names); and the mount table, for a
/// file system mounted over a part of the path. The kernel queues those events before the call
/// that caused them returns, so a look after an edit always sees it.
///
/// Where inotify would not see every change, the path is not watched and every call says "maybe"
/// (the caller looks each time, as it would without a watch): a symbolic link, `.` or `..` on the
/// way; a relative path; a folder or file on a file system other than the local ones listed in
/// `localFileSystems` (a network file system changes under inotify's feet); no inotify or no
/// `/proc`. ``unwatchedReason`` says why.
///
/// Not thread-safe: its owner serialises calls (the paste policy file keeps it under its lock).
package final class PathWatch {
    /// The watched path.
    package let path: String
    /// Why the path is not watched, once a call found it cannot be; nil while it is (or before
    /// the first call).
    package private(set) var unwatchedReason: String?

    /// The folders on the way, from the root, each with its entry that matters and that entry's
    /// path: ("/", "home", "/home"), …
    private let steps: [(folder: String, entry: String, path: String)]
    private var inotify: Int32 = -1
    /// `/proc/self/mountinfo`, which `poll` reports (`POLLPRI`) once after each change of the
    /// mount table.
    private var mountTable: Int32 = -1
    /// What each watch descriptor is for: the entry of its folder that matters, or nil for the
    /// file itself.
    private var watches: [Int32: String?] = [:]
    private var armed = false

    /// Folder and file events that can change what the path names or what the file holds.
    private static let folderEvents = UInt32(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB
                                              | IN_DELETE_SELF | IN_MOVE_SELF)
    private static let fileEvents = UInt32(IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_DELETE_SELF | IN_MOVE_SELF)

    /// File systems whose every change inotify reports (`statfs` magic numbers): ext2/3/4,
    /// btrfs, xfs, tmpfs, f2fs, overlay, zfs and bcachefs.
    package static let localFileSystems: Set<UInt64> = [
        0xEF53, 0x9123_683E, 0x5846_5342, 0x0102_1994, 0xF2F5_2010, 0x794C_7630, 0x2FC1_2FC1, 0xCA45_1A4E,
    ]

    /// Watches nothing yet: the first call sets the watches up.
    package init(path: String) {
        self.path = path
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        var steps: [(String, String, String)] = []
        var folder = "/"
        for part in parts {
            let next = folder == "/" ? "/" + part : folder + "/" + part
            steps.append((folder, part, next))
            folder = next
        }
        self.steps = steps
        if !path.hasPrefix("/") || parts.isEmpty {
            unwatchedReason = "\(path) is not an absolute path to a file"
        } else if parts.contains(where: { $0 == "." || $0 == ".." }) {
            unwatchedReason = "\(path) has `.` or `..` in it"
        }
    }

    deinit { closeDescriptors() }

    /// True when the file may have changed since the last call: on the first call, after any
    /// event that concerns the path, and on every call when the path is not watched. When it
    /// says true the watches are set up afresh before it returns, so the caller's look that
    /// follows is covered: a change after that look is reported by a later call.
    package func mayHaveChanged() -> Bool {
        guard unwatchedReason == nil else { return true }
        if armed, !pendingEventsConcernThePath() { return false }
        arm()
        return true
    }

    /// Whether the path is watched now (false before the first call and once it cannot be).
    package var isWatching: Bool { armed && unwatchedReason == nil }

    /// Polls the inotify queue and the mount table without waiting; reads what is queued.
    private func pendingEventsConcernThePath() -> Bool {
        var descriptors = (pollfd(fd: inotify, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: mountTable, events: Int16(POLLPRI), revents: 0))
        let ready = withUnsafeMutablePointer(to: &descriptors) {
            $0.withMemoryRebound(to: pollfd.self, capacity: 2) { poll($0, 2, 0) }
        }
        if ready == 0 { return false }
        if ready < 0 { return true }
        if descriptors.1.revents != 0 { return true }
        return drainConcernsThePath()
    }

    /// Reads every queued event; true when one of them is about the path (or the queue overflowed,
    /// or a watch went away).
    private func drainConcernsThePath() -> Bool {
        var concerned = false
        let alignment = MemoryLayout<inotify_event>.alignment
        withUnsafeTemporaryAllocation(byteCount: 4096, alignment: alignment) { buffer in
            while true {
                let count = read(inotify, buffer.baseAddress, buffer.count)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return }
                var offset = 0
                let header = MemoryLayout<inotify_event>.size
                while offset + header <= count {
                    let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                    let nameBytes = UnsafeRawBufferPointer(rebasing: buffer[(offset + header)..<min(count, offset + header + Int(event.len))])
                    offset += header + Int(event.len)
                    if concerned { continue }
                    if event.mask & UInt32(IN_Q_OVERFLOW | IN_IGNORED | IN_UNMOUNT) != 0 {
                        concerned = true
                        continue
                    }
                    guard let entry = watches[event.wd] else { continue }  // a watch of an earlier arming
                    guard let entry else {
                        concerned = true  // the file itself
                        continue
                    }
                    let name = nameBytes.prefix { $0 != 0 }
                    // An event without a name is about the folder itself.
                    if name.isEmpty || name.elementsEqual(entry.utf8) { concerned = true }
                }
            }
        }
        return concerned
    }

    /// Sets up a new inotify instance with a watch on each folder on the way and on the file,
    /// reading nothing the old one queued (the caller's look follows).
    private func arm() {
        closeDescriptors()
        armed = true
        inotify = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard inotify >= 0 else { return unwatchable("inotify is not available: \(String(cString: strerror(errno)))") }
        mountTable = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC)
        guard mountTable >= 0 else { return unwatchable("cannot open /proc/self/mountinfo: \(String(cString: strerror(errno)))") }
        for (index, step) in steps.enumerated() {
            // The folder is watched first: a change of its entry from now on is an event.
            let folderWatch = inotify_add_watch(inotify, step.folder, Self.folderEvents | UInt32(IN_DONT_FOLLOW | IN_ONLYDIR))
            guard folderWatch >= 0 else {
                // Removed or replaced since the look one step up: that folder's watch reported it.
                if index > 0 && (errno == ENOENT || errno == ENOTDIR) { return }
                return unwatchable("cannot watch \(step.folder): \(String(cString: strerror(errno)))")
            }
            watches[folderWatch] = .some(step.entry)
            guard Self.isLocal(step.folder) else {
                return unwatchable("\(step.folder) is not on a local file system")
            }
            let next = step.path
            var info = stat()
            guard lstat(next, &info) == 0 else {
                // Missing (or not reachable): the folder's watch reports when it appears.
                return
            }
            let kind = info.st_mode & S_IFMT
            if kind == S_IFLNK { return unwatchable("\(next) is a symbolic link") }
            if index == steps.count - 1 {
                let fileWatch = inotify_add_watch(inotify, next, Self.fileEvents | UInt32(IN_DONT_FOLLOW))
                guard fileWatch >= 0 else {
                    // Removed meanwhile, or unreadable (so is the policy, until a change of its
                    // mode, which the folder's watch reports).
                    if errno == ENOENT || errno == EACCES { return }
                    return unwatchable("cannot watch \(next): \(String(cString: strerror(errno)))")
                }
                watches[fileWatch] = .some(nil)
                if kind == S_IFREG, !Self.isLocal(next) { return unwatchable("\(next) is not on a local file system") }
            } else if kind != S_IFDIR {
                return  // not a folder: the path names nothing, until the folder's watch says so
            }
        }
    }

    private func unwatchable(_ reason: String) {
        unwatchedReason = reason
        closeDescriptors()
    }

    private static func isLocal(_ path: String) -> Bool {
        var info = statfs()
        guard statfs(path, &info) == 0 else { return false }
        return localFileSystems.contains(UInt64(UInt(bitPattern: Int(info.f_type))))
    }

    private func closeDescriptors() {
        if inotify >= 0 { close(inotify) }
        if mountTable >= 0 { close(mountTable) }
        inotify = -1
        mountTable = -1
        watches = [:]
    }
}
