import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A private bus that can activate the system's xdg-document-portal and xdg-permission-store,
/// with a runtime folder of its own (the portal's FUSE mount). Afterwards the portal processes
/// (found by that runtime folder in their environment, by pid) are stopped and the mount detached.
public struct PortalServices: Sendable {
    /// The bus names the portal services own, and the programs the bus activates for them.
    public static let programs = ["org.freedesktop.portal.Documents": "/usr/libexec/xdg-document-portal",
                                  "org.freedesktop.impl.portal.PermissionStore": "/usr/libexec/xdg-permission-store"]

    /// A portal program is not installed.
    public struct Missing: Error, CustomStringConvertible {
        /// The program's path.
        public let program: String
        /// What is missing and how to install it.
        public var description: String { "\(program) is missing: apt-get install xdg-desktop-portal" }
    }

    /// The private bus that activates the portal.
    public let bus: PrivateBus
    /// A folder for the test's files, removed afterwards.
    public let root: URL
    /// The portal's `XDG_RUNTIME_DIR` (its FUSE mount is `doc` inside).
    public let runtime: URL

    /// Whether the portal refuses `retrieve` within `timeout`: asked until it throws an error
    /// `isRefusal` accepts. An autostop transfer ends with its first retrieval, but on a loaded
    /// machine the real portal has answered a second one before it stopped the transfer.
    public static func refuses(within timeout: Duration = .seconds(5), _ retrieve: () async throws -> Void,
                               isRefusal: (any Error) -> Bool) async -> Bool {
        await eventually(timeout) {
            do {
                try await retrieve()
                return false
            } catch {
                return isRefusal(error)
            }
        }
    }

    /// Runs `body` with the portal services; afterwards stops the bus and the portal processes it
    /// started (by pid), detaches the mount and removes the folders, also when `body` throws.
    public static func with(_ body: (PortalServices) async throws -> Void) async throws {
        for program in programs.values where !FileManager.default.isExecutableFile(atPath: program) {
            throw Missing(program: program)
        }
        let root = FileManager.default.temporaryDirectory
            .appendingPathComponent("ferry-portal-\(getpid())-\(UUID().uuidString.prefix(8))")
        let runtime = root.appendingPathComponent("runtime"), services = root.appendingPathComponent("services")
        defer { try? FileManager.default.removeItem(at: root) }
        for folder in [runtime, services] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        chmod(runtime.path, 0o700)
        for (name, program) in programs {
            try "[D-BUS Service]\nName=\(name)\nExec=/usr/bin/env XDG_RUNTIME_DIR=\(runtime.path) \(program)\n"
                .write(to: services.appendingPathComponent("\(name).service"), atomically: true, encoding: .utf8)
        }
        let usual = try String(contentsOf: TestPaths.fixtures.appendingPathComponent("dbus/session.conf"), encoding: .utf8)
        let config = root.appendingPathComponent("bus.conf")
        try usual.replacingOccurrences(of: "</busconfig>", with: "  <servicedir>\(services.path)</servicedir>\n</busconfig>")
            .write(to: config, atomically: true, encoding: .utf8)
        let portal = PortalServices(bus: try PrivateBus(config: config), root: root, runtime: runtime)
        do {
            try await body(portal)
        } catch {
            await portal.stop()
            throw error
        }
        await portal.stop()
    }

    /// A fresh folder inside ``root`` for the test's files.
    public func folder(_ label: String) throws -> URL {
        let url = root.appendingPathComponent(label)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// The pids of processes started with this runtime folder (the activated portal processes).
    public func portalProcesses() -> [pid_t] {
        let marker = Data("XDG_RUNTIME_DIR=\(runtime.path)\0".utf8)
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry in
            guard let pid = pid_t(entry), pid != getpid(),
                  let environment = FileManager.default.contents(atPath: "/proc/\(entry)/environ"),
                  environment.range(of: marker) != nil else { return nil }
            return pid
        }
    }

    /// Stops the bus, then the portal processes (SIGTERM, SIGKILL after 5 s), and detaches the
    /// portal's FUSE mount if it is still there.
    func stop() async {
        bus.stop()
        let pids = portalProcesses()
        for pid in pids { kill(pid, SIGTERM) }
        let deadline = ContinuousClock.now + .seconds(5)
        while pids.contains(where: { kill($0, 0) == 0 }), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(50))
        }
        for pid in pids where kill(pid, 0) == 0 { kill(pid, SIGKILL) }
        let mount = runtime.appendingPathComponent("doc").path
        let mounts = (try? String(contentsOfFile: "/proc/mounts", encoding: .utf8)) ?? ""
        if mounts.split(separator: "\n").contains(where: { $0.split(separator: " ").dropFirst().first == Substring(mount) }) {
            umount2(mount, Int32(MNT_DETACH))
        }
    }
}
