/// A path given on the command line, kept as the bytes the user typed: Linux paths are bytes,
/// and a name that is not UTF-8 must reach the system exactly as given.
struct PathArgument: Sendable, Equatable {
    /// The path's bytes, without a terminating NUL.
    let bytes: [UInt8]

    init(bytes: [UInt8]) { self.bytes = bytes }

    /// The path `argument` (as ArgumentParser gives it) came from.
    init(_ argument: String) { self.init(bytes: Array(argument.utf8)) }

    /// The path for messages: bytes that are not UTF-8 shown as U+FFFD.
    var display: String { String(decoding: bytes, as: UTF8.self) }

    /// The path as a NUL-terminated C string, for system calls.
    var cString: [CChar] { bytes.map { CChar(bitPattern: $0) } + [0] }

    /// Whether the path is `-`, standard output (or input).
    var isStandardOutput: Bool { bytes == [UInt8(ascii: "-")] }
}
