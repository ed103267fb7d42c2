import DBus
import DesktopPortal
import FerryTestSupport
import Foundation
import Testing

/// The FileTransfer client against the real xdg-document-portal, bus-activated on a private bus.
@Suite("DesktopPortal: FileTransfer against the real xdg-document-portal")
struct FileTransferPortalTests {
    @Test("20 files go in two AddFiles calls; a second connection retrieves the host paths once")
    func transferAndRetrieve() async throws {
        try await PortalBus.with { portal in
            let folder = try PortalBus.temporaryFolder("files")
            defer { try? FileManager.default.removeItem(at: folder) }
            let paths = try (0..<20).map { index in
                let url = folder.appendingPathComponent("file \(index).txt")
                try Data("file \(index)\n".utf8).write(to: url)
                return url.path
            }
            let connection = try await Connection(address: portal.bus.address)
            let key = try await FileTransferPortal(connection: connection).transferKey(for: paths)
            #expect(!key.isEmpty)
            #expect(FileTransferPortal.clipboardBytes(key: key) == Array(key.utf8) + [0])

            let reader = try await Connection(address: portal.bus.address)
            let retrieved = try await reader.call(destination: FileTransferPortal.busName, path: FileTransferPortal.path,
                                                  interface: FileTransferPortal.interfaceName, member: "RetrieveFiles",
                                                  body: [.string(key), .variantDictionary([:])], timeout: .seconds(30),
                                                  returning: [String].self)
            #expect(retrieved == paths, "every file, in order, as its host path")
            // autostop: the transfer ended with its first retrieval.
            await #expect(throws: DBusError.self) {
                _ = try await reader.call(destination: FileTransferPortal.busName, path: FileTransferPortal.path,
                                          interface: FileTransferPortal.interfaceName, member: "RetrieveFiles",
                                          body: [.string(key), .variantDictionary([:])], timeout: .seconds(30))
            }
            await reader.close()
            await connection.close()
        }
    }

    @Test("a folder, a FIFO, a device and a missing path are refused by name before the portal is asked")
    func badPaths() async throws {
        try await PortalBus.with { portal in
            let folder = try PortalBus.temporaryFolder("bad")
            defer { try? FileManager.default.removeItem(at: folder) }
            let fifo = folder.appendingPathComponent("fifo").path
            #expect(mkfifo(fifo, 0o600) == 0)
            let good = folder.appendingPathComponent("good.txt")
            try Data("ok".utf8).write(to: good)
            let connection = try await Connection(address: portal.bus.address)
            let client = FileTransferPortal(connection: connection)
            for (path, code) in [(folder.path, FileTransferPortalError.Code.notARegularFile), (fifo, .notARegularFile),
                                 ("/dev/null", .notARegularFile), (folder.appendingPathComponent("missing").path, .cannotOpen)] {
                let error = await #expect(throws: FileTransferPortalError.self) {
                    _ = try await client.transferKey(for: [good.path, path])
                }
                #expect(error?.code == code, "\(path)")
                #expect(error?.path == path)
            }
            let none = await #expect(throws: FileTransferPortalError.self) { _ = try await client.transferKey(for: []) }
            #expect(none?.code == .noFiles)
            #expect(try await portal.portalProcesses().isEmpty, "nothing was asked of the portal, so nothing was activated")
            await connection.close()
        }
    }

    @Test("without the document portal on the bus: unavailable, naming it")
    func noPortal() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let folder = try PortalBus.temporaryFolder("none")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("a.txt")
        try Data("a".utf8).write(to: file)
        let connection = try await Connection(address: bus.address)
        let error = await #expect(throws: FileTransferPortalError.self) {
            _ = try await FileTransferPortal(connection: connection).transferKey(for: [file.path])
        }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("org.freedesktop.portal.Documents") == true)
        await connection.close()
    }
}

/// A private bus that can activate the system's xdg-document-portal (and the permission store
/// it needs), with a runtime folder of its own for the portal's FUSE mount.
struct PortalBus {
    static let documentPortal = "/usr/libexec/xdg-document-portal"
    static let permissionStore = "/usr/libexec/xdg-permission-store"
    static let names = ["org.freedesktop.portal.Documents", "org.freedesktop.impl.portal.PermissionStore"]

    let bus: PrivateBus
    let runtime: URL
    private let monitor: Connection

    /// Runs `body` with a portal bus; afterwards stops the bus, the portal processes it started
    /// (by pid) and removes the mount and folders, also when `body` throws.
    static func with(_ body: (PortalBus) async throws -> Void) async throws {
        for program in [documentPortal, permissionStore] where !FileManager.default.isExecutableFile(atPath: program) {
            Issue.record("\(program) is missing: apt-get install xdg-desktop-portal")
            return
        }
        let root = try temporaryFolder("portal")
        defer { try? FileManager.default.removeItem(at: root) }
        let runtime = root.appendingPathComponent("runtime"), services = root.appendingPathComponent("services")
        for folder in [runtime, services] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        chmod(runtime.path, 0o700)
        for (name, program) in zip(names, [documentPortal, permissionStore]) {
            try "[D-BUS Service]\nName=\(name)\nExec=/usr/bin/env XDG_RUNTIME_DIR=\(runtime.path) \(program)\n"
                .write(to: services.appendingPathComponent("\(name).service"), atomically: true, encoding: .utf8)
        }
        let usual = try String(contentsOf: TestPaths.fixtures.appendingPathComponent("dbus/session.conf"), encoding: .utf8)
        let config = root.appendingPathComponent("bus.conf")
        try usual.replacingOccurrences(of: "</busconfig>", with: "  <servicedir>\(services.path)</servicedir>\n</busconfig>")
            .write(to: config, atomically: true, encoding: .utf8)
        let bus = try PrivateBus(config: config)
        let monitor: Connection
        do { monitor = try await Connection(address: bus.address) } catch { bus.stop(); throw error }
        let portal = PortalBus(bus: bus, runtime: runtime, monitor: monitor)
        do {
            try await body(portal)
        } catch {
            await portal.stop()
            throw error
        }
        await portal.stop()
    }

    /// The pids of the portal processes now on the bus, by name.
    func portalProcesses() async throws -> [String: UInt32] {
        var pids: [String: UInt32] = [:]
        for name in Self.names {
            let owned = try await monitor.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                               interface: "org.freedesktop.DBus", member: "NameHasOwner",
                                               body: [.string(name)], timeout: .seconds(10), returning: Bool.self)
            guard owned else { continue }
            pids[name] = try await monitor.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                                interface: "org.freedesktop.DBus", member: "GetConnectionUnixProcessID",
                                                body: [.string(name)], timeout: .seconds(10), returning: UInt32.self)
        }
        return pids
    }

    /// Stops the bus, then the portal processes it activated (SIGTERM, SIGKILL after 5 s), and
    /// detaches the portal's FUSE mount if it is still there.
    func stop() async {
        let pids = (try? await portalProcesses())?.values.map { pid_t(bitPattern: $0) } ?? []
        await monitor.close()
        bus.stop()
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

    /// A fresh folder under the temporary directory.
    static func temporaryFolder(_ label: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("ferry-\(label)-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
