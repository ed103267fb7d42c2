#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import FerryModel
import FerrySystem
import Synchronization

/// The files under `blobs/` that hold large representations. A blob is immutable once named and
/// is referenced by exactly one representation row.
///
/// A blob becomes visible atomically: bytes go to `.tmp-<uuid>`, which is fsynced, renamed to
/// `<uuid>`, and the directory is fsynced — all before the transaction that references it
/// commits. A crash in between leaves an unreferenced file, removed by the next ``collect(keeping:)``.
///
/// Each blob's XXH64 checksum is computed while its bytes are copied in, and recorded in its
/// row with the file's ``BlobIdentity``; a reader checksums the file again only when its identity
/// has changed (see `PasteboardStore.readData(item:representation:now:)`).
///
/// Every byte written is charged to ``budget`` first and refunded when its blob is removed (or
/// its write fails); a file system that fills up anyway refuses the write as `.tooLarge` too.
package struct BlobStore: Sendable {
    /// The copy buffer size.
    static let bufferSize = 1 << 20

    /// The `blobs/` directory.
    let directory: String
    /// What the blob files may take in all, and take now.
    let budget: DiskBudget

    /// Makes the directory if needed.
    init(directory: String, budget: DiskBudget) throws {
        self.directory = directory
        self.budget = budget
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw FerryModelError.storage("cannot create \(directory): \(error)")
        }
    }

    /// Whether `name` can be a blob's name (a lowercase UUID), so a name from the database never
    /// points outside `blobs/`.
    static func isValidName(_ name: String) -> Bool {
        name.utf8.count == 36 && name.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) || $0 == 0x2D }
    }

    /// Writes `data` as a new blob, durably, checksumming the bytes as they go.
    /// - Throws: `FerryModelError` `.tooLarge` past the budget or when the file system is full.
    func write(_ data: Data) throws -> WrittenBlob {
        try written { sink in try data.withUnsafeBytes { try sink.append($0) } }
    }

    /// Writes `prefix` and then everything `source` still delivers, durably, each chunk charged
    /// to the budget before it is written and checksummed while it is in the buffer.
    /// - Throws: `FerryModelError` `.tooLarge` once the bytes pass the budget or the file system
    ///   is full (nothing is left of the blob then), and as reading `source` does.
    func write(prefix: Data, copyingFrom source: inout DescriptorReader) throws -> WrittenBlob {
        try written { sink in
            try prefix.withUnsafeBytes { try sink.append($0) }
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.bufferSize, alignment: 16)
            defer { buffer.deallocate() }
            while true {
                let count = try source.read(into: buffer)
                if count == 0 { break }
                try sink.append(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            }
        }
    }

    /// Where a new blob's bytes go: each piece charged to the budget, checksummed and written.
    private struct Sink {
        let fd: Int32
        let budget: DiskBudget
        var size: Int64 = 0
        var checksum = BlobChecksum()

        mutating func append(_ bytes: UnsafeRawBufferPointer) throws {
            try budget.charge(Int64(bytes.count))
            size += Int64(bytes.count)
            checksum.update(bytes)
            try BlobStore.writeAll(fd, bytes)
        }
    }

    /// A new blob whose bytes `fill` appends to its sink; what was charged is refunded when
    /// anything fails (nothing is left of the blob then).
    private func written(_ fill: (inout Sink) throws -> Void) throws -> WrittenBlob {
        var charged: Int64 = 0
        do {
            var result: (size: Int64, checksum: UInt64) = (0, 0)
            let (name, identity) = try create { fd in
                var sink = Sink(fd: fd, budget: budget)
                defer { charged = sink.size }
                try fill(&sink)
                result = (sink.size, sink.checksum.value)
            }
            return WrittenBlob(name: name, size: result.size, checksum: result.checksum, identity: identity)
        } catch {
            budget.refund(charged)
            throw error
        }
    }

    /// Opens a blob read-only, never following a symbolic link. The caller owns the descriptor.
    /// - Parameter expectedSize: the size the store recorded; a file of another size is damaged.
    /// - Throws: `FerryModelError` `.notFound` when the file is missing, `.unavailable` when it
    ///   is not a regular file (a link, a FIFO, a directory put in its place) or has lost or
    ///   gained bytes: such a file is never served as the item's bytes.
    /// - Returns: the descriptor, the file's size and its identity now (compare it with the one
    ///   recorded to know whether the file may have changed since: see ``checksum(of:size:)``).
    func open(_ name: String, expectedSize: Int64?) throws -> (descriptor: Int32, size: Int64, identity: BlobIdentity) {
        guard Self.isValidName(name) else { throw FerryModelError.storage("bad blob name \(name) in the database") }
        // O_NOFOLLOW: a link in place of the blob is refused (ELOOP), not followed; O_NONBLOCK:
        // a FIFO in its place cannot hang the open.
        let fd = Glibc.open(path(name), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else {
            if errno == ELOOP {
                throw FerryModelError(.unavailable, "the representation's blob file was replaced by a symbolic link; it is not served")
            }
            throw FerryModelError(.notFound, "the representation's blob file is missing (errno \(errno))")
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            close(fd)
            throw FerryModelError.storage("cannot stat blob \(name): errno \(errno)")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw FerryModelError(.unavailable, "the representation's blob file is not a regular file; it is not served")
        }
        if let expectedSize, Int64(info.st_size) != expectedSize {
            close(fd)
            throw FerryModelError(.unavailable,
                                  "the representation's blob file is damaged: \(info.st_size) bytes on disk, \(expectedSize) stored")
        }
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0 { _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
        return (fd, Int64(info.st_size), BlobIdentity(info))
    }

    /// Reads a blob's `size` bytes from offset 0 with `pread` (the descriptor's own offset does
    /// not move) and returns their checksum.
    /// - Throws: `FerryModelError` `.unavailable` when the file ends early or cannot be read.
    func checksum(of descriptor: Int32, size: Int64) throws -> UInt64 {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.bufferSize, alignment: 16)
        defer { buffer.deallocate() }
        var checksum = BlobChecksum()
        var offset: Int64 = 0
        while offset < size {
            let count = pread(descriptor, buffer.baseAddress!, Int(min(Int64(Self.bufferSize), size - offset)), off_t(offset))
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                throw FerryModelError(.unavailable, "the representation's blob file cannot be read back "
                                      + "(\(count < 0 ? "errno \(errno)" : "it ends at byte \(offset)")); it is not served")
            }
            checksum.update(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            offset += Int64(count)
        }
        return checksum.value
    }

    /// Deletes blobs; missing ones are ignored. Not fsynced: a blob that comes back after a crash
    /// is unreferenced and collected at the next open.
    func remove(_ names: some Sequence<String>) {
        for name in names where Self.isValidName(name) {
            var info = stat()
            let size = stat(path(name), &info) == 0 ? Int64(info.st_size) : 0
            if unlink(path(name)) == 0 { budget.refund(size) }
        }
    }

    /// Deletes every file in `blobs/` that is not in `referenced` (orphans of a crash, temporary
    /// files of an interrupted copy). Returns how many it deleted.
    @discardableResult
    func collect(keeping referenced: Set<String>) throws -> Int {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw FerryModelError.storage("cannot list \(directory): \(error)")
        }
        var removed = 0
        var kept: Int64 = 0
        for name in names {
            if !referenced.contains(name) {
                if unlink(directory + "/" + name) == 0 { removed += 1 }
                continue
            }
            var info = stat()
            if stat(directory + "/" + name, &info) == 0 { kept += Int64(info.st_size) }
        }
        budget.reset(to: kept)
        return removed
    }

    func path(_ name: String) -> String { directory + "/" + name }

    /// An unnamed file in `blobs/` for bytes on their way in (promised bytes a built-in copy
    /// streams from their writer before the write copies them into a blob): unlinked as soon as
    /// it is made, so it is gone once closed, crash or not. What is appended to it is charged to
    /// ``budget`` like a blob, so a promise that never ends stops there.
    package func scratch() throws -> ScratchFile {
        let temporary = directory + "/.tmp-" + UUID().uuidString.lowercased()
        let fd = Glibc.open(temporary, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw FerryModelError.storage("cannot create \(temporary): errno \(errno)") }
        unlink(temporary)
        return ScratchFile(descriptor: FileDescriptor(taking: fd), budget: budget)
    }

    /// Creates a temporary file, lets `fill` write it, then fsyncs, renames and fsyncs the directory.
    /// Returns the blob's name and its identity once in place (a rename changes the ctime).
    private func create(_ fill: (Int32) throws -> Void) throws -> (name: String, identity: BlobIdentity) {
        let name = UUID().uuidString.lowercased()
        let temporary = directory + "/.tmp-" + name
        let fd = Glibc.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw FerryModelError.storage("cannot create \(temporary): errno \(errno)") }
        defer { close(fd) }
        do {
            try fill(fd)
            guard fsync(fd) == 0 else { throw FerryModelError.storage("cannot fsync a blob: errno \(errno)") }
        } catch {
            unlink(temporary)
            throw error
        }
        guard rename(temporary, path(name)) == 0 else {
            let code = errno
            unlink(temporary)
            throw FerryModelError.storage("cannot rename a blob into place: errno \(code)")
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            unlink(path(name))
            throw FerryModelError.storage("cannot stat a blob: errno \(code)")
        }
        try syncDirectory()
        return (name, BlobIdentity(info))
    }

    /// Makes renames and creations in `blobs/` durable.
    private func syncDirectory() throws {
        let fd = Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw FerryModelError.storage("cannot open \(directory): errno \(errno)") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw FerryModelError.storage("cannot fsync \(directory): errno \(errno)") }
    }

    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                let code = errno
                if code == EINTR { continue }
                if code == ENOSPC || code == EDQUOT || code == EFBIG {
                    throw FerryModelError(.tooLarge, "the state directory's file system is full (errno \(code)); "
                                          + "clear a pasteboard or the history to make room")
                }
                throw FerryModelError.storage("cannot write a blob: errno \(code)")
            }
            offset += written
        }
    }
}

