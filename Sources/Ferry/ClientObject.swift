import DBus
import FerryModel
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

/// The `org.ferry.Client1` object a registered client exports for the broker: it serves promised
/// representations into the descriptors the broker hands it and, for an ``Application``, the
/// scene calls (`ClientObject+Scenes.swift`), the drag and drop calls (`ClientObject+Drag.swift`)
/// and the sharing calls (`ClientObject+Share.swift`), and only to the broker.
enum ClientObject {
    static let name: InterfaceName = "org.ferry.Client1"
    /// The interface's version (its `Version` property).
    static let version: UInt32 = 8
    static let chunkSize = 1 << 20

    static func interface(for client: FerryClient) -> Interface {
        Interface(name) {
            Property("Version", "u", get: { _ in .uint32(version) })
            // On the connection's thread: bytes already in memory go into the pipe right there, a
            // small promise's loader starts there; other loaders and writers run on the pool (``serve``).
            Method("ProvideRepresentation", in: ["item_id": "s", "type": "s", "fd": "h", "options": "a{sv}"],
                   out: ["size": "t"], execution: .connectionThread) { [weak client] call in
                let client = try await brokerCalling(call, client)
                let (itemText, type, fd, options) = try call.arguments(String.self, String.self, FileDescriptor.self,
                                                                       VariantDictionary.self)
                defer { fd.close() }
                // `fd` is the only copy left: the reader sees end of file as soon as it is closed,
                // not once the reply has gone and the call is let go.
                call.closeFileDescriptors()
                let representation = try await promised(itemText, type, of: client)
                let kept = (try? options.valueIfPresent(forKey: "resume", as: String.self))
                    .flatMap { client.keptLoads.take($0, item: itemText, type: type) }
                let size: UInt64
                do {
                    size = try await write(representation, resuming: kept, to: fd, polledBy: call.connection)
                } catch {
                    throw FerryError.converting(error).dbusError
                }
                announce(ServedPaste(itemID: itemText, typeIdentifier: type, size: size), by: client, options)
                return [.uint64(size)]
            }
            // On the connection's thread, and answered at once: a small promise's bytes in the
            // reply, with no pipe (org.ferry.Client1.xml).
            Method("ProvideBytes", in: ["item_id": "s", "type": "s", "limit": "u", "options": "a{sv}"],
                   out: ["done": "b", "bytes": "ay", "resume": "s"], execution: .connectionThread) { [weak client] call in
                let client = try await brokerCalling(call, client)
                let (itemText, type, limit, options) = try call.arguments(String.self, String.self, UInt32.self,
                                                                          VariantDictionary.self)
                let representation = try await promised(itemText, type, of: client)
                switch try await bytesAtOnce(of: representation, limit: Int(limit)) {
                case .bytes(let data):
                    announce(ServedPaste(itemID: itemText, typeIdentifier: type, size: UInt64(data.count)), by: client, options)
                    return [.boolean(true), .bytes([UInt8](data)), .string("")]
                case .started(let load):
                    return [.boolean(false), .bytes([]), .string(client.keptLoads.keep(load, item: itemText, type: type))]
                case .declined:
                    return [.boolean(false), .bytes([]), .string("")]
                }
            }
            sceneMethods(for: client)
            dragMethods(for: client)
            shareMethods(for: client)
        }
    }

    /// The client, when the caller of `call` is the broker (only it may call `Client1`).
    private static func brokerCalling(_ call: MethodCall, _ client: FerryClient?) async throws -> FerryClient {
        guard let client else { throw DBusError(unavailable, "the client is gone") }
        guard await client.isBroker(call.sender) else {
            throw DBusError(permissionDenied, "only the owner of org.ferry.Broker may call org.ferry.Client1")
        }
        return client
    }

    /// The promised representation `type` of item `itemText`; NotFound when the client has none.
    private static func promised(_ itemText: String, _ type: String,
                                 of client: FerryClient) async throws -> ItemProvider.Representation {
        guard let id = UUID(uuidString: itemText),
              let representation = await client.promises.representation(item: id, type: type) else {
            throw DBusError(notFound, "no promised \(type) for item \(itemText)")
        }
        return representation
    }

