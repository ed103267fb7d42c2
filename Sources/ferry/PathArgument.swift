#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A path given on the command line, kept as the bytes the user typed: Linux paths are bytes,
/// and a name that is not UTF-8 must reach the system exactly as given.
struct PathArgument: Sendable, Equatable {
    /// The path's bytes, without a terminating NUL.
    let bytes: [UInt8]

    init(bytes: [UInt8]) { self.bytes = bytes }

    /// The path `argument` (as ArgumentParser gives it, see `RawArguments`) came from.
    init(_ argument: String) { self.init(bytes: RawArguments.bytes(argument)) }

    /// The path for messages: bytes that are not UTF-8 shown as U+FFFD.
    var display: String { String(decoding: bytes, as: UTF8.self) }

    /// The path as a NUL-terminated C string, for system calls.
    var cString: [CChar] { bytes.map { CChar(bitPattern: $0) } + [0] }

    /// Whether the path is `-`, standard output (or input).
    var isStandardOutput: Bool { bytes == [UInt8(ascii: "-")] }

    /// The path as a String naming the same file, for code that takes paths as Strings: the
    /// path itself when it is UTF-8; otherwise `/proc/self/fd/N` of a descriptor (`O_PATH`, open
    /// for the life of the process) that names the file the bytes name.
    /// - Returns: nil, with `errno` set, when the file cannot be found.
    func systemPath() -> String? {
        if let valid = String(validating: bytes, as: UTF8.self) { return valid }
        let fd = open(cString, LinuxCalls.openPathOnly | O_CLOEXEC)
        return fd < 0 ? nil : "/proc/self/fd/\(fd)"
    }

    /// The last part of the path (`a/b.txt` → `b.txt`) for names and types, bytes that are not
    /// UTF-8 shown as U+FFFD.
    var fileName: String {
        let parts = bytes.split(separator: UInt8(ascii: "/"))
        return parts.last.map { String(decoding: $0, as: UTF8.self) } ?? display
    }
}
