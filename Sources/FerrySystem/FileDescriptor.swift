import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An owned unix file descriptor that is closed exactly once: by `close()`, or when the last
/// reference goes away, unless ownership was given up with `take()`.
///
/// Appending one to a D-Bus message duplicates it (libdbus sends its own copy), so the original
/// stays yours; reading a `h` from a message gives a new `FileDescriptor` that you own.
/// Equality and hashing are by identity.
///
/// Ownership lives here, below every module that does I/O (the broker's stores hold descriptors
/// without the D-Bus layer); pipes, memfds, duplicates and whole reads and writes are the `DBus`
/// module's extension (`FileDescriptor+IO.swift`), whose failures are named D-Bus errors.
public final class FileDescriptor: Sendable, Hashable, CustomStringConvertible {
    /// The raw descriptor, or nil once closed or taken. Guarded by the mutex so that `close`,
    /// `take` and uses from several threads never race.
    private let state: Mutex<Int32?>

    /// Takes ownership of `rawValue`, which this object will close.
    public init(taking rawValue: Int32) {
        precondition(rawValue >= 0, "FileDescriptor(taking:) needs a valid descriptor")
        state = Mutex(rawValue)
    }

    deinit { close() }

    /// The raw descriptor while it is open, nil once closed or taken. Do not close it yourself.
    public var rawValue: Int32? { state.withLock { $0 } }

    /// True until `close()` or `take()`.
    public var isOpen: Bool { rawValue != nil }

    /// Closes the descriptor. Calling it again, or after `take()`, does nothing.
    public func close() {
        let fd: Int32? = state.withLock { value in
            defer { value = nil }
            return value
        }
        if let fd { _ = Glibc.close(fd) }  // EINTR on Linux still closes: never retry.
    }

    /// Gives up ownership: returns the raw descriptor, which nobody will close for you.
    ///
    /// - Returns: the descriptor, or nil if it was already closed or taken.
    public func take() -> Int32? {
        state.withLock { value in
            defer { value = nil }
            return value
        }
    }

    /// Runs `body` with the raw descriptor, holding it open for the duration (`close()` from
    /// another thread waits until `body` returns).
    ///
    /// - Throws: ``SystemCallError`` (EBADF) when already closed or taken (the `DBus` module names
    ///   it `org.ferry.DBus.Error.SystemError`), or whatever `body` throws.
    public func withRawValue<R>(_ body: (Int32) throws -> R) throws -> R {
        try state.withLock { value in
            guard let fd = value else { throw SystemCallError("use of a closed descriptor", code: EBADF) }
            return try body(fd)
        }
    }

    /// `fd N`, or `fd (closed)`.
    public var description: String {
        rawValue.map { "fd \($0)" } ?? "fd (closed)"
    }

    /// Identity.
    public static func == (lhs: FileDescriptor, rhs: FileDescriptor) -> Bool { lhs === rhs }

    /// Hashes the identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
