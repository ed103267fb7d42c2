#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The command line as the program received it. Swift's `CommandLine.arguments` decodes every
/// argument as UTF-8 and turns bytes that are not into U+FFFD, so `ferry copy $'bad\xff.txt'`
/// would look for a file that does not exist (or another one that does). Here an argument that
/// is not UTF-8 keeps its stray bytes instead, each as one scalar of a private-use range
/// (byte 0x80 + n → U+10FF80 + n) that ArgumentParser passes through untouched; `PathArgument`
/// turns them back into the bytes, and `lossy` into U+FFFD where text is wanted.
enum RawArguments {
    /// The first scalar of the range that stands for bytes 0x80…0xFF.
    private static let escapeBase: UInt32 = 0x10FF80

    /// Whether some argument was not UTF-8 (only then are escapes undone: a valid argument that
    /// happens to contain U+10FF80…U+10FFFF is taken as it is).
    nonisolated(unsafe) private(set) static var hadInvalidArgument = false

    /// `argv`, each argument that is valid UTF-8 as it is, any other with its stray bytes escaped.
    /// Call once, from `main`, before anything reads the result.
    static func load() -> [String] {
        (0..<Int(CommandLine.argc)).map { index in
            guard let pointer = CommandLine.unsafeArgv[index] else { return "" }
            let bytes = UnsafeBufferPointer(start: pointer, count: strlen(pointer)).map { UInt8(bitPattern: $0) }
            if let valid = String(validating: bytes, as: UTF8.self) { return valid }
            hadInvalidArgument = true
            return escaping(bytes)
        }
    }

    /// `bytes` decoded as UTF-8, each byte that is not part of a valid sequence escaped.
    static func escaping(_ bytes: [UInt8]) -> String {
        var text = String.UnicodeScalarView()
        var index = 0
        next: while index < bytes.count {
            for length in 1...4 where index + length <= bytes.count {
                if let valid = String(validating: bytes[index..<(index + length)], as: UTF8.self) {
                    text.append(contentsOf: valid.unicodeScalars)
                    index += length
                    continue next
                }
            }
            text.append(Unicode.Scalar(escapeBase + UInt32(bytes[index] - 0x80))!)
            index += 1
        }
        return String(text)
    }

    /// The bytes `argument` (or a part of one) came from.
    static func bytes(_ argument: String) -> [UInt8] {
        guard hadInvalidArgument else { return Array(argument.utf8) }
        var bytes: [UInt8] = []
        for scalar in argument.unicodeScalars {
            if let byte = byte(scalar) { bytes.append(byte) } else { bytes += String(scalar).utf8 }
        }
        return bytes
    }

    /// `argument` as text: stray bytes as U+FFFD, as `CommandLine.arguments` has them.
    static func lossy(_ argument: String) -> String {
        guard hadInvalidArgument else { return argument }
        return String(String.UnicodeScalarView(argument.unicodeScalars.map { byte($0) == nil ? $0 : "\u{FFFD}" }))
    }

    private static func byte(_ scalar: Unicode.Scalar) -> UInt8? {
        (escapeBase...0x10FFFF).contains(scalar.value) ? UInt8(scalar.value - escapeBase + 0x80) : nil
    }
}
