import FerrySystem
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Loads a ``ItemProvider/Source/stream(_:)`` representation into memory, for the callers that
/// want `Data` (``ItemProvider/loadData(for:progress:)``): the writer gets a pipe's write end
/// while a thread of the blocking pool (`BlockingIO`) reads the other end.
enum StreamCollector {
    /// Runs `writer` into a pipe and returns everything it wrote.
    /// - Throws: `FerryModelError` `.unavailable` when the pipe cannot be made, the writer fails,
    ///   or its count differs from the bytes that came through.
    static func collect(contentType: ContentType,
                        writer: @escaping @Sendable (Int32) async throws -> UInt64) async throws -> Data {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            throw FerryModelError(.unavailable, "cannot make a pipe: \(String(cString: strerror(errno)))")
        }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let (readEnd, writeEnd) = (ends[0], ends[1])
        async let collected: Data = BlockingIO.run { drain(readEnd) }
        let said: UInt64
        do {
            said = try await writer(writeEnd)
        } catch {
            _ = await collected
            if let error = error as? FerryModelError { throw error }
            throw FerryModelError(.unavailable, "the \(contentType.identifier) writer failed: \(error)")
        }
        let data = await collected
        guard said == UInt64(data.count) else {
            throw FerryModelError(.unavailable, "the \(contentType.identifier) writer said \(said) bytes but wrote \(data.count)")
        }
        return data
    }

    /// Runs `writer` into a new file at `url` (mode 0600).
    /// - Returns: the bytes written.
    /// - Throws: `FerryModelError` `.unavailable` when the file cannot be made or the writer fails.
    static func write(contentType: ContentType, writer: @Sendable (Int32) async throws -> UInt64,
                      to url: URL) async throws -> UInt64 {
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw FerryModelError(.unavailable, "cannot write a temporary file: \(String(cString: strerror(errno)))")
        }
        do {
            return try await writer(descriptor)
        } catch let error as FerryModelError {
            throw error
        } catch {
            throw FerryModelError(.unavailable, "the \(contentType.identifier) writer failed: \(error)")
        }
    }

    /// Reads `descriptor` to end of file (or error) and closes it.
    private static func drain(_ descriptor: Int32) -> Data {
        defer { close(descriptor) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return data }
            data.append(contentsOf: buffer[0..<n])
        }
    }
}