/// A scratch file of the blob store (``BlobStore/scratch()``): each chunk appended is charged to
/// the disk budget before it is written, and everything charged is given back when the file is
/// released (its last reference gone: the descriptor it shares is then the only thing keeping
/// the unlinked bytes, and is dropped with it). While a write copies it into a blob, its bytes
/// count twice, as they take room twice.
package final class ScratchFile: Sendable {
    /// The open, unlinked file.
    package let descriptor: FileDescriptor
    private let budget: DiskBudget
    private let charged = Mutex<Int64>(0)

    init(descriptor: FileDescriptor, budget: DiskBudget) {
        self.descriptor = descriptor
        self.budget = budget
    }

    /// The bytes appended so far.
    var size: Int64 { charged.withLock { $0 } }

    /// Appends `bytes`, charged to the budget first.
    /// - Throws: `FerryModelError` `.tooLarge` past the budget (nothing written) or when the file
    ///   system is full; `.io` when the write fails.
    package func append(_ bytes: UnsafeRawBufferPointer) throws {
        try budget.charge(Int64(bytes.count))
        charged.withLock { $0 += Int64(bytes.count) }
        try descriptor.withRawValue { try BlobStore.writeAll($0, bytes) }
    }

    deinit {
        budget.refund(charged.withLock { $0 })
    }
}

/// A blob just written: its name, size, checksum and identity, all recorded in its row.
struct WrittenBlob {
    var name: String
    var size: Int64
    var checksum: UInt64
    var identity: BlobIdentity
}

/// What tells a blob file apart from any other version of it without reading it: its inode and
/// its status change time in nanoseconds. Writing, truncating, renaming or chmod-ing the file
/// sets its ctime to now, and user space cannot set a ctime back, so a file whose identity is
/// the one recorded at write has not been changed since (its bytes match its checksum). A file
/// put back from a backup or a copy has another identity and is checksummed again.
struct BlobIdentity: Equatable {
    var inode: Int64
    var changeTime: Int64

    init(inode: Int64, changeTime: Int64) {
        self.inode = inode
        self.changeTime = changeTime
    }

    init(_ info: stat) {
        inode = Int64(bitPattern: UInt64(info.st_ino))
        changeTime = Int64(info.st_ctim.tv_sec) &* 1_000_000_000 &+ Int64(info.st_ctim.tv_nsec)
    }
}
