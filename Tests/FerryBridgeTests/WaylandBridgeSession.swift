import FerryTestSupport
import Foundation

/// The real pieces for one bridge test on Wayland: headless sway, and as its user (ferryd serves
/// only callers of its own uid) a private dbus-daemon, the real ferryd and the real
/// `ferry-bridge --backend wayland`; `ferry`, `wl-copy` and `wl-paste` run as that user too.
/// Everything runs with this instance's `XDG_RUNTIME_DIR`, so `close()` (sway's `stop()`) kills it
/// all by pid, also what a test left running.
final class WaylandBridgeSession: Sendable {
    let sway: HeadlessSway
    let busAddress: String
    let ferryd: ServiceProcess
    let bridge: ServiceProcess
    /// Where the Ferry programs and the bus configuration are staged for the user, who may not
    /// reach the checkout (a clone in a 700 folder): hard links, or copies across file systems.
    let stage: String

    init() async throws {
        let sway = try await HeadlessSway()
        self.sway = sway
        do {
            let home = "\(sway.directory)/home", state = "\(sway.directory)/state", busDir = "\(sway.directory)/bus"
            for dir in [home, state, busDir] {
                guard mkdir(dir, 0o700) == 0, chown(dir, sway.uid, sway.gid) == 0 else {
                    throw WaylandSessionError( "cannot make \(dir): errno \(errno)")
                }
            }
            let stage = "\(sway.directory)/stage"
            self.stage = stage
            try Self.stageFiles([try BuiltProducts.executable("ferry"), try BuiltProducts.executable("ferry-cli"),
                            try BuiltProducts.executable("ferryd"), try BuiltProducts.executable("ferry-bridge"),
                            TestPaths.fixtures.appendingPathComponent("dbus/session.conf").path], in: stage)
            let config = "\(stage)/session.conf"
            let addressFile = "\(sway.directory)/bus.address"
            try sway.spawn(["dbus-daemon", "--config-file=\(config)", "--nofork", "--print-address=1",
                           "--address=unix:dir=\(busDir)"],
                          standardOutput: addressFile, standardError: "\(sway.directory)/bus.log")
            var address: String?
            let deadline = ContinuousClock.now + .seconds(10)
            while address == nil {
                let text = (try? String(contentsOfFile: addressFile, encoding: .utf8)) ?? ""
                if text.hasSuffix("\n"), text.hasPrefix("unix:") {
                    address = text.trimmingCharacters(in: .whitespacesAndNewlines)
                } else if ContinuousClock.now > deadline {
                    let log = (try? String(contentsOfFile: "\(sway.directory)/bus.log", encoding: .utf8)) ?? ""
                    throw WaylandSessionError( "dbus-daemon (as \(sway.user)) printed no address: \(log)")
                } else {
                    try await Task.sleep(for: .milliseconds(10))
                }
            }
            busAddress = address!
            let environment = sway.environment.merging(["DBUS_SESSION_BUS_ADDRESS": busAddress, "HOME": home]) { $1 }
            // setpriv execs the program itself, so `bridge.pid` is the bridge's (for its VmRSS).
            let asUser = ["--reuid=\(sway.uid)", "--regid=\(sway.gid)", "--clear-groups"]
            ferryd = try await ServiceProcess("/usr/bin/setpriv",
                                              asUser + ["\(stage)/ferryd", "--bus", busAddress,
                                                        "--state-dir", state],
                                              environment: environment)
            bridge = try await ServiceProcess("/usr/bin/setpriv",
                                              asUser + ["\(stage)/ferry-bridge", "--backend", "wayland",
                                                        "--bus", busAddress, "--verbose"],
                                              environment: environment)
        } catch {
            sway.stop()
            throw error
        }
    }

    /// Links (or, across file systems, copies) `files` into a new world-readable folder `folder`.
    private static func stageFiles(_ files: [String], in folder: String) throws {
        guard mkdir(folder, 0o755) == 0 else { throw WaylandSessionError("cannot make \(folder): errno \(errno)") }
        for file in files {
            let target = "\(folder)/\((file as NSString).lastPathComponent)"
            if link(file, target) != 0 { try FileManager.default.copyItem(atPath: file, toPath: target) }
        }
    }

    /// Runs `body` with a fresh session and closes it, also when `body` throws.
    static func with(_ body: (WaylandBridgeSession) async throws -> Void) async throws {
        let session = try await WaylandBridgeSession()
        do {
            try await body(session)
        } catch {
            await offThePool { session.close() }
            throw error
        }
        await offThePool { session.close() }
    }

