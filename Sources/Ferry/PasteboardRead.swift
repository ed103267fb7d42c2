import DBus
import FerryModel
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What one read of a pasteboard delivered: the type, the size when known, and the bytes either
/// inline or as a file descriptor to read to end of file.
///
/// D-Bus: the reply of `org.ferry.Pasteboard1.Read`.
public struct PasteboardRead: Sendable {
    /// Where the bytes are.
    public enum Content: Sendable {
        /// The bytes themselves (small held data).
        case bytes([UInt8])
        /// A descriptor to read to end of file: the broker's copy, or, when `transfer` is set, a
        /// pipe fed by the source app (call ``PasteboardRead/finish()`` after end of file).
        case stream(FileDescriptor, transfer: String?)
    }

    /// The identifier of the representation delivered (`public.png` when `public.image` was
    /// asked for), as the broker sent it.
    public let deliveredTypeIdentifier: String
    /// The representation delivered, as a content type. Computed on use: it consults the type
    /// database, which a program that only copies bytes (the CLI's `paste`) need never load.
    public var deliveredType: ContentType {
        (try? WireBridge.contentType(deliveredTypeIdentifier)) ?? .data
    }
    /// The size in bytes; nil when the source has not said.
    public let size: Int64?
    /// The bytes, or where to read them.
    public let content: Content
    let connection: Connection
    let path: ObjectPath

    init(deliveredType: String, size: Int64?, content: Content, connection: Connection, path: ObjectPath) {
        self.deliveredTypeIdentifier = deliveredType
        self.size = size
        self.content = content
        self.connection = connection
        self.path = path
    }

    /// The raw descriptor of a ``Content/stream`` while it is open, for a program that hands it
    /// on (to `splice(2)`, to a child process's standard input); nil for inline bytes and once
    /// closed. The read owns it: close it with ``closeStream()``, never yourself.
    public var streamDescriptor: Int32? {
        if case .stream(let fd, _) = content { fd.rawValue } else { nil }
    }

    /// Closes a ``Content/stream``'s descriptor now (a source app still writing a promised
    /// representation then sees a broken pipe). Does nothing for inline bytes or a closed stream.
    public func closeStream() {
        if case .stream(let fd, _) = content { fd.close() }
    }

    /// For a promised read, the transfer id to confirm with ``finish()``; nil otherwise.
    public var transfer: String? {
        if case .stream(_, let transfer) = content { transfer } else { nil }
    }

    /// Confirms a promised transfer after its stream was read to end of file: the number of bytes
    /// the source wrote. Returns nil at once for held data (nothing to confirm).
    /// - Throws: `FerryError` `.unavailable` when the source failed or vanished mid-transfer,
    ///   `.timeout`, `.notFound` for a transfer that is not the caller's.
    ///
    /// D-Bus: `org.ferry.Pasteboard1.FinishTransfer`.
    public func finish() async throws(FerryError) -> UInt64? {
        guard let transfer else { return nil }
        return try await FerryError.bridging {
            try await connection.call(destination: FerryClient.brokerName, path: path, interface: Pasteboard.interface,
                                      member: "FinishTransfer", body: [.string(transfer)], timeout: .seconds(90),
                                      returning: UInt64.self)
        }
    }

    /// All the bytes: the inline ones, or the stream read to end of file (off the caller's thread)
    /// and, for a promised read, confirmed as ``finish()`` does — asked for while the stream is
    /// read (the broker answers once the source has written everything).
    ///
    /// Cancelling the calling task stops the read at once: the descriptor is closed, so a source
    /// app still writing a promised representation sees a broken pipe and its loader is cancelled.
    /// - Parameters:
    ///   - limit: fail with `.tooLarge` past this many bytes.
    ///   - progress: advances as the bytes arrive (its total is ``size`` when it has none and the
    ///     size is known), so a 48 MiB promised paste reports many fractions before it completes.
    /// - Throws: `FerryError`: `.io` when reading fails, `.tooLarge`, `.cancelled` when the task
    ///   is cancelled, and what ``finish()`` throws.
    public func bytes(limit: Int = Int.max, progress: ItemProvider.Progress? = nil) async throws(FerryError) -> [UInt8] {
        switch content {
        case .bytes(let bytes):
            guard bytes.count <= limit else { throw FerryError(.tooLarge, "more than \(limit) bytes") }
            progress?.totalUnitCount = Int64(bytes.count)
            progress?.completedUnitCount = Int64(bytes.count)
            return bytes
        case .stream(let fd, nil):
            defer { fd.close() }
            return try await DescriptorDrain.readAll(fd, limit: limit, progress: progress, expectedSize: size)
        case .stream(let fd, let transfer?):
            let connection = connection, path = path
            return try await PromisedStream.read(fd, limit: limit, progress: progress, expectedSize: size,
                                                 polledBy: connection) { timeout in
                try await connection.call(destination: FerryClient.brokerName, path: path, interface: Pasteboard.interface,
                                          member: "FinishTransfer", body: [.string(transfer)], timeout: timeout,
                                          returning: UInt64.self)
            }
        }
    }
}
