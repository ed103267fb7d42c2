import Synchronization

/// A paste this client served from one of its promises: a reader got every byte.
public struct ServedPaste: Sendable, Equatable {
    /// The item's id, as the broker gave it.
    public var itemID: String
    /// The identifier of the representation served.
    public var typeIdentifier: String
    /// How many bytes were written.
    public var size: UInt64
}

extension FerryClient {
    /// The pastes this client serves from its promises from now on, each once its bytes are all
    /// written, before the broker hears the reply: what `ferry copy --paste-once` waits for.
    /// The broker's own looks at the data (pattern detection) are not pastes and do not appear.
    ///
    /// D-Bus: `org.ferry.Client1.ProvideRepresentation` called with the option `paste`.
    public func pastesServed() -> AsyncStream<ServedPaste> {
        let (stream, continuation) = AsyncStream<ServedPaste>.makeStream()
        servedPastes.add(continuation)
        return stream
    }

    /// Forgets what this client promised without handing it to the broker: neither ``flush()``
    /// nor the exit hook will deliver it, later calls for it are NotFound, and once this process
    /// leaves the bus the broker drops the items it promised (`ferry copy --paste-once` after its
    /// paste: what was pasted once is gone for everyone).
    public func abandonPromises() async {
        promises.abandonAll()
    }
}

/// The streams ``FerryClient/pastesServed()`` handed out. Guarded by its mutex.
final class ServedPasteAnnouncer: Sendable {
    private let continuations = Mutex<[AsyncStream<ServedPaste>.Continuation]>([])

    func add(_ continuation: AsyncStream<ServedPaste>.Continuation) {
        continuations.withLock { $0.append(continuation) }
    }

    func announce(_ paste: ServedPaste) {
        for continuation in continuations.withLock({ $0 }) { continuation.yield(paste) }
    }
}
