#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FerryModel
import FerrySystem
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension PastePolicy {
    /// The largest policy file read (1 MiB); a larger one is malformed.
    package static let maximumFileSize = 1 << 20

    /// Parses a policy file.
    ///
    /// One rule per line; `#` starts a comment; blank lines are ignored:
    /// ```
    /// allow org.example.Notes    # may paste at any time
    /// deny org.example.Spy       # may never paste, even on a user action
    /// deny unregistered          # the CLI and scripts may not paste
    /// ask org.example.Viewer      # the user is asked before it reads another app's content
    /// allow *                    # every registered app may paste (deny * : none may)
    /// ```
    /// - Parameters:
    ///   - text: the file's contents.
    ///   - path: the file's path as shown to people; errors and reasons name it.
    /// - Throws: `FerryModelError` `.invalidArgument` with the message `path:line: what is wrong`.
    package init(parsing text: String, path: String) throws {
        var rules: [Entry] = []
        var lineNumber = 0
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let content = rawLine.prefix { $0 != "#" }
            let words = content.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
            guard let verb = words.first else { continue }
            func fail(_ message: String) -> FerryModelError {
                FerryModelError(.invalidArgument, "\(path):\(lineNumber): \(message)")
            }
            guard verb == "allow" || verb == "deny" || verb == "ask" else {
                throw fail("expected `allow`, `deny` or `ask`, found \"\(verb)\"")
            }
            guard words.count == 2 else {
                throw fail(words.count == 1
                    ? "`\(verb)` needs an app id, `*` or `unregistered`"
                    : "`\(verb)` takes one app id, `*` or `unregistered`, found \(words.count - 1) words")
            }
            let target = String(words[1])
            let rule: Rule
            switch (verb, target) {
            case ("allow", "*"): rule = .allowAllApps
            case ("deny", "*"): rule = .denyAllApps
            case ("ask", "*"): rule = .askAllApps
            case ("allow", "unregistered"): rule = .allowUnregistered
            case ("deny", "unregistered"): rule = .denyUnregistered
            case ("ask", "unregistered"):
                throw fail("`ask unregistered` is not a rule: callers that are not registered apps are the user's own commands")
            default:
                guard AppManifest.isValidBundleIdentifier(target) else {
                    throw fail("\"\(target)\" is not an app id (letters, digits, '.' and '-')")
                }
                rule = verb == "allow" ? .allowApp(target) : verb == "deny" ? .denyApp(target) : .askApp(target)
            }
            rules.append(Entry(rule, line: lineNumber))
        }
        self.init(rules: rules, path: path)
    }
}

