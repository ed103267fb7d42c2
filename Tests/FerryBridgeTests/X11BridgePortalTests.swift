import DBus
import DesktopPortal
import FerryTestSupport
import Foundation
import Testing

/// File items for sandboxed apps: `application/vnd.portal.filetransfer` on Xvfb, read by xclip,
/// with the real xdg-document-portal bus-activated on the private bus.
@Suite("ferry-bridge on X11: file items through the document portal's FileTransfer")
struct X11BridgePortalTests {
    @Test("xclip reads application/vnd.portal.filetransfer: a key and a NUL; RetrieveFiles gives the files, once")
    func transferKey() async throws {
        try await PortalServices.with { services in
            try await X11BridgeSession.with(bus: services.bus) { session in
                let first = services.root.appendingPathComponent("report one.txt")
                let second = services.root.appendingPathComponent("données.bin")
                try Data("the first file\n".utf8).write(to: first)
                try Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 * 7) }).write(to: second)
                let list = services.root.appendingPathComponent("list.uris")
                try Data("\(first.absoluteString)\r\n\(second.absoluteString)\r\n".utf8).write(to: list)
                #expect(try await session.ferry("copy", "-t", "text/uri-list", list.path).status == 0)
                #expect(try await session.eventually {
                    try await session.xclipPaste("TARGETS").stdout.contains(FileTransferPortal.mimeType)
                }, "the file item is offered as the portal's type")

                let read = try await session.xclipPaste(FileTransferPortal.mimeType)
                let bytes = Array(read.standardOutput)
                #expect(bytes.last == 0, "GTK's form: the key, then a NUL")
                let key = String(decoding: bytes.dropLast(), as: UTF8.self)
                #expect(!key.isEmpty && !key.contains("\0"))

                let reader = try await Connection(address: session.bus.address)
                let paths = try await reader.call(destination: FileTransferPortal.busName, path: FileTransferPortal.path,
                                                  interface: FileTransferPortal.interfaceName, member: "RetrieveFiles",
                                                  body: [.string(key), .variantDictionary([:])], timeout: .seconds(30),
                                                  returning: [String].self)
                #expect(paths.count == 2)
                for (path, original) in zip(paths, [first, second]) {
                    #expect(FileManager.default.contents(atPath: path) == (try Data(contentsOf: original)),
                            "\(path) has the bytes of \(original.path)")
                }
                // The transfer stops after its first retrieval; the next read of the type starts another.
                await #expect(throws: DBusError.self) {
                    _ = try await reader.call(destination: FileTransferPortal.busName, path: FileTransferPortal.path,
                                              interface: FileTransferPortal.interfaceName, member: "RetrieveFiles",
                                              body: [.string(key), .variantDictionary([:])], timeout: .seconds(30))
                }
                let again = Array(try await session.xclipPaste(FileTransferPortal.mimeType).standardOutput)
                #expect(again.last == 0 && again != bytes, "a second paste gets a key of its own")
                await reader.close()
            }
        }
    }

    @Test("a URI list naming a web page: the type is offered, the reader gets nothing, the bridge says why")
    func notALocalFile() async throws {
        try await PortalServices.with { services in
            try await X11BridgeSession.with(bus: services.bus) { session in
                let list = services.root.appendingPathComponent("web.uris")
                try Data("https://example.org/report.pdf\r\n".utf8).write(to: list)
                #expect(try await session.ferry("copy", "-t", "text/uri-list", list.path).status == 0)
                #expect(try await session.eventually {
                    try await session.xclipPaste("TARGETS").stdout.contains(FileTransferPortal.mimeType)
                })
                #expect(try await session.xclipPaste(FileTransferPortal.mimeType).standardOutput.isEmpty)
                #expect(try await session.eventually {
                    session.bridge.standardError.contains("https://example.org/report.pdf is not a file URL")
                }, "\(session.bridge.standardError)")
                #expect(try await session.xclipPaste("text/uri-list").stdout == "https://example.org/report.pdf\r\n",
                        "the other types are served as before")
            }
        }
    }

    @Test("without a document portal on the bus, a file item is offered without the portal's type")
    func noPortal() async throws {
        try await X11BridgeSession.with { session in
            let list = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-noportal-\(getpid()).uris")
            defer { try? FileManager.default.removeItem(at: list) }
            try Data("file:///tmp/a.txt\r\n".utf8).write(to: list)
            #expect(try await session.ferry("copy", "-t", "text/uri-list", list.path).status == 0)
            #expect(try await session.eventually { try await session.xclipPaste("TARGETS").stdout.contains("text/uri-list") })
            let targets = try await session.xclipPaste("TARGETS").stdout
            #expect(targets.contains("x-special/gnome-copied-files"))
            #expect(!targets.contains(FileTransferPortal.mimeType), "\(targets)")
        }
    }
}

/// A private bus that can activate the system's xdg-document-portal and xdg-permission-store,
/// with a runtime folder of its own (the portal's FUSE mount). Afterwards the portal processes
/// (found by that runtime folder in their environment, by pid) are stopped and the mount detached.
struct PortalServices {
    static let programs = ["org.freedesktop.portal.Documents": "/usr/libexec/xdg-document-portal",
                           "org.freedesktop.impl.portal.PermissionStore": "/usr/libexec/xdg-permission-store"]

    let bus: PrivateBus
    /// A folder for the test's files.
    let root: URL
    let runtime: URL

    static func with(_ body: (PortalServices) async throws -> Void) async throws {
        for program in programs.values where !FileManager.default.isExecutableFile(atPath: program) {
            Issue.record("\(program) is missing: apt-get install xdg-desktop-portal")
            return
        }
        let root = FileManager.default.temporaryDirectory
            .appendingPathComponent("ferry-bridge-portal-\(getpid())-\(UUID().uuidString.prefix(8))")
        let runtime = root.appendingPathComponent("runtime"), services = root.appendingPathComponent("services")
        for folder in [runtime, services] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        chmod(runtime.path, 0o700)
        defer { try? FileManager.default.removeItem(at: root) }
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

    /// The pids of processes started with this runtime folder (the activated portal processes).
    func portalProcesses() -> [pid_t] {
        let marker = Data("XDG_RUNTIME_DIR=\(runtime.path)\0".utf8)
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry in
            guard let pid = pid_t(entry), pid != getpid(),
                  let environment = FileManager.default.contents(atPath: "/proc/\(entry)/environ"),
                  environment.range(of: marker) != nil else { return nil }
            return pid
        }
    }

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
