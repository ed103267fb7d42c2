import DBus

extension FerryClient {
    /// The unique bus name that owns `org.ferry.Broker` now; nil when no broker runs (asking
    /// does not start one).
    /// - Throws: `FerryError` `.bus` when the bus does not answer.
    public func brokerOwner() async throws(FerryError) -> String? {
        try await FerryError.bridging { try await connection.owner(of: Self.brokerName)?.rawValue }
    }

    /// Each change of `org.ferry.Broker`'s owner, from now on: the new owner's unique bus name,
    /// or nil when the broker went away. A broker replaced (`ferryd --replace`) or restarted
    /// starts with its own state (change counts included), so a client following changes reads
    /// the current state again on each new owner.
    ///
    /// D-Bus: `org.freedesktop.DBus.NameOwnerChanged` for `org.ferry.Broker`.
    public func brokerOwnerChanges() async throws(FerryError) -> AsyncThrowingStream<String?, any Error> {
        let changes = try await FerryError.bridging { try await connection.nameOwnerChanges(for: Self.brokerName) }
        let (stream, continuation) = AsyncThrowingStream<String?, any Error>.makeStream()
        let forward = Task {
            do {
                for try await change in changes { continuation.yield(change.newOwner?.rawValue) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: FerryError.converting(error))
            }
        }
        continuation.onTermination = { _ in
            forward.cancel()
            changes.cancel()
        }
        return stream
    }
}