    /// Stops the bridge and ferryd, then sway and every process left of this instance (the bus,
    /// `wl-copy` servers, `ferry watch`), each by pid.
    func close() {
        bridge.stop()
        ferryd.stop()
        sway.stop()
    }

    /// The variables a Ferry program run as the user needs besides sway's.
    var ferryEnvironment: [String: String] {
        ["DBUS_SESSION_BUS_ADDRESS": busAddress, "HOME": "\(sway.directory)/home", "COLUMNS": "80"]
    }

    /// Runs the real `ferry` as the user on the private bus.
    func ferry(_ arguments: String..., timeout: Duration = .seconds(30)) async throws -> HeadlessSway.PeerResult {
        try await sway.run(["\(stage)/ferry"] + arguments, extraEnvironment: ferryEnvironment,
                           timeout: timeout)
    }

    /// Runs a `sh -c` script as the user, with `$FERRY` the built `ferry` and the private bus.
    func shell(_ script: String, timeout: Duration = .seconds(60)) async throws -> HeadlessSway.PeerResult {
        try await sway.run(["sh", "-c", script],
                           extraEnvironment: ferryEnvironment.merging(["FERRY": "\(stage)/ferry"]) { $1 },
                           timeout: timeout)
    }

    /// Runs `wl-copy` with `arguments`, standard input from `input` (a path the user can read).
    /// wl-copy forks a server that owns the selection and returns; `newestWlCopy` finds it.
    func wlCopy(_ arguments: String..., input: String? = nil) async throws -> HeadlessSway.PeerResult {
        try await sway.run(["wl-copy"] + arguments, standardInput: input)
    }

    /// Runs `wl-paste` with `arguments`.
    func wlPaste(_ arguments: String...) async throws -> HeadlessSway.PeerResult {
        try await sway.run(["wl-paste"] + arguments)
    }

    /// The `wl-copy` server now serving (the newest of this instance), if any.
    var newestWlCopy: pid_t? { sway.newestProcess(named: "wl-copy") }

    /// The general pasteboard's change count (`ferry types --json`), or nil when ferry fails.
    func changeCount() async throws -> UInt64? {
        let result = try await ferry("types", "--json")
        guard result.succeeded else { return nil }
        struct Report: Decodable { var changeCount: UInt64 }
        return try? JSONDecoder().decode(Report.self, from: result.standardOutput).changeCount
    }

    /// What `ferry bridge status --json` says, as much of it as the tests read.
    struct Status: Decodable {
        struct Transfer: Decodable {
            var changeCount: UInt64
            var complete: Bool
            var sensitive: Bool
        }

        struct Selection: Decodable {
            var owner: String
            var types: [String]
            var lastImport: Transfer?
            var lastExport: Transfer?
        }

        var `protocol`: String
        var clipboard: Selection
        var primary: Selection
    }

    /// The bridge's status, or nil when `ferry bridge status` fails.
    func status() async throws -> Status? {
        let result = try await ferry("bridge", "status", "--json")
        guard result.succeeded else { return nil }
        return try? JSONDecoder().decode(Status.self, from: result.standardOutput)
    }

    /// Waits until the bridge has a complete copy of CLIPBOARD's import at least at `changeCount`.
    func waitForCompleteImport(atLeast changeCount: UInt64 = 1, timeout: Duration = .seconds(20)) async throws -> Bool {
        try await eventually(timeout) {
            guard let last = try await status()?.clipboard.lastImport else { return false }
            return last.complete && last.changeCount >= changeCount
        }
    }

    /// The bridge's resident set size in kB (`VmRSS` in /proc/PID/status).
    func bridgeResidentKilobytes() throws -> Int {
        let text = try String(contentsOfFile: "/proc/\(bridge.pid)/status", encoding: .utf8)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { throw WaylandSessionError( "no VmRSS for the bridge (pid \(bridge.pid))") }
        return kilobytes
    }

    /// The SHA-256 of `path` (`sha256sum`), hex.
    static func sha256(ofFile path: String) async throws -> String {
        let result = try await ChildProcess.run("sha256sum", [path], timeout: .seconds(30))
        return String(result.stdout.prefix(64))
    }
}

/// Why a Wayland bridge session could not be set up or measured.
struct WaylandSessionError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
