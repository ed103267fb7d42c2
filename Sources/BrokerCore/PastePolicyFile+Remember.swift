#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FerryModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension PastePolicyFile {
    /// Appends a rule the user chose while answering a paste consent request (`ferry policy allow
    /// ID --remember`): one line `allow <app>` or `deny <app>` with a comment saying so, after
    /// what the file holds. The file and its folder are made (mode 0600 and 0700) when missing;
    /// the next paste reads it again, as after any edit.
    ///
    /// - Parameters:
    ///   - allow: `allow` (true) or `deny` (false).
    ///   - app: the app id the rule names.
    /// - Throws: `FerryModelError` `.invalidArgument` for an app id a rule cannot name, `.io`
    ///   naming the file when it cannot be written.
    package func remember(allow: Bool, app: String) throws {
        guard AppManifest.isValidBundleIdentifier(app) else {
            throw FerryModelError(.invalidArgument, "\"\(app)\" is not an app id a paste policy rule can name")
        }
        func failure(_ what: String) -> FerryModelError {
            FerryModelError(.io, "cannot remember the decision in \(displayPath): \(what): \(String(cString: strerror(errno)))")
        }
        let folder = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        if folder.hasPrefix("/") { try Self.makeFolders(folder) }
        let fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure("open") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw failure("fstat") }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw FerryModelError(.io, "cannot remember the decision in \(displayPath): not a regular file")
        }
        // A file whose last line has no newline gets one first, so the rule is a line of its own.
        var needsNewline = false
        if info.st_size > 0 {
            var last: UInt8 = 0
            guard pread(fd, &last, 1, off_t(info.st_size - 1)) == 1 else { throw failure("read") }
            needsNewline = last != UInt8(ascii: "\n")
        }
        let line = (needsNewline ? "\n" : "") + "\(allow ? "allow" : "deny") \(app)    # remembered from a paste consent request\n"
        var bytes = Array(line.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                throw failure("write")
            }
            bytes = bytes.dropFirst(written)
        }
    }

    /// Makes `folder` and its missing parents (mode 0700).
    private static func makeFolders(_ folder: String) throws {
        var partial = ""
        for component in folder.split(separator: "/") {
            partial += "/" + component
            if mkdir(partial, 0o700) != 0 && errno != EEXIST {
                throw FerryModelError(.io, "cannot make \(partial): \(String(cString: strerror(errno)))")
            }
        }
    }
}
