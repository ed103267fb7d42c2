import Foundation
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
    /// The user's uid and primary gid.
    public let uid: uid_t
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

    /// runuser's pid (sway is its child).
    private let runuserPID: pid_t
    private let stopped = Mutex(false)

    private static let path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

    /// Creates the user if needed and starts sway; returns once its socket exists.
    /// - Throws: `ChildProcessError` when the user cannot be made, sway exits, or no socket
    ///   appears within `timeout` (the error quotes sway's log).
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
        runuserPID = try Self.spawn(
            ["/usr/sbin/runuser", "-u", Self.userName, "--", "env", "XDG_RUNTIME_DIR=\(runtimeDirectory)",
             "WLR_BACKENDS=headless", "WLR_LIBINPUT_NO_DEVICES=1", "WLR_RENDERER=pixman",
             "sway", "-c", config],
            standardInput: nil, standardOutput: log, standardError: log)

        let deadline = ContinuousClock.now + timeout
        var found: String?
        while found == nil {
            found = Self.socket(in: runtimeDirectory)
            if found != nil { break }
            var raw: Int32 = 0
            let failed = waitpid(runuserPID, &raw, WNOHANG) == runuserPID
            if failed || ContinuousClock.now > deadline {
                if !failed { kill(runuserPID, SIGKILL); waitpid(runuserPID, &raw, 0) }
                let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                throw ChildProcessError(description: "sway \(failed ? "exited" : "made no socket in \(timeout)"); its log:\n\(text)")
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
    ///   - standardInput: a file to read standard input from (readable by root; the descriptor is
    ///     opened here), or nil for `/dev/null`.
    ///   - timeout: after this the program gets SIGKILL.
    public func run(_ arguments: [String], standardInput: String? = nil,
                    timeout: Duration = .seconds(30)) async throws -> PeerResult {
        let id = UUID().uuidString
        let out = "\(directory)/peer-\(id).out", err = "\(directory)/peer-\(id).err"
        defer { unlink(out); unlink(err) }
        let pid = try spawn(arguments, standardInput: standardInput, standardOutput: out, standardError: err)
        let deadline = ContinuousClock.now + timeout
        var raw: Int32 = 0
        var timedOut = false
        while waitpid(pid, &raw, WNOHANG) != pid {
            if ContinuousClock.now > deadline {
                kill(pid, SIGKILL)
                while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
                timedOut = true
                break
            }
            try await Task.sleep(for: .milliseconds(2))
        }
        let signal = raw & 0x7F
        let status = signal == 0 ? (raw >> 8) & 0xFF : 128 + signal
        let output = FileManager.default.contents(atPath: out) ?? Data()
        let errors = String(decoding: FileManager.default.contents(atPath: err) ?? Data(), as: UTF8.self)
        return PeerResult(status: status, standardOutput: output, standardError: errors, timedOut: timedOut)
    }

    /// Starts `arguments` as the user against this compositor without waiting; returns the pid
    /// of `runuser` (the program is its child). The caller reaps it with `waitpid`; `stop()`
    /// kills it in any case.
    public func spawn(_ arguments: [String], standardInput: String? = nil,
                      standardOutput: String = "/dev/null", standardError: String = "/dev/null") throws -> pid_t {
        let variables = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return try Self.spawn(["/usr/sbin/runuser", "-u", user, "--", "env"] + variables + arguments,
                              standardInput: standardInput, standardOutput: standardOutput,
                              standardError: standardError)
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
    public func stop() {
        let already = stopped.withLock { was in defer { was = true }; return was }
        if already { return }
        for pid in processes() { kill(pid, SIGTERM) }
        let deadline = ContinuousClock.now + .seconds(2)
        while !processes().isEmpty && ContinuousClock.now < deadline { usleep(10_000) }
        for pid in processes() { kill(pid, SIGKILL) }
        var raw: Int32 = 0
        if waitpid(runuserPID, &raw, WNOHANG) != runuserPID {
            kill(runuserPID, SIGKILL)
            while waitpid(runuserPID, &raw, 0) < 0 && errno == EINTR {}
        }
        try? FileManager.default.removeItem(atPath: directory)
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

    /// posix_spawn with an empty signal mask and default dispositions (see `Subprocess`), a
    /// minimal environment, and the three standard descriptors from files.
    private static func spawn(_ argv: [String], standardInput: String?, standardOutput: String,
                              standardError: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, standardInput ?? "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, standardOutput, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        if standardError == standardOutput {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, standardError, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var nothing = sigset_t(), everything = sigset_t()
        sigemptyset(&nothing)
        sigfillset(&everything)
        posix_spawnattr_setsigmask(&attributes, &nothing)
        posix_spawnattr_setsigdefault(&attributes, &everything)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let args = argv.map { strdup($0) } + [nil]
        let variables: [String] = ["PATH=\(path)", "LANG=C.UTF-8"]
        let envp = variables.map { strdup($0) } + [nil]
        defer { (args + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, argv[0], &actions, &attributes, args, envp)
        guard rc == 0 else { throw ChildProcessError(description: "cannot start \(argv[0]): errno \(rc)") }
        return pid
    }
}
