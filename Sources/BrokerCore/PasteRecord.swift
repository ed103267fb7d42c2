#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FerryModel
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One paste, as logged: who read what, from where, when.
package struct PasteRecord: Sendable, Hashable {
    /// The reader's app id, nil when it has none (the CLI).
    package var appID: String?
    /// The reader's unique bus name (`:1.42`).
    package var uniqueName: String
    /// The reader's uid.
    package var uid: UInt32
    /// The reader's pid.
    package var pid: Int32
    /// The reader's process name (its `comm`, as `/proc/PID/comm` gave it when it pasted, read at
    /// most once a second for the same connection: ``readerProcessName(pid:connection:)``); nil
    /// when the broker could not learn it, and for records logged before it kept them.
    package var process: String?
    /// The writer's process name: who copied the item read (its `/proc/PID/comm` when it
    /// copied); nil when unknown, and for items stored and records logged before the broker kept it.
    package var writerProcess: String?
    /// The history entry read (`Read` with the option `history-entry`, as `ferry history show`
    /// does); nil for an ordinary paste of the current items.
    package var historyEntry: Int?
    /// The pasteboard read from.
    package var pasteboard: String
    /// The index of the item read.
    package var itemIndex: Int
    /// The type delivered.
    package var contentType: ContentType
    /// When the paste happened.
    package var timestamp: Date
    /// How the user answered when the read asked for consent (`allowed`, `denied`, `timed-out`,
    /// `withdrawn`; only `allowed` delivered anything); nil when nobody was asked.
    package var consent: String?

    /// Makes a paste record.
    package init(appID: String?, uniqueName: String, uid: UInt32, pid: Int32, process: String? = nil,
                writerProcess: String? = nil, historyEntry: Int? = nil, pasteboard: String,
                itemIndex: Int, contentType: ContentType, timestamp: Date = Date(), consent: String? = nil) {
        self.appID = appID
        self.uniqueName = uniqueName
        self.uid = uid
        self.pid = pid
        self.process = process
        self.writerProcess = writerProcess
        self.historyEntry = historyEntry
        self.pasteboard = pasteboard
        self.itemIndex = itemIndex
        self.contentType = contentType
        self.timestamp = timestamp
        self.consent = consent
    }
}

extension PasteRecord {
    /// The name of process `pid` as the kernel keeps it (`/proc/PID/comm`: at most 15 bytes, the
    /// executable's name unless the process renamed itself), read while the caller is still
    /// connected; nil when there is no such process or it cannot be read. Bytes that are not
    /// UTF-8 become U+FFFD, so the name is always a valid D-Bus string.
    ///
    /// The name is read anew for every call (a process may rename itself); the file is opened
    /// once per process (``ProcessNameFiles``).
    /// - Parameter pid: the caller's pid, as the bus daemon vouched for it.
    package static func processName(pid: UInt32?) -> String? {
        guard let pid, pid > 0 else { return nil }
        return ProcessNameFiles.shared.name(of: pid)
    }

    /// How long a reader's process name is taken as read, for pastes by the same connection.
    package static let readerNameLifetime: Duration = .seconds(1)

    /// A reader's process name for the record of its paste: as ``processName(pid:)`` gives it,
    /// but read again only when the last read for this same connection is older than
    /// ``readerNameLifetime``. Reading it cost every paste a system call (a held paste with both
    /// ends on one CPU took about 8 % longer); a process that renames itself shows its new name
    /// from its pastes a second later at most. Tied to the connection, a name never outlives its process: another
    /// process given the same pid comes on a connection of its own.
    /// - Parameters:
    ///   - pid: the reader's pid, as the bus daemon vouched for it.
    ///   - connection: the reader's unique bus name.
    package static func readerProcessName(pid: UInt32?, connection: String) -> String? {
        guard let pid, pid > 0 else { return nil }
        return ProcessNameFiles.shared.name(of: pid, for: connection, maximumAge: readerNameLifetime)
    }
}

/// Open `/proc/PID/comm` files of recent callers. Opening one is a path walk under `/proc` (about
/// a twentieth of ferryd's CPU per paste); reading an open one again (`pread` at 0) gives the
/// process's name as it is now. A file stays tied to the process it was opened for: once that
/// one has ended, reading fails, and a new process given the same pid is opened afresh.
final class ProcessNameFiles: Sendable {
    static let shared = ProcessNameFiles(limit: 64)
    /// At most this many files stay open; the oldest is closed to make room.
    let limit: Int

    init(limit: Int) { self.limit = limit }

    /// An open file, and the name last read from it for a connection, with when.
    private struct File {
        var descriptor: Int32
        var name: String
        var connection: String?
        /// `CLOCK_MONOTONIC_COARSE` at the read, in nanoseconds.
        var readAt: Int64
    }

    private struct State {
        var files: [UInt32: File] = [:]
        /// Pids in the order their files were opened.
        var opened: [UInt32] = []
    }

    private let state = Mutex(State())

    /// The name of `pid`, nil when it cannot be read.
    func name(of pid: UInt32) -> String? {
        state.withLock { read(pid, for: nil, at: 0, in: &$0) }
    }

    /// The name of `pid` for `connection`: the one last read for that same connection when it is
    /// younger than `maximumAge`, else read now.
    func name(of pid: UInt32, for connection: String, maximumAge: Duration) -> String? {
        let now = Self.coarseNow()
        let age = maximumAge.components.seconds * 1_000_000_000 + maximumAge.components.attoseconds / 1_000_000_000
        return state.withLock { state in
            if let file = state.files[pid], file.connection == connection, now - file.readAt < age { return file.name }
            return read(pid, for: connection, at: now, in: &state)
        }
    }

    /// Reads the name of `pid` under the lock (a file closed to make room is never read by
    /// another caller), opening its file when none is open or its process ended.
    private func read(_ pid: UInt32, for connection: String?, at now: Int64, in state: inout State) -> String? {
        if let fd = state.files[pid]?.descriptor {
            if let name = Self.read(fd) {
                state.files[pid] = File(descriptor: fd, name: name, connection: connection, readAt: now)
                return name
            }
            close(fd)
            state.files[pid] = nil
            state.opened.removeAll { $0 == pid }
        }
        let fd = open("/proc/\(pid)/comm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        guard let name = Self.read(fd) else {
            close(fd)
            return nil
        }
        if state.opened.count >= limit {
            let oldest = state.opened.removeFirst()
            if let old = state.files.removeValue(forKey: oldest) { close(old.descriptor) }
        }
        state.files[pid] = File(descriptor: fd, name: name, connection: connection, readAt: now)
        state.opened.append(pid)
        return name
    }

    /// `CLOCK_MONOTONIC_COARSE` in nanoseconds: a clock read with no system call, to the tick.
    private static func coarseNow() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    /// How many files are open now.
    var openCount: Int { state.withLock { $0.files.count } }

    /// The name in an open `comm` file, nil when it cannot be read (its process has ended).
    private static func read(_ fd: Int32) -> String? {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { buffer in
            let count = pread(fd, buffer.baseAddress, buffer.count, 0)
            guard count > 0 else { return nil }
            var bytes = buffer.prefix(count)
            if bytes.last == UInt8(ascii: "\n") { bytes = bytes.dropLast() }
            bytes = bytes.prefix { $0 != 0 }
            return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
        }
    }
}
