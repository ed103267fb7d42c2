import FerryModel
import FerryTerminal
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ShareCommand {
    /// The items FILEs, `--text` or standard input give, as `ferry copy` builds them.
    /// - Throws: `CLIFailure` (status 2) for an unknown `--type` or a file that cannot be read.
    func readItems() throws -> [CopyItem] {
        try CopyItem.items(files: files, text: text, type: type.map(WrittenType.init(argument:)), verb: "share")
    }

    /// `--to` as the broker takes it: an absolute path is passed on as it is; a relative one is
    /// taken from the current directory, its folders resolved (`..`, links) but not its last
    /// part, so the broker still sees — and refuses — a last part that is a symbolic link.
    /// - Throws: `CLIFailure` `.usage` (64) when the path does not name an existing folder, or
    ///   when it (or the current directory it is taken from) is not UTF-8: the broker takes the
    ///   folder as a D-Bus string, which cannot carry it, and a path mended with U+FFFD would be
    ///   another folder.
    static func folder(_ path: String) throws -> String {
        let bytes = RawArguments.bytes(path)
        guard String(validating: bytes, as: UTF8.self) != nil else { throw notUTF8(String(decoding: bytes, as: UTF8.self)) }
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw CLIFailure(.usage, "--to: cannot use '\(path.printableLine())': \(LinuxCalls.reason(errno))")
        }
        guard LinuxCalls.isDirectory(info) else { throw CLIFailure(.usage, "--to: '\(path.printableLine())' is not a folder") }
        if path.hasPrefix("/") { return path }
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        let slash = trimmed.lastIndex(of: "/")
        let last = String(slash.map { trimmed[trimmed.index(after: $0)...] } ?? trimmed)
        let parent = slash.map { String(trimmed[..<$0]) } ?? "."
        if last == "." || last == ".." { return try resolved(String(trimmed)) }
        let directory = try resolved(parent.isEmpty ? "/" : parent)
        return (directory.hasSuffix("/") ? directory : directory + "/") + last
    }

    /// `realpath(3)` of `path`.
    private static func resolved(_ path: String) throws -> String {
        guard let pointer = realpath(path, nil) else {
            throw CLIFailure(.usage, "--to: cannot use '\(path.printableLine())': \(LinuxCalls.reason(errno))")
        }
        defer { free(pointer) }
        guard let resolved = String(validatingCString: pointer) else { throw notUTF8(String(cString: pointer)) }
        return resolved
    }

    private static func notUTF8(_ shown: String) -> CLIFailure {
        CLIFailure(.usage, "--to: '\(shown.printableLine())' is not UTF-8, and save-to-folder takes the folder's path as text")
    }
}
