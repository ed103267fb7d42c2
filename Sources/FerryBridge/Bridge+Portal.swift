import DBus
import DesktopPortal
import Ferry
import FerryModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Files for sandboxed apps: a file item exported to the desktop is also offered as
/// `application/vnd.portal.filetransfer` when the document portal can be reached on the bridge's
/// session bus. Each read of that type starts one FileTransfer of the item's files (writable,
/// stopped after its first retrieval, as GTK does) and gets the key and a NUL byte.
extension Bridge {
    /// The most bytes of a file item's URI list read to find its files.
    static let portalListLimit = 1 << 20

    /// Whether `org.freedesktop.portal.Documents` is on the bridge's bus or can be activated there.
    /// Asked once per bridge run: a portal installed later is seen after a reconnection. Logs its absence.
    func findDocumentPortal() async -> Bool {
        let connection = client.connection
        let name = FileTransferPortal.busName.rawValue
        let owned = try? await connection.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                               interface: "org.freedesktop.DBus", member: "NameHasOwner",
                                               body: [.string(name)], timeout: .seconds(10), returning: Bool.self)
        if owned == true { return true }
        let activatable = try? await connection.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                                     interface: "org.freedesktop.DBus", member: "ListActivatableNames",
                                                     body: [], timeout: .seconds(10), returning: [String].self)
        guard activatable?.contains(name) == true else {
            log.event("no document portal (\(name)) on the bus: file items are offered without \(FileTransferPortal.mimeType)")
            return false
        }
        return true
    }

    /// The names for a file item: the portal's transfer after the URI list, when the portal is there.
    func withPortalTransfer(_ names: [DesktopTypeMap.Exported]) -> [DesktopTypeMap.Exported] {
        guard hasDocumentPortal, let list = names.first(where: { $0.name == DesktopTypeMap.uriList }) else { return names }
        return names + [DesktopTypeMap.Exported(name: FileTransferPortal.mimeType, contentType: list.contentType, conversion: .none)]
    }

    /// Serves one read of `application/vnd.portal.filetransfer`: reads the item's URI list from
    /// ferryd, hands its files to the portal and writes the key and a NUL into `descriptor` (which
    /// this owns). When the list names something other than local regular files, or the portal
    /// refuses, the reader gets nothing (its descriptor is closed empty) and the reason is logged.
    nonisolated static func serveTransfer(_ exported: DesktopTypeMap.Exported, changeCount: UInt64, from board: Pasteboard,
                                          portal: FileTransferPortal, into descriptor: Int32, log: BridgeLog) async {
        let key: String
        do {
            let read = try await board.read(item: 0, type: exported.contentType, userAction: true, changeCount: changeCount)
            let paths = try localPaths(inURIList: try await read.bytes(limit: portalListLimit))
            key = try await portal.transferKey(for: paths)
        } catch {
            log.warning("change \(changeCount): no \(FileTransferPortal.mimeType) for the reader: \(error)")
            close(descriptor)
            return
        }
        log.event("change \(changeCount): the portal's transfer key went to a reader")
        await serve(FileTransferPortal.clipboardBytes(key: key), as: exported, into: descriptor, log: log)
    }

    /// The local paths of a `text/uri-list` (or one file URL): `#` comments and empty lines
    /// skipped, `%XX` decoded.
    /// - Throws: `FileTransferPortalError` `.noFiles` for a list without URIs, `.cannotOpen`
    ///   naming a URI that is not a local `file:` URL or whose path is not UTF-8.
    static func localPaths(inURIList bytes: [UInt8]) throws(FileTransferPortalError) -> [String] {
        var paths: [String] = []
        for line in bytes.split(whereSeparator: { $0 == 0x0A || $0 == 0x0D }) where line.first != UInt8(ascii: "#") {
            let uri = String(decoding: line, as: UTF8.self)
            guard uri.hasPrefix("file://") else {
                throw FileTransferPortalError(.cannotOpen, "\(uri) is not a file URL", path: uri)
            }
            var rest = uri.dropFirst("file://".count)
            guard let slash = rest.firstIndex(of: "/") else {
                throw FileTransferPortalError(.cannotOpen, "\(uri) has no path", path: uri)
            }
            let host = rest[..<slash]
            guard host.isEmpty || host == "localhost" else {
                throw FileTransferPortalError(.cannotOpen, "\(uri) names another host", path: uri)
            }
            rest = rest[slash...]
            guard let decoded = percentDecoded(Array(rest.utf8)), !decoded.contains(0),
                  let path = String(validating: decoded, as: UTF8.self) else {
                throw FileTransferPortalError(.cannotOpen, "\(uri): the path is not UTF-8 text", path: uri)
            }
            paths.append(path)
        }
        guard !paths.isEmpty else { throw FileTransferPortalError(.noFiles, "the file item lists no URI") }
        return paths
    }

    /// `%XX` escapes decoded; nil when an escape is not two hex digits.
    private static func percentDecoded(_ bytes: [UInt8]) -> [UInt8]? {
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, let high = hex(bytes[index + 1]), let low = hex(bytes[index + 2]) else { return nil }
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return out
    }
}