    /// Announces a paste served, when the broker's call said it serves one (its `paste` option).
    private static func announce(_ paste: ServedPaste, by client: FerryClient, _ options: VariantDictionary) {
        if (try? options.valueIfPresent(forKey: "paste", as: Bool.self)) == true {
            client.servedPastes.announce(paste)
        }
    }

    static let notFound: ErrorName = "org.ferry.Error.NotFound"
    static let permissionDenied: ErrorName = "org.ferry.Error.PermissionDenied"
    static let unavailable: ErrorName = "org.ferry.Error.Unavailable"

    /// Writes the representation's bytes into `fd` (off the connection's thread, in chunks, unless
    /// they fit in the pipe at once) and returns how many were written. When the reader closes its
    /// end first, the loader or writer is cancelled (``HangUpWatch``, its watch polled by
    /// `connection`) and this throws.
    /// With `kept`, a load ``bytesAtOnce(of:limit:)`` started, its bytes are written instead of
    /// loading the representation again.
    static func write(_ representation: ItemProvider.Representation, resuming kept: Task<Data, any Error>? = nil,
                      to fd: FileDescriptor, polledBy connection: Connection?) async throws -> UInt64 {
        // Only a stream's writer takes the descriptor; the other sources write into it and leave it.
        let takes = if kept == nil, case .stream = representation.source { true } else { false }
        return try await HangUpWatch.cancellingOnHangUp(of: fd, takesDescriptor: takes, polledBy: connection) {
            guard let kept else { return try await serve(representation, into: fd) }
            let data = try await withTaskCancellationHandler { try await kept.value } onCancel: { kept.cancel() }
            return try await writeChunks(data, to: fd)
        }
    }

    /// What `ProvideBytes` answers.
    enum AtOnce {
        /// All the bytes, at most the limit.
        case bytes(Data)
        /// A loader that did not finish at once, or whose bytes are over the limit: kept for the
        /// `ProvideRepresentation` that resumes it.
        case started(Task<Data, any Error>)
        /// Nothing started: a stream, a file, bytes over the limit, a loader not estimated small.
        case declined
    }

    /// A representation's bytes when they are at hand without waiting: bytes in memory, or a small
    /// promise's loader that answers before its first suspension (started here, on the
    /// connection's thread by ``quickLoad(_:)``; it goes on on the pool when it suspends).
    /// Never waits for a loader: a reader cannot cancel the broker's call, but it can close a pipe.
    /// - Throws: what a loader that failed at once threw, as a D-Bus error.
    static func bytesAtOnce(of representation: ItemProvider.Representation, limit: Int) async throws -> AtOnce {
        switch representation.source {
        case .data(let data):
            return data.count <= limit ? .bytes(data) : .declined
        case .loader:
            guard let (loading, endedAtOnce) = quickLoad(representation) else { return .declined }
            guard endedAtOnce else { return .started(loading) }
            switch await loading.result {
            case .success(let data) where data.count <= limit: return .bytes(data)
            case .success: return .started(loading)
            case .failure(let error): throw FerryError.converting(error).dbusError
            }
        case .file, .stream:
            return .declined
        }
    }

    /// Serves `representation` into `fd`. Called on the connection's thread, which must not
    /// block: the app's own code runs on the global pool, whatever it does (a stream writer, and
    /// a loader once past a small one's quick start, ``load(_:)``), and a file is copied on a
    /// blocking-I/O thread.
    private static func serve(_ representation: ItemProvider.Representation, into fd: FileDescriptor) async throws -> UInt64 {
        switch representation.source {
        case .file(let url, _) where !representation.isFolder:
            let file = try ItemEncoder.openForReading(url)
            return try await BlockingIO.run { try copy(from: file, to: fd) }
        case .data(let data):
            return try await writeChunks(data, to: fd)
        case .stream(let writer):
            // The writer owns the descriptor from here on (the deferred close then does nothing).
            guard let raw = fd.take() else { throw FerryError(.io, "the descriptor was already closed") }
            return try await withTaskExecutorPreference(globalConcurrentExecutor) { try await writer(raw) }
        case .file, .loader:
            return try await writeChunks(try await load(representation), to: fd)
        }
    }