/// The paste policy file, read when it changes.
///
/// `current()` costs one `poll` when nothing changed: a ``PathWatch`` reports any change of the
/// file or of what its path names, and only then is the file looked at (`stat`) and read again.
/// Where the path cannot be watched (a symbolic link on the way, a network file system) the file
/// is looked at on every call instead, and read again when its device, inode, size, modification
/// or change time differ from the last look (and, like git's "racily clean" index entries, a file
/// modified less than a second before it was read is read again on every look until it is older,
/// since file times tick only every few milliseconds). A missing file is the default policy; a
/// malformed (or unreadable) file keeps the last good policy and is reported once per change
/// through `logger`: a warning (a new good version is `info`, a removed file `notice`).
package final class PastePolicyFile: Sendable {
    /// The file's path.
    package let path: String
    /// The path as shown to people (`~/.config/ferry/paste-policy`).
    package let displayPath: String
    private let logger: Logger
    private let state: Mutex<State>

    /// What the file looked like when last read.
    private struct Stamp: Equatable {
        var device: UInt64, inode: UInt64, size: Int64
        var modified: timespec, changed: timespec

        static func == (a: Stamp, b: Stamp) -> Bool {
            a.device == b.device && a.inode == b.inode && a.size == b.size
                && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
                && a.changed.tv_sec == b.changed.tv_sec && a.changed.tv_nsec == b.changed.tv_nsec
        }

        init(_ s: stat) {
            device = UInt64(s.st_dev)
            inode = UInt64(s.st_ino)
            size = Int64(s.st_size)
            modified = s.st_mtim
            changed = s.st_ctim
        }
    }

    private enum Seen: Equatable {
        case never
        case missing
        case file(Stamp)
        case error(Int32)
    }

    private struct State {
        var seen: Seen = .never
        /// The file was modified so shortly before it was read that a later change could leave
        /// the same stamp (file times tick at the kernel's clock granularity): read it again.
        var racy = false
        var policy: PastePolicy
        var lastError: String?
        /// Says when to look again.
        var watch: PathWatch
        var unwatchedReported = false
        /// How many times the file was looked at (`stat`), for tests.
        var looks = 0
    }

    /// How recent a modification must be, at the time of reading, for the stamp to be untrusted.
    private static let racyWindowNanoseconds: Int64 = 1_000_000_000

    /// The default location: `$XDG_CONFIG_HOME/ferry/paste-policy`, or
    /// `~/.config/ferry/paste-policy` when `XDG_CONFIG_HOME` is unset, empty or relative.
    package static func defaultPath() -> String {
        if let config = environment("XDG_CONFIG_HOME"), config.hasPrefix("/") {
            return config + "/ferry/paste-policy"
        }
        return home() + "/.config/ferry/paste-policy"
    }

    /// Watches `path`. Nothing is read until the first `current()`.
    ///
    /// - Parameters:
    ///   - path: the policy file (usually `defaultPath()`).
    ///   - logger: gets one message per reload and per error (once per change of the file).
    package init(path: String, logger: Logger) {
        self.path = path
        let home = Self.home()
        if home.count > 1 && path.hasPrefix(home + "/") {
            displayPath = "~" + path.dropFirst(home.count)
        } else {
            displayPath = path
        }
        self.logger = logger
        state = Mutex(State(policy: PastePolicy.default.located(at: displayPath), watch: PathWatch(path: path)))
    }

    /// The policy in force: the file is looked at when its watch says it may have changed (on
    /// every call when it is not watched), and read when it did.
    package func current() -> PastePolicy {
        var messages: [(Logger.Level, String)] = []
        let policy = state.withLock { state in
            if state.watch.mayHaveChanged() {
                if !state.unwatchedReported, let reason = state.watch.unwatchedReason {
                    state.unwatchedReported = true
                    messages.append((.debug, "paste policy: looking at \(displayPath) on every paste: \(reason)"))
                }
                state.looks += 1
                // A watched file is read again on every event about it: its times may not tell.
                refresh(&state, reread: state.watch.isWatching, messages: &messages)
            }
            return state.policy
        }
        for (level, message) in messages { logger.log(level: level, "\(message)") }
        return policy
    }

    /// How many times the file was looked at so far, and whether its path is watched now.
    package var looks: (count: Int, watched: Bool) {
        state.withLock { ($0.looks, $0.watch.isWatching) }
    }

    private func refresh(_ state: inout State, reread: Bool, messages: inout [(Logger.Level, String)]) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let error = errno
            if error == ENOENT || error == ENOTDIR {
                if state.seen != .missing {
                    if state.seen != .never { messages.append((.notice, "paste policy: \(displayPath) is gone; using the default policy")) }
                    state.policy = PastePolicy.default.located(at: displayPath)
                    state.seen = .missing
                    state.racy = false
                    state.lastError = nil
                }
            } else if state.seen != .error(error) {
                state.seen = .error(error)
                state.racy = false
                messages.append((.warning, "paste policy: cannot look at \(displayPath): \(String(cString: strerror(error))); keeping the rules in force"))
            }
            return
        }
        guard reread || state.racy || state.seen != .file(Stamp(info)) else { return }
        switch load() {
        case .success(let (policy, stamp)):
            state.seen = .file(stamp)
            state.racy = Self.isRacy(stamp)
            state.lastError = nil
            if policy != state.policy {
                state.policy = policy
                let count = policy.rules.count
                messages.append((.info, "paste policy: read \(displayPath) (\(count) rule\(count == 1 ? "" : "s"))"))
            }
        case .failure(let failure):
            state.seen = failure.stamp.map(Seen.file) ?? .error(EIO)
            state.racy = failure.stamp.map(Self.isRacy) ?? false
            if state.lastError != failure.error.message {
                state.lastError = failure.error.message
                messages.append((.warning, "paste policy: \(failure.error.message); keeping the rules in force"))
            }
        }
    }

    private static func isRacy(_ stamp: Stamp) -> Bool {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        func nanoseconds(_ t: timespec) -> Int64 { Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_nsec) }
        let newest = max(nanoseconds(stamp.modified), nanoseconds(stamp.changed))
        return nanoseconds(now) - newest < racyWindowNanoseconds
    }

    private struct LoadFailure: Error {
        var error: FerryModelError
        var stamp: Stamp?
    }

    /// Reads and parses the file; the stamp is taken from the open file, before reading.
    private func load() -> Result<(PastePolicy, Stamp), LoadFailure> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let message = "\(displayPath): \(String(cString: strerror(errno)))"
            return .failure(LoadFailure(error: FerryModelError(.invalidArgument, message), stamp: nil))
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let message = "\(displayPath): \(String(cString: strerror(errno)))"
            return .failure(LoadFailure(error: FerryModelError(.invalidArgument, message), stamp: nil))
        }
        let stamp = Stamp(info)
        func failure(_ message: String) -> Result<(PastePolicy, Stamp), LoadFailure> {
            .failure(LoadFailure(error: FerryModelError(.invalidArgument, "\(displayPath): \(message)"), stamp: stamp))
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return failure("not a regular file") }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return failure(String(cString: strerror(errno)))
            }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
            if bytes.count > PastePolicy.maximumFileSize {
                return failure("larger than \(PastePolicy.maximumFileSize) bytes")
            }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { return failure("not UTF-8 text") }
        do {
            return .success((try PastePolicy(parsing: text, path: displayPath), stamp))
        } catch let error as FerryModelError {
            return .failure(LoadFailure(error: error, stamp: stamp))
        } catch {
            return failure("\(error)")
        }
    }

    private static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let string = String(cString: value)
        return string.isEmpty ? nil : string
    }

    private static func home() -> String {
        if let home = environment("HOME") { return home }
        if let entry = getpwuid(getuid()), let dir = entry.pointee.pw_dir { return String(cString: dir) }
        return "/"
    }
}
