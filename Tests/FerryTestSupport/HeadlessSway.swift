import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A headless sway compositor for tests, run as an unprivileged user made for tests only.
///
/// sway refuses to run as root, so the first use creates the system user `ferry-wl` (no home,
/// no login shell). Each instance gets a directory of its own under `/tmp` (mode 755: files put
/// there with `writeFile` are readable by the user) holding the sway config, its log and the
/// runtime directory (mode 700, owned by the user) where sway makes its `wayland-N` socket, so
/// instances never collide. The test process (root) connects to `socketPath`; peers
/// (`wl-copy`, `wl-paste`, later a private dbus-daemon and ferryd) run as the user through
/// `run`/`spawn` with `environment`. `stop()` (also on release) kills sway and every process
/// of the user whose `XDG_RUNTIME_DIR` is this instance's, by PID, and nothing else.
public final class HeadlessSway: Sendable {
    /// The test-only user sway and the peers run as.
    public static let userName = "ferry-wl"

    /// The user's name (`ferry-wl`).
    public let user: String
    /// The user's uid.
    public let uid: uid_t
    /// The user's primary gid.
    public let gid: gid_t
    /// This instance's directory (config, log, files for peers), mode 755, owned by root.
    public let directory: String
    /// The user's runtime directory for this instance (`XDG_RUNTIME_DIR`), mode 700.
    public let runtimeDirectory: String
    /// The socket's name in `runtimeDirectory` (`wayland-1`): `WAYLAND_DISPLAY` for peers.
    public let socketName: String
    /// The socket's absolute path: `WAYLAND_DISPLAY` for clients in the test process.
    public var socketPath: String { "\(runtimeDirectory)/\(socketName)" }
    /// The environment of programs run as the user against this compositor.
    public var environment: [String: String] {
        ["PATH": Self.path, "LANG": "C.UTF-8", "XDG_RUNTIME_DIR": runtimeDirectory, "WAYLAND_DISPLAY": socketName]
    }

    /// runuser, whose child sway is.
    private let runuser: RunningProcess
    /// The peers started with `spawn`, kept until `stop()` (it kills them).
    private let peers = Mutex<[RunningProcess]>([])
    private let stopped = Mutex(false)

    private static let path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

