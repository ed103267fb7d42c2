import DBus
import FerryModel

/// Reads a promised representation's pipe and confirms the transfer
/// (`org.ferry.Pasteboard1.FinishTransfer`, which the broker answers once the source has replied)
/// without letting the confirmation's round trip follow end of file: it is sent as soon as the
/// descriptor is there, while the pipe is read to end of file on a blocking-I/O thread.
enum PromisedStream {
    /// How long the confirmation may take.
    static let confirmationTimeout: Duration = .seconds(90)

    /// All of `fd`'s bytes, checked against the count the source confirms through `confirm`.
    /// Closes `fd` before returning or throwing (a source still writing then sees a broken pipe)
    /// and leaves no confirmation pending when the read fails (its reply, if it comes, is dropped).
    /// - Parameters:
    ///   - limit: fail with `.tooLarge` past this many bytes.
    ///   - progress: advances as bytes arrive; `expectedSize` is its total when it has none.
    ///   - expectedSize: the size the source announced, nil when unknown.
    ///   - connection: the connection `confirm` calls over, whose thread polls the pipe for its
    ///     first bytes (``DescriptorDrain``).
    ///   - confirm: `FinishTransfer` with a timeout; throws what the call throws.
    /// - Throws: `FerryError`: `.io`, `.tooLarge`, `.cancelled` (the reading task was cancelled:
    ///   the pipe is closed at once, and the source's write fails), what `confirm` throws,
    ///   `.unavailable` when the byte counts differ.
    static func read(_ fd: FileDescriptor, limit: Int, progress: ItemProvider.Progress? = nil, expectedSize: Int64? = nil,
                     polledBy connection: Connection? = nil, confirm: @escaping @Sendable (Duration) async throws -> UInt64) async throws(FerryError) -> [UInt8] {
        defer { fd.close() }
        async let confirmation: Result<UInt64, FerryError> = {
            do {
                return .success(try await confirm(confirmationTimeout))
            } catch {
                return .failure(FerryError.converting(error))
            }
        }()
        let bytes: [UInt8]
        do {
            bytes = try await DescriptorDrain.readAll(fd, limit: limit, progress: progress, expectedSize: expectedSize,
                                                      polledBy: connection)
        } catch {
            fd.close()  // the source stops writing; leaving the scope cancels the confirmation
            throw FerryError.converting(error)
        }
        let written = try await confirmation.get()
        guard written == UInt64(bytes.count) else {
            throw FerryError(.unavailable, "the source wrote \(written) bytes but \(bytes.count) arrived")
        }
        return bytes
    }
}
