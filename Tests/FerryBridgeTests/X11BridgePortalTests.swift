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
                #expect(try await eventually {
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
                #expect(await PortalServices.refuses({
                    _ = try await reader.call(destination: FileTransferPortal.busName, path: FileTransferPortal.path,
                                              interface: FileTransferPortal.interfaceName, member: "RetrieveFiles",
                                              body: [.string(key), .variantDictionary([:])], timeout: .seconds(30))
                }, isRefusal: { $0 is DBusError }), "the key is refused once its files were retrieved")
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
                #expect(try await eventually {
                    try await session.xclipPaste("TARGETS").stdout.contains(FileTransferPortal.mimeType)
                })
                #expect(try await session.xclipPaste(FileTransferPortal.mimeType).standardOutput.isEmpty)
                #expect(await eventually {
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
            #expect(try await eventually { try await session.xclipPaste("TARGETS").stdout.contains("text/uri-list") })
            let targets = try await session.xclipPaste("TARGETS").stdout
            #expect(targets.contains("x-special/gnome-copied-files"))
            #expect(!targets.contains(FileTransferPortal.mimeType), "\(targets)")
        }
    }
}