    /// Creates the user if needed and starts sway; returns once its socket accepts connections.
    /// - Throws: `ChildProcessError` when the user cannot be made, sway exits, or its socket
    ///   accepts no connection within `timeout` (the error quotes sway's log).
    public init(timeout: Duration = .seconds(20)) async throws {
        let (uid, gid) = try await Self.ensureUser()
        self.user = Self.userName
        self.uid = uid
        self.gid = gid
        var template = Array("/tmp/ferry-wl.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw ChildProcessError(description: "mkdtemp failed: errno \(errno)")
        }
        directory = String(cString: made)
        runtimeDirectory = "\(directory)/run"
        chmod(directory, 0o755)
        guard mkdir(runtimeDirectory, 0o700) == 0, chown(runtimeDirectory, uid, gid) == 0 else {
            throw ChildProcessError(description: "cannot make \(runtimeDirectory): errno \(errno)")
        }
        let config = "\(directory)/sway.conf"
        try "output HEADLESS-1 resolution 1280x720\nxwayland disable\n"
            .write(toFile: config, atomically: false, encoding: .utf8)
        chmod(config, 0o644)
        let log = "\(directory)/sway.log"
        let runuser = try Self.start(
            ["/usr/sbin/runuser", "-u", Self.userName, "--", "env", "XDG_RUNTIME_DIR=\(runtimeDirectory)",
             "WLR_BACKENDS=headless", "WLR_LIBINPUT_NO_DEVICES=1", "WLR_RENDERER=pixman",
             "sway", "-c", config],
            environment: Self.baseEnvironment, standardInput: nil, standardOutput: log, standardError: log)
        self.runuser = runuser

        // The socket file appears when sway binds it, before it listens: a client that connects
        // in between is refused. Ready means a connection is accepted.
        let deadline = ContinuousClock.now + timeout
        var found: String?
        while found == nil {
            let directory = runtimeDirectory
            found = Self.socket(in: directory).flatMap { Self.accepts("\(directory)/\($0)") ? $0 : nil }
            if found != nil { break }
            let failed = runuser.hasEnded
            if failed || ContinuousClock.now > deadline {
                runuser.kill()
                let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                let what = failed ? "exited" : "accepted no connection in \(timeout)"
                throw ChildProcessError(description: "sway \(what); its log:\n\(text)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        socketName = found!
    }

    deinit { stop() }

    /// What a peer run to completion left behind.
    public struct PeerResult: Sendable {
        /// The exit status (128 + signal number when killed).
        public var status: Int32
        /// Its standard output (as bytes; may be large).
        public var standardOutput: Data
        /// Its standard error as text.
        public var standardError: String
        /// True when it ran past its time limit and was killed.
        public var timedOut: Bool
        /// Standard output as UTF-8 text (lossy).
        public var stdout: String { String(decoding: standardOutput, as: UTF8.self) }
        /// Exit status 0, in time.
        public var succeeded: Bool { status == 0 && !timedOut }
    }

    /// Runs `arguments` as the user against this compositor and waits for the program itself
    /// (not for children it forks and leaves running, as `wl-copy` does: its output goes to
    /// files, not pipes, so they cannot hold it up).
    /// - Parameters:
    ///   - extraEnvironment: variables added to (or replacing) `environment`, such as
    ///     `DBUS_SESSION_BUS_ADDRESS` for a private bus.
    ///   - standardInput: a file to read standard input from (readable by root; the descriptor is
    ///     opened here), or nil for `/dev/null`.
    ///   - timeout: after this the program gets SIGKILL.
    public func run(_ arguments: [String], extraEnvironment: [String: String] = [:], standardInput: String? = nil,
                    timeout: Duration = .seconds(30)) async throws -> PeerResult {
        let id = UUID().uuidString
        let out = "\(directory)/peer-\(id).out", err = "\(directory)/peer-\(id).err"
        defer { unlink(out); unlink(err) }
        let peer = try Self.start(asUser(arguments, extraEnvironment),
                                  environment: Self.baseEnvironment, standardInput: standardInput,
                                  standardOutput: out, standardError: err)
        var status = await peer.waitForExit(timeout: timeout)
        let timedOut = status == nil
        if timedOut {
            peer.kill()
            status = await peer.waitForExit(timeout: .seconds(10))
        }
        let output = FileManager.default.contents(atPath: out) ?? Data()
        let errors = String(decoding: FileManager.default.contents(atPath: err) ?? Data(), as: UTF8.self)
        return PeerResult(status: status ?? -1, standardOutput: output, standardError: errors, timedOut: timedOut)
    }

    /// Starts `arguments` as the user against this compositor without waiting; returns `runuser`
    /// (the program is its child). `stop()` kills it, and whatever it forked, in any case.
    /// `extraEnvironment` is added to `environment`; standard output and error go to the files
    /// named (created by root, so the user needs no write access).
    @discardableResult
    public func spawn(_ arguments: [String], extraEnvironment: [String: String] = [:], standardInput: String? = nil,
                      standardOutput: String = "/dev/null", standardError: String = "/dev/null") throws -> RunningProcess {
        let peer = try Self.start(asUser(arguments, extraEnvironment),
                                  environment: Self.baseEnvironment, standardInput: standardInput,
                                  standardOutput: standardOutput, standardError: standardError)
        peers.withLock { $0.append(peer) }
        return peer
    }

    /// The command line that runs `arguments` as the user with `environment` plus `extra`.
    private func asUser(_ arguments: [String], _ extra: [String: String] = [:]) -> [String] {
        let variables = environment.merging(extra) { $1 }.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return ["/usr/sbin/runuser", "-u", user, "--", "env"] + variables + arguments
    }

    /// Writes `data` to a file in this instance's directory that the user can read; returns its path.
    public func writeFile(_ name: String, _ data: Data) throws -> String {
        let file = "\(directory)/\(name)"
        try data.write(to: URL(fileURLWithPath: file))
        chmod(file, 0o644)
        return file
    }

    /// The processes of this instance (the user's, with this instance's `XDG_RUNTIME_DIR`):
    /// sway and every peer, including those that forked away from their `runuser`.
    public func processes() -> [pid_t] {
        let marker = Array("XDG_RUNTIME_DIR=\(runtimeDirectory)".utf8) + [0]
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> pid_t? in
            guard let pid = pid_t(entry) else { return nil }
            var info = stat()
            guard stat("/proc/\(entry)", &info) == 0, info.st_uid == uid,
                  let environ = FileManager.default.contents(atPath: "/proc/\(entry)/environ") else { return nil }
            let bytes = [UInt8](environ)
            // Each variable ends with a NUL; match a whole one.
            var start = 0
            for (i, byte) in bytes.enumerated() where byte == 0 {
                if bytes[start...i].elementsEqual(marker) { return pid }
                start = i + 1
            }
            return nil
        }
    }

    /// The most recently started process of this instance named `name` (`/proc/PID/comm`), as
    /// `pgrep -n -x NAME` would find it, limited to this instance.
    public func newestProcess(named name: String) -> pid_t? {
        var best: (pid: pid_t, started: UInt64)?
        for pid in processes() {
            guard let comm = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8),
                  comm.trimmingCharacters(in: .newlines) == name,
                  let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            // Fields after the command: state is field 3, start time field 22.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 19, let started = UInt64(fields[19]) else { continue }
            if best == nil || started >= best!.started { best = (pid, started) }
        }
        return best?.pid
    }

    /// Kills sway and every process of this instance (SIGTERM to sway first, then SIGKILL to
    /// what is left), reaps runuser and removes the directory. Calling it again does nothing.
    ///
    /// The selections are cleared first, so that a `wl-copy` still serving one exits of itself:
    /// killed, it would leave its copy of what it serves in `/tmp/wl-copy-buffer-*`.
    public func stop() {
        let already = stopped.withLock { was in defer { was = true }; return was }
        if already { return }
        clearSelectionsOfWlCopy()
        for pid in processes() { kill(pid, SIGTERM) }
        let deadline = ContinuousClock.now + .seconds(2)
        while !processes().isEmpty && ContinuousClock.now < deadline { usleep(10_000) }
        for pid in processes() { kill(pid, SIGKILL) }
        for peer in peers.withLock({ $0 }) { peer.kill() }
        runuser.kill()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Clears both selections when a `wl-copy` of this instance serves one, and waits (up to a
    /// second) for every such server to exit.
    private func clearSelectionsOfWlCopy() {
        guard newestProcess(named: "wl-copy") != nil else { return }
        for selection in [["--clear"], ["--primary", "--clear"]] {
            guard let clearing = try? Self.start(asUser(["wl-copy"] + selection), environment: Self.baseEnvironment, standardInput: nil,
                                                 standardOutput: "/dev/null", standardError: "/dev/null") else { return }
            let deadline = ContinuousClock.now + .seconds(1)
            while clearing.isRunning && ContinuousClock.now < deadline { usleep(5_000) }
            clearing.kill()
        }
        let deadline = ContinuousClock.now + .seconds(1)
        while newestProcess(named: "wl-copy") != nil && ContinuousClock.now < deadline { usleep(5_000) }
    }

    /// Removes the folders `/tmp/wl-copy-buffer-*` holding a file `name`: what a `wl-copy` killed
    /// on purpose left behind (it names its copy after the file it read). Give the file a name of
    /// the test's own, or this may remove the copy of a `wl-copy` still serving it elsewhere.
    public static func removeBuffersOfKilledWlCopy(named name: String) {
        let folders = (try? FileManager.default.contentsOfDirectory(atPath: "/tmp")) ?? []
        for folder in folders where folder.hasPrefix("wl-copy-buffer-") {
            let path = "/tmp/\(folder)"
            if FileManager.default.fileExists(atPath: "\(path)/\(name)") { try? FileManager.default.removeItem(atPath: path) }
        }
    }

    // MARK: Helpers

    /// The user's uid and gid, creating the user first if it does not exist.
    private static func ensureUser() async throws -> (uid_t, gid_t) {
        if let entry = getpwnam(userName) { return (entry.pointee.pw_uid, entry.pointee.pw_gid) }
        let made = try await ChildProcess.run(
            "useradd", ["--system", "--no-create-home", "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin",
                        "--comment", "Ferry tests, headless sway", userName])
        // Another test process may have made it meanwhile: look again either way.
        guard let entry = getpwnam(userName) else {
            throw ChildProcessError(description: "cannot create the user \(userName): \(made.stderr)")
        }
        return (entry.pointee.pw_uid, entry.pointee.pw_gid)
    }

    private static func socket(in directory: String) -> String? {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.sorted().first { name in
            var info = stat()
            return name.hasPrefix("wayland-") && !name.hasSuffix(".lock")
                && stat("\(directory)/\(name)", &info) == 0 && (info.st_mode & S_IFMT) == S_IFSOCK
        }
    }

    /// Whether a Unix socket at `path` accepts a connection now (the connection is closed at once;
    /// a Wayland compositor takes that as a client that left).
    private static func accepts(_ path: String) -> Bool {
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
    }

    /// The environment `runuser` itself starts with (`env` then sets the program's).
    private static let baseEnvironment = ["PATH": path, "LANG": "C.UTF-8"]

    /// Starts `argv` (root's side of runuser) with the three standard descriptors from files.
    private static func start(_ argv: [String], environment: [String: String], standardInput: String?,
                              standardOutput: String, standardError: String) throws -> RunningProcess {
        let input = open(standardInput ?? "/dev/null", O_RDONLY | O_CLOEXEC)
        let output = open(standardOutput, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        let error = standardError == standardOutput ? output
            : open(standardError, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        defer { Set([input, output, error]).filter { $0 >= 0 }.forEach { close($0) } }
        guard input >= 0, output >= 0, error >= 0 else {
            throw ChildProcessError(description: "cannot open the standard files of \(argv[0]): errno \(errno)")
        }
        return try RunningProcess(argv[0], Array(argv.dropFirst()), environment: environment,
                                  standardInput: input, output: output, error: error)
    }
}