    /// Loads a loader's or a file's bytes. A loader of a small representation (estimated under
    /// ``quickLoaderLimit``) starts right here, on the connection's thread, and moves to the global
    /// pool at its first suspension: one that answers at once, as most small promises do, then
    /// costs no hop to the pool and back (two thread wake-ups, 20–30 µs of a 1 KiB promised paste).
    /// Every other loader, and a file, are loaded on the pool from the start.
    private static func load(_ representation: ItemProvider.Representation) async throws -> Data {
        guard let (loading, _) = quickLoad(representation) else {
            return try await withTaskExecutorPreference(globalConcurrentExecutor) {
                try await ItemEncoder.load(representation)
            }
        }
        return try await withTaskCancellationHandler { try await loading.value } onCancel: { loading.cancel() }
    }

    /// A small promise's loader (estimated under ``quickLoaderLimit``) started right here, on the
    /// caller's thread, and whether it finished before its first suspension (else it goes on on
    /// the global pool). Nil for any other representation.
    private static func quickLoad(_ representation: ItemProvider.Representation)
        -> (loading: Task<Data, any Error>, endedAtOnce: Bool)? {
        guard case .loader = representation.source, let size = representation.estimatedSize,
              (0..<Int64(quickLoaderLimit)).contains(size) else { return nil }
        let ended = Atomic<Bool>(false)
        let loading = Task.immediate(executorPreference: globalConcurrentExecutor) {
            defer { ended.store(true, ordering: .releasing) }
            return try await ItemEncoder.load(representation) as Data
        }
        return (loading, ended.load(ordering: .acquiring))
    }

    /// Below this estimated size a loader starts on the connection's thread (``load(_:)``): the
    /// size under which the broker waits to answer a read with the bytes themselves.
    static let quickLoaderLimit = ItemEncoder.inlineLimit

    /// Bytes that fit in any fresh pipe without blocking: one page, the capacity Linux gives a
    /// pipe even when the user is over their pipe-buffer quota.
    static let nonBlockingSize = 4096

    /// Writes `data` into the pipe: right here when it fits without blocking (no thread hop for
    /// the small promises most pastes are), else on a blocking-I/O thread.
    private static func writeChunks(_ data: Data, to fd: FileDescriptor) async throws -> UInt64 {
        if data.count <= nonBlockingSize { return try writeChunks(data, into: fd) }
        return try await BlockingIO.run { try writeChunks(data, into: fd) }
    }

    /// Writes `data` in chunks straight from its storage (a 1 GiB promise is never copied).
    private static func writeChunks(_ data: Data, into fd: FileDescriptor) throws -> UInt64 {
        try data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var offset = 0
            while offset < bytes.count {
                let end = min(bytes.count, offset + chunkSize)
                try fd.write(all: UnsafeBufferPointer(rebasing: bytes[offset..<end]))
                offset = end
            }
        }
        return UInt64(data.count)
    }

    private static func copy(from file: FileDescriptor, to fd: FileDescriptor) throws -> UInt64 {
        defer { file.close() }
        var buffer = [UInt8](repeating: 0, count: chunkSize)
        var total: UInt64 = 0
        while true {
            let n = try file.withRawValue { raw in buffer.withUnsafeMutableBytes { Glibc.read(raw, $0.baseAddress, $0.count) } }
            if n < 0 {
                if errno == EINTR { continue }
                throw FerryError(.io, "cannot read the file: \(String(cString: strerror(errno)))")
            }
            if n == 0 { return total }
            try fd.write(all: buffer[0..<n])
            total += UInt64(n)
        }
    }
}
