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
        try await PortalServices.with { portal in
            let folder = try portal.folder("files")
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
            #expect(await PortalServices.refuses({
                _ = try await reader.call(destination: FileTransferPortal.busName, path: FileTransferPortal.path,
                                          interface: FileTransferPortal.interfaceName, member: "RetrieveFiles",
                                          body: [.string(key), .variantDictionary([:])], timeout: .seconds(30))
            }, isRefusal: { $0 is DBusError }), "the key is refused once its files were retrieved")
            await reader.close()
            await connection.close()
        }
    }

    @Test("a folder, a FIFO, a device and a missing path are refused by name before the portal is asked")
    func badPaths() async throws {
        try await PortalServices.with { portal in
            let folder = try portal.folder("bad")
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
            #expect(portal.portalProcesses().isEmpty, "nothing was asked of the portal, so nothing was activated")
            await connection.close()
        }
    }

    @Test("without the document portal on the bus: unavailable, naming it")
    func noPortal() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-none-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
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
