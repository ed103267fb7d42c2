import FerrySystem
import Synchronization
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

extension ItemProvider {
    /// Registers bytes that an asynchronous sequence of chunks (`Data`, `[UInt8]`, any
    /// `DataProtocol`) produces on demand: each load makes a fresh sequence with `chunks` and
    /// writes every chunk as it comes into the reader's pipe, so the representation is never held
    /// in memory whole, however large. When the reader leaves (or its paste is cancelled) the
    /// loading task is cancelled: the sequence's iteration ends (an `AsyncStream`'s
    /// `onTermination` runs) and no further chunk is asked for.
    /// - Parameters:
    ///   - type: the chunks' type.
    ///   - visibility: who may see the representation.
    ///   - estimatedSize: the total size, when known (readers' progress uses it as its total).
    ///   - chunks: makes the sequence for one load; called once per load.
    /// - Returns: whether the representation was added (false when `type` is there already).
    @discardableResult
    public mutating func registerStreamRepresentation<Chunks: AsyncSequence>(
        for type: ContentType, visibility: Visibility = .all, estimatedSize: Int64? = nil,
        chunks: @escaping @Sendable () throws -> Chunks
    ) -> Bool where Chunks: SendableMetatype, Chunks.Element: DataProtocol {
        registerStreamRepresentation(for: type, visibility: visibility, estimatedSize: estimatedSize, writer: { descriptor in
            let output = ChunkWriter(descriptor)
            defer { output.close() }
            for try await chunk in try chunks() {
                try await output.write([UInt8](chunk))
            }
            try output.finish()
            return output.count
        })
    }

    /// Registers bytes read on demand from a descriptor to its end of file (a file, a pipe, a
    /// socket; for a `FileHandle`, a duplicate of its `fileDescriptor`): each load opens one with
    /// `open`, copies it a chunk at a time into the reader's pipe, never holding the whole
    /// representation in memory, and closes it. A load whose reader leaves stops after the chunk
    /// in flight. (A descriptor, not a `FileHandle`: the library keeps to FoundationEssentials,
    /// which has none.)
    /// - Parameters:
    ///   - type: the bytes' type.
    ///   - visibility: who may see the representation.
    ///   - estimatedSize: the total size, when known.
    ///   - open: opens the descriptor for one load (the load owns and closes it); called once
    ///     per load.
    /// - Returns: whether the representation was added (false when `type` is there already).
    @discardableResult
    public mutating func registerStreamRepresentation(
        for type: ContentType, visibility: Visibility = .all, estimatedSize: Int64? = nil,
        readingFrom open: @escaping @Sendable () throws -> Int32
    ) -> Bool {
        registerStreamRepresentation(for: type, visibility: visibility, estimatedSize: estimatedSize, writer: { descriptor in
            let output = ChunkWriter(descriptor)
            defer { output.close() }
            let input = try open()
            guard input >= 0 else { throw FerryModelError(.unavailable, "no descriptor to read \(type.identifier) from") }
            defer { _ = Glibc.close(input) }
            while true {
                let chunk = try await BlockingIO.run { try ChunkWriter.readChunk(from: input) }
                guard !chunk.isEmpty else { break }
                try await output.write(chunk)
            }
            try output.finish()
            return output.count
        })
    }
}

/// Writes the chunks of a streamed representation into the descriptor a
/// ``ItemProvider/Source/stream(_:)`` writer owns, each on a thread of its own (a full pipe
/// blocks the write, and must block neither the cooperative pool nor a connection's thread), and
/// checks for cancellation between chunks.
final class ChunkWriter: Sendable {
    /// The most bytes read from a handle at once.
    static let chunkSize = 1 << 20
    private let descriptor: Int32
    private let state = Mutex<(count: UInt64, open: Bool)>((0, true))

    init(_ descriptor: Int32) { self.descriptor = descriptor }

    /// The bytes written so far.
    var count: UInt64 { state.withLock { $0.count } }

    /// Writes all of `bytes`.
    /// - Throws: `CancellationError` when the task is cancelled, `FerryModelError` `.unavailable`
    ///   when the write fails (`EPIPE`: the reader left).
    func write(_ bytes: [UInt8]) async throws {
        try Task.checkCancellation()
        guard !bytes.isEmpty else { return }
        let descriptor = descriptor
        try await BlockingIO.run {
            var offset = 0
            while offset < bytes.count {
                let n = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
                if n < 0 {
                    if errno == EINTR { continue }
                    throw FerryModelError(.unavailable, "cannot write: \(String(cString: strerror(errno)))")
                }
                offset += n
            }
        }
        state.withLock { $0.count += UInt64(bytes.count) }
    }

    /// Confirms the end of the bytes: a sequence that ended because its task was cancelled
    /// (`AsyncStream` then just ends) is a cancelled load, not a short one.
    func finish() throws { try Task.checkCancellation() }

    /// Closes the descriptor (once).
    func close() {
        let wasOpen = state.withLock { s in defer { s.open = false }; return s.open }
        if wasOpen { _ = Glibc.close(descriptor) }
    }

    /// Up to ``chunkSize`` bytes of `descriptor`; empty at end of file.
    static func readChunk(from descriptor: Int32) throws -> [UInt8] {
        var failure: Int32 = 0
        // Read straight into uninitialized capacity: zeroing the chunk first cost as much as the read.
        let chunk = [UInt8](unsafeUninitializedCapacity: chunkSize) { buffer, count in
            while true {
                let n = Glibc.read(descriptor, buffer.baseAddress, buffer.count)
                if n < 0 && errno == EINTR { continue }
                if n < 0 { failure = errno }
                count = max(0, n)
                return
            }
        }
        guard failure == 0 else { throw FerryModelError(.unavailable, "cannot read: \(String(cString: strerror(failure)))") }
        return chunk
    }
}
