import FerryText
#if canImport(Glibc)
import Glibc
#endif

/// Which ferryd holds a state directory: the process id and bus address that ferryd writes into
/// `ferry.lock` once it holds the lock, so that a second ferryd (on another bus, say) and the
/// `ferry` command can say who is in the way instead of only that something is.
///
/// No Foundation: the `ferry` front reads this too. The file is two lines, `pid=<n>` and
/// `bus=<address>`.
public struct StateLockHolder: Sendable, Equatable {
    /// The holding ferryd's process id.
    public var pid: Int32
    /// The address of the bus that ferryd serves, as it was given to it (`--bus` or
    /// `$DBUS_SESSION_BUS_ADDRESS`); empty when it was not known.
    public var busAddress: String

    /// The holder `pid`, serving the bus at `busAddress` (empty when not known).
    public init(pid: Int32, busAddress: String) {
        self.pid = pid
        self.busAddress = busAddress
    }

    /// The lock file's contents for this holder.
    public var fileContents: String { "pid=\(pid)\nbus=\(busAddress)\n" }

    /// "ferryd (pid 123) on the bus unix:path=…", for messages.
    public var description: String {
        busAddress.isEmpty ? "ferryd (pid \(pid))" : "ferryd (pid \(pid)) on the bus \(PrintableText.line(busAddress, limit: 200))"
    }

    /// Parses a lock file's contents; nil when they are not what ferryd writes.
    public init?(fileContents text: String) {
        var pid: Int32?
        var bus: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("pid=") { pid = Int32(line.dropFirst(4)) }
            if line.hasPrefix("bus=") { bus = String(line.dropFirst(4)) }
        }
        guard let pid, pid > 0 else { return nil }
        self.init(pid: pid, busAddress: bus ?? "")
    }

    /// The holder recorded in `directory`'s `ferry.lock`, if the file says one and that process is
    /// still alive; nil otherwise (no file, an older ferryd that wrote nothing, a dead process).
    ///
    /// This only reads: it never takes the lock, so it cannot get in the way of a ferryd starting.
    public static func recorded(in directory: String) -> StateLockHolder? {
        let fd = open(directory + "/ferry.lock", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0, let holder = StateLockHolder(fileContents: String(decoding: bytes[..<count], as: UTF8.self)) else {
            return nil
        }
        guard kill(holder.pid, 0) == 0 || errno == EPERM else { return nil }
        return holder
    }

    /// The default state directory, as ferryd computes it: `$XDG_STATE_HOME/ferry` when that is
    /// an absolute path, else `$HOME/.local/state/ferry`.
    public static func defaultDirectory(environment variable: (String) -> String? = Self.environmentVariable) -> String {
        if let state = variable("XDG_STATE_HOME"), state.hasPrefix("/") { return state + "/ferry" }
        let home = variable("HOME") ?? "/"
        return (home.hasSuffix("/") ? home : home + "/") + ".local/state/ferry"
    }

    /// The process's environment variable `name`.
    public static func environmentVariable(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// The hint the `ferry` commands add when the bus cannot start the broker: who holds the
    /// default state directory, when a live ferryd does; nil otherwise.
    public static func startFailureHint() -> String? {
        let directory = defaultDirectory()
        guard let holder = recorded(in: directory) else { return nil }
        return "\(directory) is held by \(holder.description); one ferryd serves one state directory, so a "
            + "second session bus needs that one stopped or its own ferryd --state-dir"
    }
}
