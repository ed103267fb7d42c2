import DBus
#if canImport(Glibc)
import Glibc
#endif

/// A client of xdg-desktop-portal's FileTransfer interface: it turns host files into a key a
/// sandboxed app (Flatpak, Snap) exchanges for paths it may open, the way GTK and KDE offer
/// copied files as `application/vnd.portal.filetransfer`.
///
/// Each ``transferKey(for:)`` starts a transfer that is writable and stops after its first
/// retrieval (GTK's choices), and adds the files as `O_PATH` descriptors, 16 to a message.
/// A transfer belongs to the connection that started it and ends when that connection leaves
/// the bus: keep the connection open for as long as the key is offered.
///
/// D-Bus: `org.freedesktop.portal.FileTransfer` of `org.freedesktop.portal.Documents` at
/// `/org/freedesktop/portal/documents`.
public final class FileTransferPortal: Sendable {
    /// The portal's bus name.
    public static let busName: BusName = "org.freedesktop.portal.Documents"
    /// The portal's object.
    public static let path: ObjectPath = "/org/freedesktop/portal/documents"
    /// The interface.
    public static let interfaceName: InterfaceName = "org.freedesktop.portal.FileTransfer"
    /// The most descriptors one `AddFiles` carries (the bus's default per-message limit).
    public static let filesPerCall = 16
    /// The MIME type under which a clipboard offers a transfer's key followed by a NUL byte.
    public static let mimeType = "application/vnd.portal.filetransfer"

    /// The session bus connection the transfers belong to.
    public let connection: Connection

    /// Makes a client that talks to the portal over `connection` (a session bus connection).
    public init(connection: Connection) {
        self.connection = connection
    }

    /// Starts a transfer of `paths` and returns its key. A reader of the clipboard gets the key
    /// followed by a NUL byte (``clipboardBytes(key:)``) and asks the portal for the files with
    /// `RetrieveFiles`.
    ///
    /// Every path is opened (`O_PATH`) and checked to be a regular file before the portal is
    /// asked anything, so a bad path starts no transfer. A transfer the portal refuses part way
    /// is stopped before the error is thrown.
    /// - Parameter paths: the files, in order.
    /// - Returns: the transfer's key.
    /// - Throws: `FileTransferPortalError`: `.noFiles`, `.cannotOpen` and `.notARegularFile`
    ///   naming the path, `.unavailable` when the portal is not on the bus, `.refused` when it
    ///   answers with an error.
    ///
    /// D-Bus: `org.freedesktop.portal.FileTransfer.StartTransfer`, then `AddFiles`.
    public func transferKey(for paths: [String]) async throws -> String {
        guard !paths.isEmpty else { throw FileTransferPortalError(.noFiles, "no files to transfer") }
        let descriptors = try paths.map(Self.openRegularFile)
        defer { descriptors.forEach { $0.close() } }
        let options: [String: DBusValue] = ["writable": .boolean(true), "autostop": .boolean(true)]
        // The first call may start the portal (bus activation): give it time on a loaded machine.
        let key = try await call("StartTransfer", [options.dbusValue], timeout: .seconds(60))
        guard key.count == 1, case .string(let text) = key[0], !text.isEmpty else {
            throw FileTransferPortalError(.refused, "StartTransfer answered \(key) instead of a key")
        }
        do {
            var start = 0
            while start < descriptors.count {
                let chunk = descriptors[start..<min(start + Self.filesPerCall, descriptors.count)]
                _ = try await call("AddFiles", [.string(text), .array(of: "h", chunk.map { .unixFD($0) }),
                                                .variantDictionary([:])], timeout: .seconds(30))
                start += Self.filesPerCall
            }
        } catch {
            _ = try? await call("StopTransfer", [.string(text)], timeout: .seconds(5))
            throw error
        }
        return text
    }

    /// What a clipboard serves for ``mimeType``: the key and a NUL byte, as GTK writes it.
    public static func clipboardBytes(key: String) -> [UInt8] {
        Array(key.utf8) + [0]
    }

    /// `O_PATH` (Linux's value; Glibc hides it behind `_GNU_SOURCE`, so Swift does not see it):
    /// a descriptor that names a file without opening it for reading.
    private static let openPath: Int32 = 0o10000000

    /// Opens `path` with `O_PATH` and checks that it is a regular file.
    private static func openRegularFile(_ path: String) throws -> FileDescriptor {
        let raw = open(path, Self.openPath | O_CLOEXEC)
        guard raw >= 0 else {
            let reason = String(cString: strerror(errno))
            throw FileTransferPortalError(.cannotOpen, "\(path): \(reason)", path: path)
        }
        let descriptor = FileDescriptor(taking: raw)
        var status = stat()
        guard fstat(raw, &status) == 0 else {
            let reason = String(cString: strerror(errno))
            descriptor.close()
            throw FileTransferPortalError(.cannotOpen, "\(path): \(reason)", path: path)
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            descriptor.close()
            throw FileTransferPortalError(.notARegularFile, "\(path) is not a regular file (the portal transfers files only)",
                                          path: path)
        }
        return descriptor
    }

    /// Calls a FileTransfer method, turning the bus's errors into ``FileTransferPortalError``.
    private func call(_ member: MemberName, _ body: [DBusValue], timeout: Duration) async throws -> [DBusValue] {
        do {
            return try await connection.call(destination: Self.busName, path: Self.path, interface: Self.interfaceName,
                                             member: member, body: body, timeout: timeout)
        } catch let error as DBusError {
            switch error.name {
            case .serviceUnknown, .nameHasNoOwner, .unknownObject, .unknownInterface, .unknownMethod:
                throw FileTransferPortalError(.unavailable,
                                              "the document portal (\(Self.busName), \(Self.interfaceName)) is not on the session bus: \(error)")
            default:
                throw FileTransferPortalError(.refused, "the document portal refused \(member): \(error)")
            }
        }
    }
}
