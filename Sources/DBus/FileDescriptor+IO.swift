import CDBus
// `FileDescriptor` lives in FerrySystem and appears throughout this module's public API (`h`
// values, pipes, memfds): whoever imports DBus gets it with it, as before it moved.
@_exported import FerrySystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Pipes, memfds, duplicates and whole reads and writes of a ``FileDescriptor`` (the owned
/// descriptor itself lives in `FerrySystem`), through the shim's system calls. Their failures
/// are `DBusError`s named `org.ferry.DBus.Error.SystemError`, which the client library reports
/// as an I/O error.
extension FileDescriptor {
    /// A new owned descriptor for the same open file (`F_DUPFD_CLOEXEC`).
    ///
    /// - Throws: `org.ferry.DBus.Error.SystemError`.
    public func duplicate() throws -> FileDescriptor {
        let copy = try withOpenDescriptor { cdbus_dup_cloexec($0) }
        guard copy >= 0 else { throw DBusError.system("dup", errno: errno) }
        return FileDescriptor(taking: copy)
    }

    /// Creates a pipe with close-on-exec ends.
    ///
    /// - Parameter bufferSize: when given, the pipe's capacity in bytes (`F_SETPIPE_SZ`);
    ///   failures to resize are ignored (the kernel caps it for unprivileged users).
    /// - Throws: `org.ferry.DBus.Error.SystemError`.
    public static func pipe(bufferSize: Int? = nil) throws -> (read: FileDescriptor, write: FileDescriptor) {
        var fds: [Int32] = [-1, -1]
        guard cdbus_pipe_cloexec(&fds) == 0 else { throw DBusError.system("pipe2", errno: errno) }
        if let bufferSize { _ = cdbus_set_pipe_size(fds[1], Int32(clamping: bufferSize)) }
        return (FileDescriptor(taking: fds[0]), FileDescriptor(taking: fds[1]))
    }

    /// Creates an anonymous memory file (memfd) holding `contents`, positioned at offset 0.
    ///
    /// - Parameters:
    ///   - name: a name for debugging (shown in `/proc/self/fd`).
    ///   - contents: the bytes to store.
    ///   - sealed: when true, seals it against shrinking, growing, writing and further sealing
    ///     (`F_SEAL_SHRINK|F_SEAL_GROW|F_SEAL_WRITE|F_SEAL_SEAL`), so a receiver may `mmap` it
    ///     safely.
    /// - Throws: `org.ferry.DBus.Error.SystemError`.
    public static func memfd(name: String, contents: some Collection<UInt8>, sealed: Bool)
        throws -> FileDescriptor
    {
        let raw = name.withCString { cdbus_memfd_create($0) }
        guard raw >= 0 else { throw DBusError.system("memfd_create", errno: errno) }
        let fd = FileDescriptor(taking: raw)
        try fd.write(all: contents)
        try fd.withOpenDescriptor { raw in
            guard lseek(raw, 0, SEEK_SET) == 0 else { throw DBusError.system("lseek", errno: errno) }
            if sealed {
                let seals = CDBUS_F_SEAL_SHRINK | CDBUS_F_SEAL_GROW | CDBUS_F_SEAL_WRITE
                    | CDBUS_F_SEAL_SEAL
                guard cdbus_add_seals(raw, seals) == 0 else {
                    throw DBusError.system("fcntl(F_ADD_SEALS)", errno: errno)
                }
            }
        }
        return fd
    }

    /// A pipe's capacity in bytes (`F_GETPIPE_SZ`): that many bytes written into it while it is
    /// empty never block. Nil when it is not a pipe.
    public var pipeCapacity: Int? {
        guard let value = try? withRawValue({ cdbus_get_pipe_size($0) }), value > 0 else { return nil }
        return Int(value)
    }

    /// The bytes a pipe holds that no one has read yet (`FIONREAD`): reading that many never
    /// blocks. Nil when it cannot be asked (not a pipe or socket, or closed).
    public var bytesUnread: Int? {
        guard let value = try? withRawValue({ cdbus_bytes_unread($0) }), value >= 0 else { return nil }
        return Int(value)
    }

    /// Exactly `count` bytes when that is what the pipe holds unread, read without blocking; nil
    /// when it holds more or fewer (then nothing is read) or reading fails.
    public func readUnread(exactly count: Int) -> [UInt8]? {
        guard bytesUnread == count else { return nil }
        guard count > 0 else { return [] }
        return try? withRawValue { fd -> [UInt8]? in
            var bytes = [UInt8](repeating: 0, count: count)
            var filled = 0
            while filled < count {
                let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + filled, count - filled) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return nil }
                filled += n
            }
            return bytes
        }
    }

    /// The seals set on a memfd (`F_GET_SEALS`), or nil when it is not sealable.
    public var seals: Int32? {
        guard let value = try? withRawValue({ cdbus_get_seals($0) }), value >= 0 else { return nil }
        return value
    }

    /// Writes all of `bytes` from the current offset, retrying short writes and `EINTR`.
    ///
    /// - Throws: `org.ferry.DBus.Error.SystemError` (for example `EPIPE`).
    public func write(all bytes: some Collection<UInt8>) throws {
        try withOpenDescriptor { fd in
            let written: Void? = try bytes.withContiguousStorageIfAvailable { buffer in
                try Self.writeAll(fd, UnsafeRawBufferPointer(buffer))
            }
            if written == nil {
                let copy = Array(bytes)
                try copy.withUnsafeBytes { try Self.writeAll(fd, $0) }
            }
        }
    }

    /// Reads from the current offset until end of file, retrying `EINTR`.
    ///
    /// - Parameter limit: stop with an error once more than this many bytes arrive.
    /// - Throws: `org.ferry.DBus.Error.SystemError`, or `LimitsExceeded` past `limit`.
    public func readAll(limit: Int = Int.max) throws -> [UInt8] {
        try withOpenDescriptor { fd in
            var result: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                if n < 0 {
                    if errno == EINTR { continue }
                    throw DBusError.system("read", errno: errno)
                }
                if n == 0 { return result }
                guard result.count + n <= limit else {
                    throw DBusError.limitsExceeded("more than \(limit) bytes to read")
                }
                result.append(contentsOf: chunk[0..<n])
            }
        }
    }

    private static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < buffer.count {
            let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw DBusError.system("write", errno: errno)
            }
            offset += n
        }
    }

    /// ``withRawValue(_:)`` with a closed descriptor's failure as the D-Bus layer names it
    /// (`org.ferry.DBus.Error.SystemError`, EBADF), so every method here throws `DBusError`s.
    func withOpenDescriptor<R>(_ body: (Int32) throws -> R) throws -> R {
        do {
            return try withRawValue(body)
        } catch let error as SystemCallError {
            throw error.dbusError
        }
    }
}

/// A failed system call of `FerrySystem` (a closed ``FileDescriptor``, a `poll`) as the D-Bus
/// layer names it: `org.ferry.DBus.Error.SystemError`, the reply a method handler gives when it
/// throws one.
extension SystemCallError: DBusErrorConvertible {
    /// `org.ferry.DBus.Error.SystemError` with the call and its `errno`.
    package var dbusError: DBusError { .system(call, errno: code) }
}
