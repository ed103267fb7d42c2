#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a file could not be sniffed.
public struct SniffError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The path.
    public var path: String
    /// The system's explanation (`strerror`).
    public var reason: String

    /// One line for a person.
    public var description: String { "cannot read '\(path)': \(reason)" }
}

extension TypeDatabase {
    /// Sniffs the file at `path` by its name and its first 64 KiB. A directory is `public.folder`
    /// (certain, by content).
    /// - Parameter filename: the name to sniff by and to report, when `path` is not it (a
    ///   `/proc/self/fd/N` standing for a path that is not UTF-8); nil: `path`.
    /// - Throws: `SniffError` when the file cannot be opened or read.
    public func sniff(fileAtPath path: String, filename: String? = nil) throws(SniffError) -> SniffResult {
        let filename = filename ?? path
        func failure() -> SniffError { SniffError(path: filename, reason: String(cString: strerror(errno))) }
        guard !path.isEmpty, !path.utf8.contains(0) else { throw SniffError(path: filename, reason: "invalid path") }
        var info = stat()
        guard stat(path, &info) == 0 else { throw failure() }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            return SniffResult(type: .folder, byName: nil, byContent: .folder, isContentCertain: true, rule: .content)
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw failure() }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var filled = 0
        while filled < buffer.count {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if n < 0 {
                if errno == EINTR { continue }
                throw failure()
            }
            if n == 0 { break }
            filled += n
        }
        return sniff(data: buffer[..<filled], filename: filename)
    }
}
