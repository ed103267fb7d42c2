#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import DBus
import FerryModel
import Synchronization

/// Moves promised bytes straight from the source app to the reader: the broker makes a pipe,
/// hands the write end to the source (`org.ferry.Client1.ProvideRepresentation`) and the read end
/// to the reader. The bytes never pass through the broker (except through `fetch`, which reads a
/// bounded prefix for pattern detection).
///
/// A transfer is started by `start` (which does not wait for the source: the source replies only
/// once it has written everything, and the reader can only drain the pipe once it has the read
/// end) and resolved by `finish`, which the reader calls after reading to end of file
/// (`org.ferry.Pasteboard1.FinishTransfer`). `read` waits a little for the source first, and
/// hands a small promise's bytes over itself when the source has written them all by then.
/// Ended transfers are forgotten `retention` after they end, lazily, on the next `start` or
/// `finish`.
///
/// The broker keeps no copy of the write end: its own is closed once the call message holds a
/// duplicate, and the D-Bus layer lets go of the message as soon as it is sent. The reader sees
/// end of file when the source closes its copy.
///
/// Not an actor: the transfer table is a `Mutex`, so `start` runs on the caller's executor —
/// ferryd's `Read` runs on its connection's thread and starts a transfer without a thread hop.
package final class PromiseRelay: Sendable {
    /// The pipe capacity asked for (1 MiB; the kernel may cap it, see `/proc/sys/fs/pipe-max-size`).
    package static let pipeBufferSize = 1 << 20
    /// The capacity a new pipe has (16 pages): a promise estimated to fit keeps it, saving the
    /// resize (`F_SETPIPE_SZ` allocates the larger ring) on every small paste.
    package static let defaultPipeSize = 64 * 1024

    /// D-Bus: the interface sources export.
    static let clientInterface: InterfaceName = "org.ferry.Client1"
    /// D-Bus: `org.ferry.Client1.ProvideRepresentation`.
    static let provideMember: MemberName = "ProvideRepresentation"
    /// D-Bus: `org.ferry.Client1.ProvideBytes`.
    static let provideBytesMember: MemberName = "ProvideBytes"

    let connection: Connection
    /// Where a source that bound a direct connection with callbacks is called instead.
    let direct: DirectListener?
    /// How long a source has to write everything and reply.
    package nonisolated let timeout: Duration
    /// How long an ended transfer can still be finished.
    package nonisolated let retention: Duration

    struct Transfer {
        var reader: BusName
        var owner: BusName
        /// The pasteboard read from, when the caller said (``cancelTransfers(ofPasteboard:)``).
        var pasteboard: String?
        var state: State
    }

    /// A transfer's call to its source: running, or ended with the source's answer. An ended
    /// transfer keeps only the answer (not the finished task) for the `retention` it is kept.
    enum State {
        case running(Task<UInt64, any Error>)
        case ended(Result<UInt64, any Error>)

        /// The source's byte count, once the call ends.
        var value: UInt64 {
            get async throws {
                switch self {
                case .running(let task): try await task.value
                case .ended(let outcome): try outcome.get()
                }
            }
        }

        /// Cancels the call if it still runs.
        func cancel() {
            if case .running(let task) = self { task.cancel() }
        }
    }

    /// The transfers, by id, and the order in which they ended.
    struct Book {
        var transfers: [String: Transfer] = [:]
        /// Ended transfers in the order they ended (so oldest first), from `endedHead` on:
        /// forgetting expired ones looks only at the front, never at every transfer.
        var endedOrder: [(id: String, at: ContinuousClock.Instant)] = []
        var endedHead = 0
    }

    let book = Mutex(Book())

    /// Transfer ids: this relay's random prefix and a count. Unique for the broker's life and
    /// cheap: a UUID read /dev/urandom (open, read, close) on every promised paste. Not a
    /// secret: `finish` checks that the caller is the transfer's reader.
    private let idPrefix = String(UInt64.random(in: .min ... .max), radix: 16)
    private let idCount = Atomic<UInt64>(0)

    /// A new transfer id.
    private func nextID() -> String {
        "\(idPrefix)-\(idCount.wrappingAdd(1, ordering: .relaxed).newValue)"
    }

    /// Makes a relay calling sources over `connection`.
    ///
    /// - Parameters:
    ///   - connection: the broker's connection (the one that owns `org.ferry.Broker`: sources
    ///     accept `ProvideRepresentation` only from it).
    ///   - timeout: how long a source has to write everything and reply (60 s).
    ///   - retention: how long an ended transfer can still be finished (60 s).
    ///   - direct: the direct connections a source may be called over instead of the bus.
    package init(connection: Connection, direct: DirectListener? = nil, timeout: Duration = .seconds(60),
                retention: Duration = .seconds(60)) {
        self.connection = connection
        self.direct = direct
        self.timeout = timeout
        self.retention = retention
    }

    /// Starts a transfer: makes a pipe (1 MiB buffer, unless `estimatedSize` fits a pipe as made),
    /// calls `ProvideRepresentation` on `owner` at `clientPath` with the write end, without
    /// waiting for the reply, and returns the read end for the reader plus a transfer id that
    /// `finish` resolves.
    ///
    /// The broker must answer the reader's `Read` with `fd` right away (and then drop its copy:
    /// appending it to the reply duplicates it); the transfer id goes in the reply's `transfer`.
    ///
    /// - Parameters:
    ///   - owner: the unique name of the app that promised the representation.
    ///   - clientPath: its `org.ferry.Client1` object.
    ///   - itemID: the item's id, as the broker gave it in `SetItems`.
    ///   - type: the promised type.
    ///   - estimatedSize: the size the promise announced, when it did.
    ///   - reader: the unique name of the reader; only it may `finish` the transfer.
    ///   - pasteboard: the pasteboard read from, so that its transfers can be cancelled when it goes.
    /// - Returns: the pipe's read end and the transfer id.
    /// - Throws: `FerryModelError` `.unavailable` when the pipe or the call cannot be made.
    package func start(owner: BusName, clientPath: ObjectPath, itemID: UUID, type: ContentType,
                      estimatedSize: Int64? = nil, reader: BusName,
                      pasteboard: String? = nil) async throws -> (fd: FileDescriptor, transfer: String) {
        try begin(owner: owner, clientPath: clientPath, itemID: itemID, type: type, estimatedSize: estimatedSize,
                  reader: reader, pasteboard: pasteboard)
    }

    /// ``start``'s work, shared with ``read(owner:clientPath:itemID:type:estimatedSize:reader:pasteboard:waitingAtMost:)``:
    /// the call, and its transfer filed at once (so that the end of a drag cancels it even while
    /// `read` waits); `resume` names a load the source kept from `ProvideBytes`. `claim` sees the call's outcome first and takes it by returning true;
    /// otherwise the book records it.
    func begin(owner: BusName, clientPath: ObjectPath, itemID: UUID, type: ContentType, estimatedSize: Int64?,
               reader: BusName, pasteboard: String?, resume: String? = nil,
               claim: @escaping @Sendable (Result<UInt64, any Error>) -> Bool = { _ in false }) throws
        -> (fd: FileDescriptor, transfer: String)
    {
        let id = nextID()
        let (read, task) = try call(owner: owner, clientPath: clientPath, itemID: itemID, type: type,
                                    estimatedSize: estimatedSize, timeout: timeout, paste: true, resume: resume,
                                    ended: { [weak self] outcome in if !claim(outcome) { self?.ended(id, outcome) } })
        file(id, Transfer(reader: reader, owner: owner, pasteboard: pasteboard, state: .running(task)))
        return (read, id)
    }

    /// Files a transfer whose bytes something else writes into the reader's pipe (a remote item's
    /// pull, issue #22), so that `finish` resolves it like a promise's: `task` gives the byte
    /// count, or the error the reader's `FinishTransfer` gets.
    /// - Returns: the transfer id for the reader's `Read` reply.
    package func adopt(_ task: Task<UInt64, any Error>, reader: BusName, pasteboard: String? = nil) -> String {
        let id = nextID()
        file(id, Transfer(reader: reader, owner: reader, pasteboard: pasteboard, state: .running(task)))
        Task { [weak self] in self?.ended(id, await task.result) }
        return id
    }

    /// Waits for the source's reply and returns how many bytes it wrote.
    ///
    /// D-Bus: `org.ferry.Pasteboard1.FinishTransfer`.
    ///
    /// - Parameters:
    ///   - transfer: the id `start` returned.
    ///   - caller: the unique name of the caller; must be the reader that started the transfer.
    /// - Returns: the byte count the source reported.
    /// - Throws: `FerryModelError` `.notFound` (unknown or forgotten transfer, or another
    ///   caller's), `.unavailable` (the source failed or went away mid-transfer), `.timeout` (the
    ///   source did not finish within `timeout`).
    package func finish(_ transfer: String, caller: BusName) async throws -> UInt64 {
        let entry = book.withLock { book in
            forgetExpired(&book)
            return book.transfers[transfer]
        }
        guard let entry, entry.reader == caller else {
            throw FerryModelError(.notFound, "no transfer \"\(transfer)\" for \(caller.rawValue)")
        }
        return try await entry.state.value
    }

    /// Reads at most `limit` bytes of a promised representation into the broker, for pattern
    /// detection only (never handed to anyone). Stops reading at `limit` and closes the pipe (the
    /// source then sees a broken pipe, and its reply is ignored).
    ///
    /// - Parameters:
    ///   - owner: the unique name of the app that promised the representation.
    ///   - clientPath: its `org.ferry.Client1` object.
    ///   - itemID: the item's id.
    ///   - type: the promised type.
    ///   - limit: the most bytes to read.
    ///   - timeout: how long the source has (default: the relay's `timeout`). Pattern detection is
    ///     not a paste and should not keep its caller waiting long: the broker may pass a few seconds.
    /// - Returns: the first `limit` bytes (all of them when there are fewer).
    /// - Throws: `FerryModelError` `.unavailable`, `.timeout`, as `finish`.
    package func fetch(owner: BusName, clientPath: ObjectPath, itemID: UUID, type: ContentType,
                      limit: Int, timeout: Duration? = nil) async throws -> [UInt8] {
        struct LimitReached: Error {}
        let bytes = Mutex<[UInt8]>([])
        do {
            _ = try await stream(owner: owner, clientPath: clientPath, itemID: itemID, type: type, timeout: timeout,
                                 paste: false) { chunk in
                try bytes.withLock { bytes in
                    bytes.append(contentsOf: chunk.prefix(max(0, limit - bytes.count)))
                    if bytes.count >= limit { throw LimitReached() }
                }
            }
        } catch is LimitReached {}
        return bytes.withLock { $0 }
    }

    /// Copies a promised representation, to end of file, into `sink` (for the broker's own use:
    /// a built-in activity saving a file): streamed, so its size is bounded by nothing the broker
    /// holds. The source's byte count must match what the pipe carried.
    ///
    /// - Parameters:
    ///   - owner: the unique name of the app that promised the representation.
    ///   - clientPath: its `org.ferry.Client1` object.
    ///   - itemID: the item's id.
    ///   - type: the promised type.
    ///   - timeout: how long the source has to write everything (default: the relay's `timeout`).
    ///   - paste: the bytes go to someone (a share's delivery); false for the broker's own look
    ///     (pattern detection). It becomes the call's `paste` option.
    ///   - sink: takes each chunk as it arrives, on a worker thread (it may block); what it throws
    ///     ends the copy and is rethrown.
    /// - Returns: the number of bytes copied.
    /// - Throws: what `sink` throws; `FerryModelError` `.unavailable` (the source failed, went
    ///   away or miscounted), `.timeout`, as `finish`; `.cancelled` when the task is cancelled.
    package func stream(owner: BusName, clientPath: ObjectPath, itemID: UUID, type: ContentType, timeout: Duration? = nil,
                       paste: Bool = true,
                       into sink: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Void) async throws -> UInt64 {
        let timeout = timeout ?? self.timeout
        let (read, task) = try call(owner: owner, clientPath: clientPath, itemID: itemID, type: type,
                                    timeout: timeout, paste: paste)
        let outcome = await PipeReader.drain(read, deadline: ContinuousClock.now + timeout, into: sink)
        read.close()
        switch outcome {
        case .endOfFile(let count):
            let said = try await task.value
            guard said == count else {
                throw FerryModelError(.unavailable, "the source \(owner.rawValue) said it wrote \(said) bytes of "
                                      + "\(type.identifier), but the pipe carried \(count)")
            }
            return count
        case .stopped(let message):
            task.cancel()
            throw Self.pipeFailure(message, owner: owner, type: type, timeout: timeout)
        case .sinkFailed(let error):
            task.cancel()
            throw error
        case .cancelled:
            task.cancel()
            throw Self.transferError(CancellationError(), owner: owner, type: type, timeout: timeout, elapsed: .zero)
        }
    }

    /// Cancels and forgets the transfers started on `pasteboard` (a drag pasteboard whose drag
    /// ended): the broker stops waiting for their sources, and `finish` of them is NotFound. The
    /// bytes a source still writes into a pipe it holds are beyond the broker's reach.
    /// - Parameter pasteboard: the pasteboard's name, as passed to `start`.
    package func cancelTransfers(ofPasteboard pasteboard: String) {
        let cancelled = book.withLock { book in
            let ids = book.transfers.compactMap { $0.value.pasteboard == pasteboard ? $0.key : nil }
            return ids.compactMap { book.transfers.removeValue(forKey: $0) }
        }
        for transfer in cancelled { transfer.state.cancel() }
    }

    /// Cancels every transfer in flight (their readers see end of file, `finish` reports
    /// cancelled) and forgets them all. For shutting the broker down.
    package func cancelAll() async {
        let cancelled = book.withLock { book in
            defer { book = Book() }
            return Array(book.transfers.values)
        }
        for transfer in cancelled { transfer.state.cancel() }
    }

    /// The number of transfers remembered (running, or ended less than `retention` ago).
    package var count: Int {
        get async {
            book.withLock { book in
                forgetExpired(&book)
                return book.transfers.count
            }
        }
    }
}
