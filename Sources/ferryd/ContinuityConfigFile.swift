import FerryBroker
#if canImport(Glibc)
import Glibc
#endif

/// ferryd's continuity config file (issue #22): the continuity options as `key = value` lines,
/// so a unit or a D-Bus service file need not carry them.
///
/// Each key is one of ferryd's continuity options without its dashes (`continuity`, `creds`,
/// `continuity-key`, `continuity-ca`, `device`, `handoff-lifetime`, `pairing-lifetime`,
/// `continuity-pasteboards`); lines starting with `#` and
/// blank lines are skipped. A relative path is relative to the file's folder, and `~/` is the
/// home folder. The file says which key files ferryd trusts, so it must be the user's own and
/// writable by nobody else.
struct ContinuityConfigFile {
    /// The keys a file may set.
    static let keys = ["continuity", "creds", "continuity-key", "continuity-ca", "device", "handoff-lifetime", "pairing-lifetime",
                       "continuity-pasteboards"]

    /// The keys that name files (resolved against the file's folder).
    static let pathKeys: Set = ["creds", "continuity-key", "continuity-ca"]

    /// The file's path.
    let path: String

    /// The values it sets, by key.
    let values: [String: String]

    /// Where ferryd looks when `--continuity-config` is not given:
    /// `$XDG_CONFIG_HOME/ferry/continuity.conf`, else `~/.config/ferry/continuity.conf`; nil when
    /// neither variable is set.
    static func defaultPath(environment: (String) -> String? = { getenv($0).map { String(cString: $0) } }) -> String? {
        if let config = environment("XDG_CONFIG_HOME"), config.hasPrefix("/") { return config + "/ferry/continuity.conf" }
        if let home = environment("HOME"), home.hasPrefix("/") { return home + "/.config/ferry/continuity.conf" }
        return nil
    }

    /// Whether something exists at `path` (a dangling link counts: reading it then says why).
    static func exists(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }

    /// Reads and checks the file at `path`.
    /// - Throws: ``Broker/StartFailure`` naming the file, and the line when one is wrong.
    init(path: String, home: String? = getenv("HOME").map { String(cString: $0) }) throws {
        self.path = path
        func failure(_ text: String) -> Broker.StartFailure { Broker.StartFailure(message: "\(path): \(text)") }

        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { throw failure(String(cString: strerror(errno))) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { throw failure("not a regular file") }
        guard status.st_uid == getuid() else { throw failure("not your own file (it names the keys ferryd trusts)") }
        guard status.st_mode & (S_IWGRP | S_IWOTH) == 0 else {
            throw failure("writable by others (it names the keys ferryd trusts): chmod go-w")
        }
        guard status.st_size <= 64 * 1024 else { throw failure("larger than 64 KiB") }

        var bytes = [UInt8](repeating: 0, count: Int(status.st_size) + 1)
        var count = 0
        while count < bytes.count {
            let got = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + count, $0.count - count) }
            if got < 0, errno == EINTR { continue }
            guard got >= 0 else { throw failure(String(cString: strerror(errno))) }
            if got == 0 { break }
            count += got
        }
        guard let text = String(validating: bytes[..<count], as: UTF8.self) else { throw failure("not UTF-8 text") }

        let folder = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        var values: [String: String] = [:]
        for (index, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).enumerated() {
            let line = rawLine.trimmingWhitespace()
            if line.isEmpty || line.hasPrefix("#") { continue }
            let number = index + 1
            guard let equals = line.firstIndex(of: "=") else { throw failure("line \(number): expected key = value") }
            let key = String(line[..<equals].trimmingWhitespace())
            var value = String(line[line.index(after: equals)...].trimmingWhitespace())
            guard Self.keys.contains(key) else {
                throw failure("line \(number): unknown key '\(key)' (expected one of \(Self.keys.joined(separator: ", ")))")
            }
            guard values[key] == nil else { throw failure("line \(number): '\(key)' is given twice") }
            guard !value.isEmpty else { throw failure("line \(number): '\(key)' has no value") }
            if Self.pathKeys.contains(key) {
                if value.hasPrefix("~/") {
                    guard let home, home.hasPrefix("/") else { throw failure("line \(number): '~' but HOME is not set") }
                    value = home + value.dropFirst(1)
                } else if !value.hasPrefix("/") {
                    value = (folder.isEmpty ? "." : folder) + "/" + value
                }
            }
            values[key] = value
        }
        self.values = values
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces, tabs and carriage returns.
    fileprivate func trimmingWhitespace() -> SubSequence {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let first = firstIndex(where: { !isBlank($0) }), let last = lastIndex(where: { !isBlank($0) }) else {
            return self[endIndex...]
        }
        return self[first...last]
    }
}
